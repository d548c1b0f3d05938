// The README's editor snippets must be the files the real-editor tests load, byte for byte.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/conformance';

const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
const snippets = [...readme.matchAll(/<!-- snippet: (\S+) -->\n```[a-z]*\n([\s\S]*?)```\n/g)].map(([, file, body]) => ({ file: file!, body: body! }));

describe('README', () => {
  it('embeds snippets from docs/editors/', () => {
    expect(snippets.map((snippet) => snippet.file)).toEqual([
      'docs/editors/nvim-0.11.lua',
      'docs/editors/helix-languages.toml',
      'docs/editors/zed-settings.json',
    ]);
  });

  it.each(snippets.map((snippet) => [snippet.file, snippet.body] as const))('shows %s exactly as the file the tests load', (file, body) => {
    const content = readFileSync(path.join(REPO_ROOT, file), 'utf8');
    expect(body).toBe(content.endsWith('\n') ? content : content + '\n');
  });

  it('links every other editor configuration it names', () => {
    for (const file of ['docs/editors/nvim-0.7.lua', 'docs/editors/eglot.el', 'docs/editors/lsp-mode.el', 'docs/editors/ale.vim']) {
      expect(readme).toContain(`](${file})`);
      expect(() => readFileSync(path.join(REPO_ROOT, file))).not.toThrow();
    }
  });

  it('installs the tarball `npm run pack` writes, named after the server version', () => {
    const { version } = JSON.parse(readFileSync(path.join(REPO_ROOT, 'server', 'package.json'), 'utf8')) as { version: string };
    expect(readme).toContain('npm run pack');
    expect(readme).toContain(`npm install -g --offline ./dsh-session-ls-${version}.tgz`);
  });

  it('names the two commands a newcomer needs', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm test');
  });
});
