import { spawnSync } from 'node:child_process';
import v8 from 'node:v8';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { compileForThisThread, defaultWasmTieringBudget } from './wasmCompile';

// V8 offers no way to read a flag back, so these watch the calls that set them (the time it saves
// is measured by \`npm run bench\`, in the start section; the code cache it must not break, by
// test/e2e/codeCache.test.ts).
describe('compileForThisThread', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  const flagsSet = (spy: { mock: { calls: unknown[][] } }) => spy.mock.calls.map(([flag]) => flag);

  it('knows the tier-up budget default of the V8 it runs on, as node --v8-options gives it', () => {
    const options = spawnSync(process.execPath, ['--v8-options'], { encoding: 'utf8' }).stdout;
    const match = /--wasm-tiering-budget=(\d+)/.exec(options.slice(options.indexOf('--wasm-tiering-budget (')));
    expect(match, 'node --v8-options lists --wasm-tiering-budget').not.toBeNull();
    expect(defaultWasmTieringBudget()).toBe(Number(match![1]));
  });

  it('compiles on the main thread with the largest budget V8 takes, and sets it back at once', () => {
    const setFlags = vi.spyOn(v8, 'setFlagsFromString');
    const during = compileForThisThread(() => flagsSet(setFlags), true, '11.3.244.8-node.33');
    expect(during).toEqual(['--wasm-tiering-budget=2147483647']);
    expect(flagsSet(setFlags)).toEqual(['--wasm-tiering-budget=2147483647', '--wasm-tiering-budget=1800000']);
  });

  it('sets the budget back when the compile throws', () => {
    const setFlags = vi.spyOn(v8, 'setFlagsFromString');
    expect(() =>
      compileForThisThread(
        () => {
          throw new Error('bad module');
        },
        true,
        '13.6.233.17-node.37',
      ),
    ).toThrow('bad module');
    expect(flagsSet(setFlags)).toEqual(['--wasm-tiering-budget=2147483647', '--wasm-tiering-budget=13000000']);
  });

  it('leaves the flags alone off the main thread, and on a V8 whose default it does not know', () => {
    const setFlags = vi.spyOn(v8, 'setFlagsFromString');
    expect(compileForThisThread(() => 'compiled', false)).toBe('compiled');
    expect(compileForThisThread(() => 'compiled', true, '99.1.2')).toBe('compiled');
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
