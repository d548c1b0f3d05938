/**
 * The labelled credential corpus of the credential tests: FAKE credentials of every family the server
 * promises to find, format-valid (each family's documented prefix, alphabet and length), made from a
 * fixed seed and embedded in transcript-like messages; and a corpus of look-alikes that are not
 * credentials. The corpus is this generator: the same seed always gives the same texts.
 */
import { Random } from '../../../bench/src/generate/random';

/** One labelled credential inside its message. */
export interface CorpusCredential {
  family: string;
  /** The kind the detection must report. */
  kind: string;
  /** The message holding it. */
  text: string;
  /** The credential's span in `text` (for a URL, its password). */
  start: number;
  end: number;
}

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const ALNUM = UPPER + LOWER + DIGITS;
const URL_SAFE = ALNUM + '-_';
const BASE64 = ALNUM + '+/';

function chars(random: Random, alphabet: string, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[random.int(0, alphabet.length - 1)];
  return out;
}

/** A family: how a value looks, and the lines a transcript puts it in (`{}` is the value). */
interface Family {
  family: string;
  kind: string;
  value(random: Random): string;
  contexts: readonly string[];
  /** For URLs: the password inside the value (default: the whole value). */
  secret?(value: string): { start: number; end: number };
}

const passwordOf = (value: string): { start: number; end: number } => {
  const at = value.lastIndexOf('@');
  const colon = value.lastIndexOf(':', at);
  return { start: colon + 1, end: at };
};

const FAMILIES: readonly Family[] = [
  {
    family: 'AWS access key id',
    kind: 'aws-access-key-id',
    value: (r) => r.pick(['AKIA', 'ASIA']) + chars(r, UPPER + '234567', 16),
    contexts: ['aws_access_key_id = {}', 'The failing call used key {} from the default profile.', 'export AWS_ACCESS_KEY_ID={}'],
  },
  {
    family: 'AWS secret access key',
    kind: 'aws-secret-access-key',
    value: (r) => chars(r, BASE64, 39) + chars(r, ALNUM, 1),
    contexts: ['aws_secret_access_key = {}', 'export AWS_SECRET_ACCESS_KEY={}', '  "SecretAccessKey": "{}",'],
  },
  {
    family: 'GitHub classic token',
    kind: 'github-token',
    value: (r) => r.pick(['ghp', 'gho', 'ghu', 'ghs', 'ghr']) + '_' + chars(r, ALNUM, 36),
    contexts: ['export GITHUB_TOKEN={}', 'git clone https://x-access-token:{}@github.com/acme/api.git', 'Authorization: token {}'],
  },
  {
    family: 'GitHub fine-grained token',
    kind: 'github-token',
    value: (r) => 'github_pat_11' + chars(r, UPPER + DIGITS, 20) + '_' + chars(r, ALNUM, 59),
    contexts: ['gh auth login --with-token <<< {}', 'GH_TOKEN={} gh pr list', 'Use this token: {}'],
  },
  {
    family: 'GitLab token',
    kind: 'gitlab-token',
    value: (r) => 'glpat-' + chars(r, URL_SAFE, 19) + chars(r, ALNUM, 1),
    contexts: ['export GITLAB_TOKEN={}', 'curl --header "PRIVATE-TOKEN: {}" https://gitlab.example.com/api/v4/projects', 'token = "{}"'],
  },
  {
    family: 'Slack token',
    kind: 'slack-token',
    value: (r) => r.pick(['xoxb', 'xoxp']) + '-' + chars(r, DIGITS, 11) + '-' + chars(r, DIGITS, 13) + '-' + chars(r, ALNUM, 24),
    contexts: ['SLACK_BOT_TOKEN={}', 'const slack = new WebClient("{}");', 'The bot token is {} (from the app page).'],
  },
  {
    family: 'Slack webhook',
    kind: 'slack-webhook',
    value: (r) => `https://hooks.slack.com/services/T${chars(r, UPPER + DIGITS, 8)}/B${chars(r, UPPER + DIGITS, 10)}/${chars(r, ALNUM, 24)}`,
    contexts: ['curl -X POST -d \'{"text":"deploy done"}\' {}', 'SLACK_WEBHOOK_URL={}', 'webhook: {}'],
  },
  {
    family: 'Stripe key',
    kind: 'stripe-secret-key',
    value: (r) => r.pick(['sk_live_', 'sk_test_']) + chars(r, ALNUM, r.pick([24, 99])),
    contexts: ['STRIPE_SECRET_KEY={}', "const stripe = require('stripe')('{}');", 'stripe.api_key = "{}"'],
  },
  {
    family: 'OpenAI key',
    kind: 'openai-api-key',
    value: (r) =>
      r.next() < 0.8
        ? 'sk-proj-' + chars(r, URL_SAFE, 73) + chars(r, ALNUM, 1) + 'T3BlbkFJ' + chars(r, URL_SAFE, 73) + chars(r, ALNUM, 1)
        : 'sk-' + chars(r, ALNUM, 20) + 'T3BlbkFJ' + chars(r, ALNUM, 20),
    contexts: ['export OPENAI_API_KEY={}', 'client = OpenAI(api_key="{}")', 'OPENAI_API_KEY: {}'],
  },
  {
    family: 'Anthropic key',
    kind: 'anthropic-api-key',
    value: (r) => 'sk-ant-api03-' + chars(r, URL_SAFE, 93) + 'AA',
    contexts: ['export ANTHROPIC_API_KEY={}', 'client = anthropic.Anthropic(api_key="{}")', 'x-api-key: {}'],
  },
  {
    family: 'Google API key',
    kind: 'google-api-key',
    value: (r) => 'AIza' + chars(r, URL_SAFE, 34) + chars(r, ALNUM, 1),
    contexts: ['https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key={}', 'GOOGLE_API_KEY={}', 'apiKey: "{}",'],
  },
  {
    family: 'npm token',
    kind: 'npm-token',
    value: (r) => 'npm_' + chars(r, ALNUM, 36),
    contexts: ['//registry.npmjs.org/:_authToken={}', 'NPM_TOKEN={} npm publish', 'The publish token is {}.'],
  },
  {
    family: 'SendGrid key',
    kind: 'sendgrid-api-key',
    value: (r) => 'SG.' + chars(r, URL_SAFE, 22) + '.' + chars(r, URL_SAFE, 42) + chars(r, ALNUM, 1),
    contexts: ['SENDGRID_API_KEY={}', "sgMail.setApiKey('{}');", 'Authorization: Bearer {}'],
  },
  {
    family: 'PEM private key',
    kind: 'private-key',
    value: (r) => {
      // Each type's body starts as its encoding does (ASN.1 SEQUENCE, or OpenSSH's magic).
      const [type, start] = r.pick([
        ['RSA ', 'MIIEowIBAAKCAQEA'],
        ['', 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC'],
        ['EC ', 'MHcCAQEEI'],
        ['OPENSSH ', 'b3BlbnNzaC1rZXktdjEAAAAA'],
      ] as const);
      const body = start + chars(r, BASE64, 64 * r.int(2, 12) - start.length);
      const lines = body.match(/.{1,64}/g)!;
      return `-----BEGIN ${type}PRIVATE KEY-----\n${lines.join('\n')}\n${chars(r, BASE64, r.int(4, 60))}==\n-----END ${type}PRIVATE KEY-----`;
    },
    contexts: ['Here is the key file:\n\n{}\n', 'cat ~/.ssh/deploy_key\n{}', '```\n{}\n```'],
  },
  {
    family: 'password in a connection URL',
    kind: 'url-password',
    value: (r) => {
      const password = chars(r, ALNUM, r.int(8, 20)) + r.pick(['', '!', '-x', '_9', '.z']);
      const user = r.pick(['admin', 'app', 'root', 'deploy', 'svc_user']);
      return r.pick([
        `postgres://${user}:${password}@db.internal.example.com:5432/app`,
        `mysql://${user}:${password}@10.0.3.7:3306/shop`,
        `mongodb+srv://${user}:${password}@cluster0.ab12c.mongodb.net/test`,
        `redis://:${password}@cache.example.com:6379/0`,
        `amqp://${user}:${password}@rabbit.example.com:5672/vhost`,
        `https://${user}:${password}@registry.example.com/v2/`,
      ]);
    },
    contexts: ['DATABASE_URL={}', 'It connects with {} and times out.', 'url: "{}"'],
    secret: passwordOf,
  },
];

/** The families of the corpus, by name. */
export const CORPUS_FAMILIES: readonly string[] = FAMILIES.map(({ family }) => family);

const PROSE_BEFORE = [
  'I ran the deploy script again and it failed at the same step.',
  'Here is what the config looks like on the staging box:',
  'The tests pass locally, but CI fails with a 401.',
  'Can you check why the request is rejected?',
  'I copied this from the .env file:',
  'The logs show the client starting up, then this line:',
];
const PROSE_AFTER = [
  'After that the job exits with code 1.',
  'Should I rotate it, or is the problem elsewhere?',
  'Everything else in the file is the default.',
  'The same value works from my laptop.',
  '',
];

/** `count` labelled credentials, spread evenly over the families, each in its own message. */
export function credentialCorpus(seed: number, count: number): CorpusCredential[] {
  const random = new Random(seed);
  const corpus: CorpusCredential[] = [];
  for (let i = 0; i < count; i++) {
    const family = FAMILIES[i % FAMILIES.length]!;
    const value = family.value(random);
    const context = random.pick(family.contexts);
    const before = random.pick(PROSE_BEFORE) + '\n\n';
    const at = before.length + context.indexOf('{}');
    const text = before + context.replace('{}', () => value) + '\n\n' + random.pick(PROSE_AFTER);
    const secret = family.secret?.(value) ?? { start: 0, end: value.length };
    corpus.push({ family: family.family, kind: family.kind, text, start: at + secret.start, end: at + secret.end });
  }
  return corpus;
}

/** Look-alikes: hashes, ids, encoded data, public keys, URLs without credentials and prose about keys. */
const LOOK_ALIKES: ReadonlyArray<(r: Random) => string> = [
  (r) => `commit ${chars(r, '0123456789abcdef', 40)}`,
  (r) => `Merge ${chars(r, '0123456789abcdef', 7)}..${chars(r, '0123456789abcdef', 7)} into main`,
  (r) => `session ${[8, 4, 4, 4, 12].map((n) => chars(r, '0123456789abcdef', n)).join('-')} resumed`,
  (r) => `<script src="https://cdn.example.com/lib.js" integrity="sha384-${chars(r, BASE64, 64)}"></script>`,
  (r) => `"integrity": "sha512-${chars(r, BASE64, 86)}==",`,
  (r) => `![screenshot](data:image/png;base64,iVBORw0KGgo${chars(r, BASE64, 400)}=)`,
  (r) => `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${chars(r, BASE64, 43)} sam@laptop`,
  (r) => `ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ${chars(r, BASE64, 300)} deploy@ci`,
  (r) => `-----BEGIN PUBLIC KEY-----\n${chars(r, BASE64, 64)}\n${chars(r, BASE64, 40)}==\n-----END PUBLIC KEY-----`,
  (r) => `See https://github.com/acme/${chars(r, LOWER, 8)}/pull/${r.int(1, 9999)} and https://example.com/a/b?page=${r.int(1, 50)}#top`,
  () => `postgres://db.internal.example.com:5432/app?sslmode=require (user and password come from PGPASSWORD)`,
  () => `DATABASE_URL=postgres://\${DB_USER}:\${DB_PASSWORD}@localhost:5432/app`,
  (r) => `git clone git@github.com:acme/${chars(r, LOWER, 6)}.git && cd ${chars(r, LOWER, 6)}`,
  () => 'Set AWS_SECRET_ACCESS_KEY in your environment; never commit it. Access key ids start with AKIA.',
  () => 'GitHub classic tokens start with ghp_ and fine-grained ones with github_pat_; Slack bot tokens with xoxb-.',
  () => 'Put the Stripe secret key (sk_live_…) in the vault, and the OpenAI key (sk-proj-…) beside it.',
  (r) => `The build id is ${chars(r, ALNUM, 32)} and the cache key ${chars(r, '0123456789abcdef', 64)}.`,
  (r) => `const apiKey = process.env.GOOGLE_API_KEY; // e.g. AIza… (${r.int(1, 99)} requests per second)`,
  (r) => `jwt header eyJhbGciOiJIUzI1NiJ9 (only the header, ${r.int(2, 9)} segments missing)`,
  (r) => `npm install left-pad@${r.int(1, 9)}.${r.int(0, 9)}.${r.int(0, 9)} --save-exact`,
];

/** `lines` lines of look-alikes, none of them a credential. */
export function lookAlikeLines(seed: number, lines: number): string[] {
  const random = new Random(seed);
  const out: string[] = [];
  while (out.length < lines) out.push(...random.pick(LOOK_ALIKES)(random).split('\n'));
  return out.slice(0, lines);
}
