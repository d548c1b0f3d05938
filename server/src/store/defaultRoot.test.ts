import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultSessionsRoot, expandHome } from './defaultRoot';

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
