// Spec audit (docs/traceability.md): lsp-contract.md "File mentions" — paths are relative to the workspace
// folder HOLDING the document, not merely the first folder (a mutant using the first folder survived).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { provideFileMentionCompletion } from './fileMentions';
import { testWorkspace } from '../testing/testWorkspace';

let base: string;
const folder = (name: string) => path.join(base, name);

beforeAll(() => {
  base = mkdtempSync(path.join(os.tmpdir(), 'dsh-file-mentions-audit-'));
  for (const file of ['first/only-in-first.md', 'second/only-in-second.md', 'second/inner/only-in-inner.md', 'second/inner/notes/p.md']) {
    mkdirSync(path.dirname(path.join(base, file)), { recursive: true });
    writeFileSync(path.join(base, file), 'x');
  }
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

/** Labels offered for `@` typed at the start of a document at `documentPath`, with these workspace folders. */
async function topLevel(documentPath: string, folders: string[]): Promise<string[]> {
  const document = TextDocument.create(pathToFileURL(documentPath).href, 'markdown', 1, '@');
  const { workspace } = testWorkspace([], { folders, documents: [document] });
  const list = await provideFileMentionCompletion(document, { line: 0, character: 1 }, workspace);
  return list.items.map((item) => String(item.label));
}

describe('file mentions with several workspace folders', () => {
  it('are relative to the folder holding the document, even when it is not the first', async () => {
    const labels = await topLevel(path.join(folder('second'), 'draft.md'), [folder('first'), folder('second')]);
    expect(labels).toContain('only-in-second.md');
    expect(labels).not.toContain('only-in-first.md');
  });

  it('take the longest folder holding the document when folders nest', async () => {
    const labels = await topLevel(path.join(folder('second/inner'), 'draft.md'), [folder('second'), folder('second/inner')]);
    expect(labels).toContain('only-in-inner.md');
    expect(labels).not.toContain('only-in-second.md');
  });
});
