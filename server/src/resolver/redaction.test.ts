import type { PreparedReferencedMessage, SessionReferenceError } from '@dsh-session-ls/shared';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { credentialCorpus } from '../testing/credentialCorpus';
import { InMemorySessionStore } from '../testing/inMemorySessionStore';
import { DshLog } from '../testing/testLogs';
import { retainWithinBudget } from './budget';
import { detectCredentials } from './credentials';
import { projectSessionSurface } from './projection';
import { redactProjection, redactSpans, sentCredentials } from './redaction';
import { createSessionReferenceResolver } from './resolver';

const CORPUS = credentialCorpus(7, 300);
const PROSE = ['Let me look at the logs first.', 'The deploy finished in 3 minutes.', 'Which branch is this on?', 'ok', 'Running the tests again now.\n\nAll 214 passed.'];

/** A message: prose and corpus messages (each holding one credential) joined in a random order. */
const messageArbitrary = fc
  .array(fc.oneof(fc.constantFrom(...PROSE), fc.nat(CORPUS.length - 1).map((index) => index)), { minLength: 1, maxLength: 4 })
  .map((parts) => parts.map((part) => (typeof part === 'number' ? CORPUS[part]! : part)));

const sessionArbitrary = fc.array(messageArbitrary, { minLength: 1, maxLength: 6 });

type Part = string | (typeof CORPUS)[number];
const textOf = (parts: readonly Part[]): string => parts.map((part) => (typeof part === 'string' ? part : part.text)).join('\n\n');
const secretsOf = (parts: readonly Part[]): string[] => parts.flatMap((part) => (typeof part === 'string' ? [] : [part.text.slice(part.start, part.end)]));

function storeOf(messages: readonly string[]): InMemorySessionStore {
  const log = new DshLog();
  messages.forEach((text, index) => (index % 2 === 0 ? log.user(text) : log.assistant(text)));
  return new InMemorySessionStore([{ header: { id: 'alpha', cwd: '/w', createdAt: 1 }, events: log.events() }]);
}

async function prepared(store: InMemorySessionStore, maxReferenceBytes: number, redactSecrets: boolean): Promise<PreparedReferencedMessage | SessionReferenceError> {
  const resolver = createSessionReferenceResolver(store, { maxReferenceBytes }, { redactSecrets });
  try {
    return await resolver.prepare(undefined, [{ type: 'text', text: 'see @alpha' }], [{ sessionId: 'alpha', label: 'Alpha' }]);
  } catch (error) {
    return error as SessionReferenceError;
  }
}

/** The answer without its fresh random id. */
const comparable = (answer: PreparedReferencedMessage | SessionReferenceError): unknown =>
  'code' in answer ? { code: answer.code } : { ...answer, additionalContext: { ...answer.additionalContext, id: undefined } };

describe('redactSecrets in prepare', () => {
  it('sends no corpus credential, not even a piece of one cut by the budget, and is otherwise the plain answer', async () => {
    let cutThroughCredential = 0;
    await fc.assert(
      fc.asyncProperty(sessionArbitrary, fc.integer({ min: 300, max: 6000 }), async (session, maxReferenceBytes) => {
        const texts = session.map(textOf);
        const secrets = session.flatMap(secretsOf);
        const redactedTexts = await Promise.all(texts.map(async (text) => redactSpans(text, await detectCredentials(text)).text));
        const redacted = await prepared(storeOf(texts), maxReferenceBytes, true);
        // The same store with every credential already replaced, prepared as dsh does.
        const expected = await prepared(storeOf(redactedTexts), maxReferenceBytes, false);
        expect(comparable(redacted)).toEqual(comparable(expected));
        const sent = JSON.stringify(redacted);
        for (const secret of secrets) {
          for (let at = 0; at + 12 <= secret.length; at += 4) expect(sent).not.toContain(secret.slice(at, at + 12));
        }
        // Without redaction a budget cut can leave a piece of a credential: count the runs that did.
        const plain = JSON.stringify(await prepared(storeOf(texts), maxReferenceBytes, false));
        if (secrets.some((secret) => !plain.includes(JSON.stringify(secret).slice(1, -1)) && plain.includes(JSON.stringify(secret.slice(0, 12)).slice(1, -1)))) cutThroughCredential++;
      }),
      { numRuns: 150, seed: 4242 },
    );
    // The property met credentials cut by the budget, not only whole ones.
    expect(cutThroughCredential).toBeGreaterThan(5);
  });

  it('leaves a message without credentials as it is, and off it scans nothing', async () => {
    const texts = ['Say hi', 'Hi! Nothing secret here, only build 4821 and https://example.com/docs.'];
    expect(comparable(await prepared(storeOf(texts), 65536, true))).toEqual(comparable(await prepared(storeOf(texts), 65536, false)));
  });
});

describe('sentCredentials', () => {
  const key = CORPUS.find((item) => item.kind === 'github-token')!;
  const token = key.text.slice(key.start, key.end);

  async function tallyAt(text: string, maxReferenceBytes: number, redact: boolean) {
    const surface = await storeOf(['Say hi', text]).readSurface('alpha');
    const projection = projectSessionSurface(surface, 'Alpha');
    const sendable = redact ? await redactProjection(projection) : { projection };
    return { retained: retainWithinBudget(sendable.projection, maxReferenceBytes), tally: await sentCredentials(sendable, retainWithinBudget(sendable.projection, maxReferenceBytes)) };
  }

  it('counts the credentials of the messages sent, by kind', async () => {
    const { tally } = await tallyAt(`first ${token} then AKIA${'Q'.repeat(16)}`, 65536, false);
    expect(tally).toEqual({ total: 2, byKind: [{ kind: 'aws-access-key-id', count: 1 }, { kind: 'github-token', count: 1 }] });
  });

  it('counts a credential the budget cuts in half, and not one it omits whole', async () => {
    const filler = 'word '.repeat(600);
    const text = `${'word '.repeat(200)}${token} ${filler}`;
    // The budget whose cut ends inside the token: the head keeps a piece of it.
    let budget = 1800;
    while (!(await tallyAt(text, budget, false)).retained.data.conversation.at(-1)!.text.includes(token.slice(0, 8))) budget += 4;
    const half = await tallyAt(text, budget, false);
    const body = half.retained.data.conversation.at(-1)!.text;
    expect(body).not.toContain(token);
    expect(half.tally.total).toBe(1);
    const omitted = await tallyAt(`${filler}${filler}${token} ${filler}${filler}`, 3000, false);
    expect(omitted.tally.total).toBe(0);
  });

  it('with redaction, counts the placeholders that are sent', async () => {
    const { retained, tally } = await tallyAt(`here: ${token}`, 65536, true);
    expect(retained.data.conversation.at(-1)!.text).toBe('here: [REDACTED:github-token]');
    expect(tally).toEqual({ total: 1, byKind: [{ kind: 'github-token', count: 1 }] });
  });
});
