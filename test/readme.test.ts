// The READMEs are for users: short, Install near the top, every editor configuration shown or linked
// (an embedded snippet is the file the real-editor tests load, byte for byte), every link inside the
// repository, and no wording from how the project was built. The package's own README (server/README.md)
// is checked as packed in test/e2e/installed.test.ts; here, what it must share with this one.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/conformance';

const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
const packageReadme = readFileSync(path.join(REPO_ROOT, 'server', 'README.md'), 'utf8');
const snippets = [...readme.matchAll(/<!-- snippet: (\S+) -->\n```[a-z]*\n([\s\S]*?)```\n/g)].map(([, file, body]) => ({ file: file!, body: body! }));
/** The editor configurations the real-editor tests load (docs/editors/README.md describes them). */
const editorConfigs = readdirSync(path.join(REPO_ROOT, 'docs', 'editors'))
  .filter((name) => !name.endsWith('.md'))
  .map((name) => `docs/editors/${name}`);

/** The rows of a README's settings table: `| \`key\` | \`scope\` | default | meaning |`. */
function settingsRows(text: string): string[] {
  return [...text.matchAll(/^\| `(\w+)` \| `[a-z-]+` \|.*$/gm)].map((row) => row[0]);
}

describe('README', () => {
  it('is at most 300 lines, with Install within the first 60', () => {
    const lines = readme.split('\n');
    expect(lines.at(-1)).toBe('');
    expect(lines.length - 1).toBeLessThanOrEqual(300);
    const install = lines.findIndex((line) => /^## Install\b/.test(line));
    expect(install).toBeGreaterThanOrEqual(0);
    expect(install + 1).toBeLessThanOrEqual(60);
  });

  it('speaks of the project only: no session or issue numbers, no specification outside the repository', () => {
    for (const text of [readme, packageReadme]) {
      expect(text).not.toMatch(/\b(sessions?|issues?)\s+#?\d/i);
      expect(text).not.toMatch(/beside the repository|\.\.\/shared\b/i);
    }
  });

  it('links only to files that are in the repository', () => {
    const targets = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!).filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
    expect(targets.length).toBeGreaterThan(0);
    for (const target of targets) {
      const file = path.join(REPO_ROOT, target.replace(/#.*$/, ''));
      expect(() => statSync(file), target).not.toThrow();
    }
  });

  it('shows the demo, then how to install', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('<!-- demo excerpt -->');
    expect(readme.indexOf('<!-- demo excerpt -->')).toBeLessThan(readme.indexOf('## Install'));
  });

  it('embeds at least one editor configuration from docs/editors/', () => {
    expect(snippets.length).toBeGreaterThan(0);
    for (const { file } of snippets) expect(editorConfigs).toContain(file);
  });

  it.each(snippets.map((snippet) => [snippet.file, snippet.body] as const))('shows %s exactly as the file the tests load', (file, body) => {
    const content = readFileSync(path.join(REPO_ROOT, file), 'utf8');
    expect(body).toBe(content.endsWith('\n') ? content : content + '\n');
  });

  it('shows examples/client.mjs, the client example the tests run, byte for byte', () => {
    const [example, ...more] = [...readme.matchAll(/<!-- client example -->\n```js\n([\s\S]*?)```\n/g)].map(([, body]) => body);
    expect(more).toEqual([]);
    expect(example).toBe(readFileSync(path.join(REPO_ROOT, 'examples', 'client.mjs'), 'utf8'));
  });

  it('shows or links every editor configuration in docs/editors/', () => {
    expect(editorConfigs.length).toBeGreaterThanOrEqual(7);
    for (const file of editorConfigs) {
      const embedded = snippets.some((snippet) => snippet.file === file);
      if (!embedded) expect(readme, file).toContain(`](${file})`);
    }
  });

  it('installs the tarball `npm run pack` writes, named after the server version', () => {
    const { version } = JSON.parse(readFileSync(path.join(REPO_ROOT, 'server', 'package.json'), 'utf8')) as { version: string };
    expect(readme).toContain('npm run pack');
    expect(readme).toContain(`npm install -g --offline ./dsh-session-ls-${version}.tgz`);
    expect(packageReadme).toContain(`npm install -g --offline ./dsh-session-ls-${version}.tgz`);
  });

  it('gives command-line examples that work once installed, not only inside the clone', () => {
    expect(readme).toMatch(/^dsh-session-ls candidates /m);
    expect(readme).toMatch(/^dsh-session-ls prepare /m);
    expect(readme).not.toMatch(/\bnpx dsh-session-ls\b/);
  });

  it('names the test command, and where engineers read on', () => {
    expect(readme).toContain('npm test');
    expect(readme).toContain('](CONTRIBUTING.md)');
  });

  it('has the same settings table as the package README', () => {
    expect(settingsRows(readme).length).toBeGreaterThanOrEqual(8);
    expect(settingsRows(packageReadme)).toEqual(settingsRows(readme));
  });
});
