/**
 * Credential detection in session text: secretlint's recommended rule set (pinned in server/package.json),
 * driven directly over a string, plus the few rules of our own it lacks (`OWN_RULES`). A finding carries
 * where the credential is and its kind, never the value: nothing here logs or reports what it found.
 */

/** One credential found in a text: its UTF-16 span and its kind (`aws-access-key-id`, `github-token`, …). */
export interface CredentialSpan {
  start: number;
  end: number;
  kind: string;
}

/** How a secretlint scanner rule reports one finding (its message carries the value: only its props are read). */
interface RuleReport {
  range: readonly [number, number];
  message: { messageId: string; props: Readonly<Record<string, unknown>> };
}

/** The part of a secretlint rule this driver uses. */
interface ScannerRule {
  meta: { id: string };
  create(
    context: {
      report(report: RuleReport): void;
      createTranslator(): (messageId: string, props?: Record<string, unknown>) => RuleReport['message'];
      ignore(): void;
    },
    options: Record<string, unknown>,
  ): { file?(source: { content: string; contentType: 'text'; ext: string }): unknown };
}

const RULE_PREFIX = '@secretlint/secretlint-rule-';

/** Each rule's kind by its short name; a rule not listed here is not run. */
const RULE_KINDS: Readonly<Record<string, string>> = {
  aws: 'aws-secret-access-key',
  gcp: 'gcp-service-account-key',
  privatekey: 'private-key',
  npm: 'npm-token',
  basicauth: 'url-password',
  slack: 'slack-token',
  sendgrid: 'sendgrid-api-key',
  shopify: 'shopify-token',
  stripe: 'stripe-secret-key',
  github: 'github-token',
  gitlab: 'gitlab-token',
  grafana: 'grafana-token',
  openai: 'openai-api-key',
  anthropic: 'anthropic-api-key',
  groq: 'groq-api-key',
  huggingface: 'huggingface-token',
  linear: 'linear-api-key',
  notion: 'notion-token',
  '1password': '1password-token',
  'database-connection-string': 'url-password',
  'hashicorp-vault': 'vault-token',
  vercel: 'vercel-token',
  databricks: 'databricks-token',
  docker: 'docker-token',
  figma: 'figma-token',
  cloudflare: 'cloudflare-api-key',
  tailscale: 'tailscale-key',
};

/** Finer kinds for some reports; `null`: not a credential (an AWS account id names an account, it opens nothing). */
const MESSAGE_KINDS: Readonly<Record<string, string | null>> = {
  AWSAccessKeyID: 'aws-access-key-id',
  AWSAccountID: null,
  IncomingWebhook: 'slack-webhook',
  STRIPE_RESTRICTED_KEY_LIVE: 'stripe-restricted-key',
  STRIPE_RESTRICTED_KEY_TEST: 'stripe-restricted-key',
};

/** Options per rule: AWS access key ids are off by default in secretlint (they are half a pair), on here. */
const RULE_OPTIONS: Readonly<Record<string, Record<string, unknown>>> = { aws: { enableIDScanRule: true } };

/**
 * Our own rules, for families the rule set lacks:
 * - `google-api-key`: Google's API keys, `AIza` and 35 URL-safe characters (secretlint's gcp rule finds
 *   service-account files only);
 * - `url-password`: a password in any `scheme://user:password@` URL, the user possibly empty
 *   (secretlint's find http(s), ftp, MongoDB, MySQL and PostgreSQL, with a narrower password alphabet);
 *   placeholders such as `${PASS}`, `<password>`, `****` or `password` itself are not credentials;
 * - `sendgrid-api-key`: `SG.`, 22 and 43 URL-safe characters (secretlint's rule takes no `-` in the first part);
 * - `private-key`: a PEM private key whatever its first bytes (secretlint's takes bodies starting `MI` or
 *   OpenSSH's magic only, which leaves out SEC1 EC keys, `MH…`).
 */
const OWN_RULES: ReadonlyArray<{ kind: string; pattern: RegExp; accept?: (match: RegExpExecArray) => boolean; endTrim?: number }> = [
  { kind: 'google-api-key', pattern: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/g },
  {
    kind: 'url-password',
    pattern: /\b[a-zA-Z][a-zA-Z0-9+.-]{1,30}:\/\/[^\s:/@"'`<>]{0,128}:([^\s/@"'`<>]{3,256})@[a-zA-Z0-9[]/g,
    accept: (match) => !PLACEHOLDER_PASSWORD.test(match[1]!),
    // The span ends with the password: the `@` and the host stay.
    endTrim: 2,
  },
  { kind: 'sendgrid-api-key', pattern: /(?<![A-Za-z0-9_-])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g },
  {
    kind: 'private-key',
    pattern: /-----BEGIN[ A-Z0-9]{0,20}PRIVATE KEY(?: BLOCK)?-----(?:\\n|\s){1,4}[A-Za-z0-9+/=\s\\]{64,10000}?-----END[ A-Z0-9]{0,20}PRIVATE KEY(?: BLOCK)?-----/g,
  },
];

const PLACEHOLDER_PASSWORD = /^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{.*\}\}|<[^>]*>|%[A-Za-z_]+%|\*+|x+|\.+|password|passwd|pass|pwd|secret|changeme)$/i;

let loadedRules: Promise<ReadonlyArray<{ rule: ScannerRule; name: string }>> | undefined;

/** The rule set, loaded on first use (about 230 KB of code that a start without a mention never needs). */
function scannerRules(): Promise<ReadonlyArray<{ rule: ScannerRule; name: string }>> {
  loadedRules ??= import('@secretlint/secretlint-rule-preset-recommend').then(({ rules }) =>
    (rules as unknown as ScannerRule[])
      .map((rule) => ({ rule, name: rule.meta.id.startsWith(RULE_PREFIX) ? rule.meta.id.slice(RULE_PREFIX.length) : rule.meta.id }))
      .filter(({ name }) => RULE_KINDS[name] !== undefined),
  );
  return loadedRules;
}

/**
 * The span of the credential itself: some rules report a range that starts at the assignment
 * (`aws_secret_access_key = "…`) with the value's length, so the value is looked up from there.
 */
function valueSpan(content: string, report: RuleReport): [number, number] {
  const [start, end] = report.range;
  const value = Object.values(report.message.props).find((prop): prop is string => typeof prop === 'string' && prop.length > 0);
  if (value !== undefined) {
    const at = content.indexOf(value, start);
    if (at !== -1 && at <= end) return [at, at + value.length];
  }
  return [start, end];
}

/** Runs one secretlint rule over `content`, adding its findings to `found`. */
async function runRule(rule: ScannerRule, name: string, content: string, found: CredentialSpan[]): Promise<void> {
  const context = {
    report(report: RuleReport): void {
      const kind = MESSAGE_KINDS[report.message.messageId] === undefined ? RULE_KINDS[name]! : MESSAGE_KINDS[report.message.messageId];
      if (kind === null || kind === undefined) return;
      const [start, end] = valueSpan(content, report);
      if (end > start) found.push({ start, end, kind });
    },
    // The translator's "message" keeps the id and props only: the value never becomes text here.
    createTranslator: () => (messageId: string, props: Record<string, unknown> = {}) => ({ messageId, props }),
    ignore(): void {},
  };
  const handler = rule.create(context, RULE_OPTIONS[name] ?? {});
  await handler.file?.({ content, contentType: 'text', ext: '' });
}

/** Overlapping or touching spans as one, sorted; the merged span keeps the kind of its longest part. */
export function mergeCredentialSpans(spans: readonly CredentialSpan[]): CredentialSpan[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: Array<CredentialSpan & { longest: number }> = [];
  for (const span of sorted) {
    const last = merged[merged.length - 1];
    if (last !== undefined && span.start < last.end) {
      if (span.end - span.start > last.longest) {
        last.kind = span.kind;
        last.longest = span.end - span.start;
      }
      last.end = Math.max(last.end, span.end);
    } else {
      merged.push({ ...span, longest: span.end - span.start });
    }
  }
  return merged.map(({ start, end, kind }) => ({ start, end, kind }));
}

/** Every credential in `text`, as disjoint spans in text order. */
export async function detectCredentials(text: string): Promise<CredentialSpan[]> {
  const found: CredentialSpan[] = [];
  if (text.length === 0) return found;
  for (const { rule, name } of await scannerRules()) await runRule(rule, name, text, found);
  for (const { kind, pattern, accept, endTrim = 0 } of OWN_RULES) {
    for (const match of text.matchAll(pattern)) {
      if (accept !== undefined && !accept(match as RegExpExecArray)) continue;
      found.push({ start: match.index, end: match.index + match[0].length - endTrim, kind });
    }
  }
  return mergeCredentialSpans(found);
}

/** Credentials counted by kind, kinds sorted. */
export interface CredentialTally {
  total: number;
  byKind: ReadonlyArray<{ kind: string; count: number }>;
}

/** The tally of some found credentials. */
export function tallyCredentials(kinds: Iterable<string>): CredentialTally {
  const counts = new Map<string, number>();
  let total = 0;
  for (const kind of kinds) {
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
    total++;
  }
  return { total, byKind: [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([kind, count]) => ({ kind, count })) };
}

/** `2 aws-access-key-id, 1 github-token`: a tally in words (kinds only, never values). */
export function describeCredentialTally(tally: CredentialTally): string {
  return tally.byKind.map(({ kind, count }) => `${count} ${kind}`).join(', ');
}
