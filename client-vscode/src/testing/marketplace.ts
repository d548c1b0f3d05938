// What the Visual Studio Marketplace and VS Code accept of a manifest, for the manifest and .vsix tests.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { IN_CI, REPO_ROOT } from '../../../test/support/conformance';

/** The Marketplace's categories (an extension may name several; any other is dropped). */
export const MARKETPLACE_CATEGORIES = [
  'Programming Languages',
  'Snippets',
  'Linters',
  'Themes',
  'Debuggers',
  'Formatters',
  'Keymaps',
  'SCM Providers',
  'Other',
  'Extension Packs',
  'Language Packs',
  'Data Science',
  'Machine Learning',
  'Visualization',
  'Notebooks',
  'Education',
  'Testing',
  'AI',
  'Chat',
];

/**
 * Language ids VS Code itself defines, as read from VS Code 1.139.1: `plaintext` by its core, the others by its
 * built-in extensions (`markdown` by markdown-basics; `prompt`, for `*.prompt.md` files, by prompt-basics). Only
 * those the manifest may activate on; `builtInLanguages()` checks them against the real VS Code.
 */
export const VSCODE_LANGUAGES = ['plaintext', 'markdown', 'prompt'];

const BUILT_IN_EXTENSIONS = path.join(REPO_ROOT, '.ci', 'vscode', 'node_modules', 'code-server', 'lib', 'vscode', 'extensions');

/**
 * The language ids contributed by the built-in extensions of the real VS Code that .ci/install-vscode.sh installs,
 * or why they cannot be read (under CI=true that throws: CI installs it).
 */
export function builtInLanguages(): { languages?: Set<string>; reason?: string } {
  if (!existsSync(BUILT_IN_EXTENSIONS)) {
    const reason = 'code-server is not installed (.ci/install-vscode.sh)';
    if (IN_CI) throw new Error(`CI=true: ${reason}`);
    return { reason };
  }
  const languages = new Set<string>();
  for (const name of readdirSync(BUILT_IN_EXTENSIONS)) {
    const manifest = path.join(BUILT_IN_EXTENSIONS, name, 'package.json');
    if (!existsSync(manifest)) continue;
    const contributed = (JSON.parse(readFileSync(manifest, 'utf8')) as { contributes?: { languages?: Array<{ id: string }> } }).contributes?.languages;
    for (const language of contributed ?? []) languages.add(language.id);
  }
  return { languages };
}

/** Width and height of a PNG image, from its IHDR chunk. */
export function pngSize(png: Buffer): { width: number; height: number } {
  if (png.length < 24 || !png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) || png.toString('ascii', 12, 16) !== 'IHDR') {
    throw new Error('not a PNG image');
  }
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/** The targets of a Markdown text's links and images (`[…](target)`, `![…](target)`, `<img src="target">`). */
export function markdownLinks(markdown: string): Array<{ image: boolean; target: string }> {
  const links = [...markdown.matchAll(/(!?)\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => ({ image: match[1] === '!', target: match[2]! }));
  const images = [...markdown.matchAll(/<img\b[^>]*\bsrc=["']([^"']+)["']/g)].map((match) => ({ image: true, target: match[1]! }));
  return [...links, ...images];
}
