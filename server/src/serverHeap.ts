import v8 from 'node:v8';

/**
 * How much V8 lets the old generation grow past what the last full collection kept, in percent.
 * Its own factor lets a 100,000-session index (~130 MB live) grow the heap to 2–3× that before
 * collecting. Set at run time because the server is started without NODE_OPTIONS (the bin, and
 * the VS Code extension running the bundle with `node`); V8 reads this flag at every limit
 * computation, so it applies after start (measured; the semi-space size, read once at heap
 * set-up, would not).
 */
export const HEAP_GROWING_PERCENT = 25;

/**
 * Sets the server's V8 flags. main.ts calls it before it loads the server's bundle: V8 accepts
 * a code cache only under the flags it was made with (codeCache.ts), so the flags must be the
 * same when the cache is read as when it is made, at exit.
 */
export function applyServerV8Flags(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
