import v8 from 'node:v8';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { compileForThisThread } from './wasmCompile';

// V8 offers no way to read a flag back, so these watch the calls that set them (the time it saves
// is measured by \`npm run bench\`, in the start section).
describe('compileForThisThread', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('compiles on the main thread with Liftoff only, and clears the flag at once', () => {
    const setFlags = vi.spyOn(v8, 'setFlagsFromString');
    const during = compileForThisThread(() => setFlags.mock.calls.map(([flag]) => flag), true);
    expect(during).toEqual(['--liftoff-only']);
    expect(setFlags.mock.calls.map(([flag]) => flag)).toEqual(['--liftoff-only', '--no-liftoff-only']);
  });

  it('clears the flag when the compile throws', () => {
    const setFlags = vi.spyOn(v8, 'setFlagsFromString');
    expect(() =>
      compileForThisThread(() => {
        throw new Error('bad module');
      }, true),
    ).toThrow('bad module');
    expect(setFlags.mock.calls.map(([flag]) => flag)).toEqual(['--liftoff-only', '--no-liftoff-only']);
  });

  it('leaves the flags alone off the main thread', () => {
    const setFlags = vi.spyOn(v8, 'setFlagsFromString');
    expect(compileForThisThread(() => 'compiled', false)).toBe('compiled');
    expect(setFlags).not.toHaveBeenCalled();
  });

  it('gives a module that runs', () => {
    // (module (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add))
    const bytes = Uint8Array.from([
      0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x07, 0x01, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, 0x03, 0x02, 0x01, 0x00, 0x07,
      0x07, 0x01, 0x03, 0x61, 0x64, 0x64, 0x00, 0x00, 0x0a, 0x09, 0x01, 0x07, 0x00, 0x20, 0x00, 0x20, 0x01, 0x6a, 0x0b,
    ]);
    const instance = compileForThisThread(() => new WebAssembly.Instance(new WebAssembly.Module(bytes)), true);
    expect((instance.exports.add as (a: number, b: number) => number)(2, 40)).toBe(42);
  });
});
