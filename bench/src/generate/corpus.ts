/** Synthetic text for session content: prose for prompts and answers, code-like text for tool output. */
import { Random } from './random';

const WORDS = (
  'the a an to of and in for on with is it this that be can we you should will from by as at or not ' +
  'function file test error type value return server client store index session title query cache ' +
  'build module import export config option path directory log event frame header record line parse ' +
  'decode encode read write update delete create list sort filter map reduce promise async await ' +
  'request response handler callback stream buffer string number array object null undefined true ' +
  'false check fix bug issue change commit branch merge review refactor rename move split join ' +
  'performance memory latency benchmark profile hot path loop allocation garbage collector worker ' +
  'thread process signal timeout retry backoff queue batch chunk block checksum window offset size ' +
  'compile typescript javascript node npm package dependency version release deploy docker image ' +
  'database schema migration column table row key constraint transaction lock commit rollback ' +
  'user message assistant tool call result reasoning context prompt budget token model provider ' +
  'please could would maybe also then first next finally because however instead therefore ' +
  'let me look at how why what when where which does did done make sure run again add remove ' +
  'café naïve résumé 日本語 데이터 Ünïcödé façade über señor coöperate straße'
).split(' ');

const TOPICS = (
  'Fix flaky CI test|Refactor auth middleware|Add zstd support|Speed up cold start|Migrate to Node 22|' +
  'Debug memory leak in worker|Write release notes|Review pull request|Rename config keys|Profile completion latency|' +
  'Set up Docker compose|Investigate timeout errors|Add retry with backoff|Clean up logging|Port parser to TypeScript|' +
  'Update dependencies|Explain the session store|Design cache invalidation|Benchmark index build|Fix Unicode paths|' +
  'Implement file watcher|Tune database queries|Add e2e tests|Document the API|Triage open issues|' +
  'Résumé parsing bug|日本語のドキュメント|Optimise hot loop|Split large module|Handle torn writes'
).split('|');

const CODE_LINES = [
  'export function parseHeader(line: string): Header {',
  '  const value = JSON.parse(line) as unknown;',
  '  if (typeof value !== "object" || value === null) throw new Error("not an object");',
  '  return { id: String(value.id), createdAt: Number(value.createdAt) };',
  '}',
  'import { readFile } from "node:fs/promises";',
  'const rows = await db.query("SELECT id, title FROM sessions WHERE cwd = $1", [cwd]);',
  '\tfor (let i = 0; i < frames.length; i++) {',
  '\t\ttotal += frames[i].byteLength; // keep the running size',
  '\t}',
  'npm ERR! code ERESOLVE',
  '  at Object.<anonymous> (/home/user/project/src/index.ts:42:13)',
  'PASS  src/store/index.test.ts (12 tests) 84ms',
  'FAIL  src/server.test.ts > completion > answers within budget',
  'diff --git a/src/cache.ts b/src/cache.ts',
  '@@ -10,7 +10,9 @@ export class Cache {',
  '-    this.entries.clear();',
  '+    this.entries.delete(key); // only the stale one',
  '{ "name": "example", "version": "1.2.3", "scripts": { "test": "vitest run" } }',
  'C:\\Users\\dev\\project\\src\\main.ts(3,7): error TS2322: Type "string" is not assignable',
  '  return path.replace(/\\\\/g, "/");',
  '    "title": "Fix \\"quoted\\" names", "emoji": "✅ 🚀"',
];

/** A corpus of prose and code from which slices of any size are taken cheaply. */
export class Corpus {
  readonly prose: string;
  readonly code: string;

  constructor(seed: number, size = 1 << 21) {
    const random = new Random(seed ^ 0x5eed);
    const prose: string[] = [];
    let length = 0;
    while (length < size) {
      const n = random.int(4, 22);
      let sentence = '';
      for (let i = 0; i < n; i++) sentence += (i === 0 ? '' : ' ') + random.pick(WORDS);
      sentence = sentence[0].toUpperCase() + sentence.slice(1) + (random.chance(0.1) ? '?' : '.');
      if (random.chance(0.08)) sentence += '\n\n';
      else if (random.chance(0.04)) sentence += '\n- ';
      prose.push(sentence);
      length += sentence.length + 1;
    }
    this.prose = prose.join(' ');
    const code: string[] = [];
    length = 0;
    while (length < size) {
      const line = random.pick(CODE_LINES);
      code.push(line);
      length += line.length + 1;
    }
    this.code = code.join('\n');
  }

  /** About `chars` characters of prose starting at a word boundary. */
  proseSlice(random: Random, chars: number): string {
    return slice(this.prose, random, chars, ' ').trim() || 'ok';
  }

  /** About `chars` characters of code-like text starting at a line boundary. */
  codeSlice(random: Random, chars: number): string {
    return slice(this.code, random, chars, '\n');
  }

  /** A short title-like phrase. */
  topic(random: Random): string {
    const base = random.pick(TOPICS);
    return random.chance(0.5) ? base : `${base} ${random.pick(WORDS)}`;
  }
}

function slice(text: string, random: Random, chars: number, boundary: string): string {
  const want = Math.max(1, Math.min(chars, text.length - 1));
  let start = random.int(0, text.length - want - 1);
  const at = text.indexOf(boundary, start);
  if (at >= 0 && at + 1 + want <= text.length) start = at + 1;
  let end = Math.min(text.length, start + want);
  // Never cut a surrogate pair in half (the JSON would still be valid, but dsh never writes that).
  if (end < text.length && /[\uD800-\uDBFF]/.test(text[end - 1])) end -= 1;
  if (/[\uDC00-\uDFFF]/.test(text[start])) start += 1;
  return text.slice(start, end);
}
