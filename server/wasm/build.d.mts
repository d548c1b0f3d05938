// Types of build.mjs, for lineSkimWasm.test.ts.
export const SOURCE: string;
export const MODULE: string;
export const COMPILER: string;
/** The TypeScript module holding `wasm`. */
export function moduleText(wasm: Buffer): string;
/** Compiles lineSkim.c; the wasm bytes. */
export function compile(): Buffer;
