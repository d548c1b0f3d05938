import path from 'node:path';
import { describe, expect, it } from 'vitest';
import os from 'node:os';
import { defaultSessionsRoot, expandHome, workingDirectory } from './defaultRoot';

const home = path.resolve('/home/alice');

describe('defaultSessionsRoot', () => {
  it('is ~/.dsh/sessions without DSH_HOME, or with a blank one', () => {
    const expected = path.join(home, '.dsh', 'sessions');
    expect(defaultSessionsRoot({}, home)).toBe(expected);
    expect(defaultSessionsRoot({ DSH_HOME: '' }, home)).toBe(expected);
    expect(defaultSessionsRoot({ DSH_HOME: ' \t\n' }, home)).toBe(expected);
  });

  it('is $DSH_HOME/sessions, made absolute', () => {
    expect(defaultSessionsRoot({ DSH_HOME: path.resolve('/opt/dsh') }, home)).toBe(path.resolve('/opt/dsh/sessions'));
    expect(defaultSessionsRoot({ DSH_HOME: 'rel/dsh' }, home)).toBe(path.resolve('rel/dsh/sessions'));
  });

  it('expands a leading ~, ~/ or ~\\ to the home directory, and nothing else', () => {
    expect(defaultSessionsRoot({ DSH_HOME: '~' }, home)).toBe(path.join(home, 'sessions'));
    expect(defaultSessionsRoot({ DSH_HOME: '~/x' }, home)).toBe(path.join(home, 'x', 'sessions'));
    expect(defaultSessionsRoot({ DSH_HOME: '~\\x' }, home)).toBe(path.join(home, 'x', 'sessions'));
    expect(defaultSessionsRoot({ DSH_HOME: '~bob/x' }, home)).toBe(path.resolve('~bob/x/sessions'));
  });
});

describe('expandHome', () => {
  it('expands a leading ~, ~/ or ~\\ only', () => {
    expect(expandHome('~', '/h')).toBe('/h');
    expect(expandHome('~/x', '/h')).toBe(path.join('/h', 'x'));
    expect(expandHome('~\\x', '/h')).toBe(path.join('/h', 'x'));
    expect(expandHome('~user/x', '/h')).toBe('~user/x');
    expect(expandHome('/a/~/b', '/h')).toBe('/a/~/b');
  });
});

describe('workingDirectory', () => {
  const gone = (): string => {
    throw Object.assign(new Error('ENOENT: no such file or directory, uv_cwd'), { code: 'ENOENT' });
  };

  it('is the working directory while there is one', () => {
    expect(workingDirectory({}, () => '/work/here')).toBe('/work/here');
    expect(workingDirectory()).toBe(process.cwd());
  });

  it('is $PWD, else the home directory, once the directory was removed (process.cwd() throws)', () => {
    expect(workingDirectory({ PWD: '/tmp/removed' }, gone)).toBe('/tmp/removed');
    expect(workingDirectory({ PWD: 'relative' }, gone)).toBe(os.homedir());
    expect(workingDirectory({}, gone)).toBe(os.homedir());
  });
});
