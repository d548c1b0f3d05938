/**
 * The committed WebAssembly of the line skim (lineSkimWasm.ts) is exactly what its C source
 * (server/wasm/lineSkim.c) builds with the pinned compiler: nobody ships a module that differs
 * from the code reviewed. Needs Debian's clang-14 and lld-14 (.ci/run installs them).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { findProgram } from '../../../../test/support/conformance';
import { LINE_SKIM_WASM } from './lineSkimWasm';

const clang = findProgram('clang-14');
const linker = findProgram('wasm-ld-14');

describe.skipIf(!clang.found || !linker.found)(`lineSkimWasm.ts against lineSkim.c ${clang.reason ?? linker.reason ?? ''}`, () => {
  it('the committed module is what the source builds, byte for byte', async () => {
    const build = await import('../../../wasm/build.mjs');
    const wasm = build.compile();
    expect(Buffer.from(LINE_SKIM_WASM, 'base64').equals(wasm)).toBe(true);
    expect(readFileSync(new URL('./lineSkimWasm.ts', import.meta.url), 'utf8')).toBe(build.moduleText(wasm));
  });
});
