import { describe, expect, it } from 'vitest';
import type { SessionStoreStatus } from '@dsh-session-ls/shared';
import { ROOT_SETTING_HINT, isSessionStoreStatus, statusPresentation } from './statusText';

describe('statusPresentation', () => {
  it('shows how many sessions are indexed, with the store in the tooltip', () => {
    expect(statusPresentation({ root: '/home/u/.dsh/sessions', indexed: 12, indexing: false, discovered: 12 })).toEqual({
      text: '$(history) dsh: 12 sessions',
      tooltip: 'dsh sessions store: /home/u/.dsh/sessions\n12 sessions indexed',
    });
  });

  it('says one session, not one sessions', () => {
    expect(statusPresentation({ root: '/s', indexed: 1, indexing: false, discovered: 1 }).text).toBe('$(history) dsh: 1 session');
  });

  it('spins while indexing and counts what is indexed so far, before any session is found', () => {
    const shown = statusPresentation({ root: '/s', indexed: 0, indexing: true, discovered: 0 });
    expect(shown.text).toBe('$(sync~spin) dsh: indexing… 0 sessions');
    expect(shown.tooltip).toBe('dsh sessions store: /s\n0 sessions indexed so far');
  });

  it('shows progress against the sessions found so far', () => {
    const shown = statusPresentation({ root: '/s', indexed: 5, indexing: true, discovered: 12 });
    expect(shown.text).toBe('$(sync~spin) dsh: indexing… 5/12 sessions');
    expect(shown.tooltip).toBe('dsh sessions store: /s\n5/12 sessions indexed so far');
    expect(statusPresentation({ root: '/s', indexed: 12, indexing: false, discovered: 12 }).text).toBe('$(history) dsh: 12 sessions');
  });

  it.each([
    ['missing', '$(warning) dsh: no sessions root', 'does not exist yet; sessions appear once it does.'],
    ['not-a-directory', '$(warning) dsh: sessions root is not a directory', 'is not a directory, so no sessions can be listed; it is picked up once it is one.'],
    ['inaccessible', '$(warning) dsh: sessions root cannot be read', 'cannot be read, so no sessions can be listed; it is picked up once it can be.'],
  ] as const)('says a %s root leaves the list empty, with the path, the reason and where to set it in the tooltip', (problem, text, reason) => {
    expect(statusPresentation({ root: '/home/u/.dsh/sessions', indexed: 0, indexing: false, discovered: 0, rootProblem: problem })).toEqual({
      text,
      tooltip: `dsh sessions store: /home/u/.dsh/sessions\nThe dsh sessions root /home/u/.dsh/sessions ${reason}\n${ROOT_SETTING_HINT}`,
    });
    // Whatever the counts say (a root that vanished after an index), the problem is what is shown.
    expect(statusPresentation({ root: '/s', indexed: 3, indexing: true, discovered: 3, rootProblem: problem }).text).toBe(text);
  });

  it('names the remote settings in its hint', () => {
    expect(ROOT_SETTING_HINT).toContain('dshSessions.sessionsRoot');
    expect(ROOT_SETTING_HINT).toContain('Remote');
  });

  it('shows a problem a newer server names as an unreadable root', () => {
    const future = { root: '/s', indexed: 0, indexing: false, discovered: 0, rootProblem: 'on-fire' } as unknown as SessionStoreStatus;
    expect(isSessionStoreStatus(future)).toBe(true);
    expect(statusPresentation(future).text).toBe('$(warning) dsh: sessions root cannot be read');
  });

  it('shows the root display-safe', () => {
    const shown = statusPresentation({ root: '/tmp/a\u202eb', indexed: 0, indexing: false, discovered: 0, rootProblem: 'missing' });
    expect(shown.tooltip.split('\n')[0]).toBe('dsh sessions store: /tmp/ab');
    expect(statusPresentation({ root: '/tmp/a\u202eb', indexed: 1, indexing: false, discovered: 1 }).tooltip.split('\n')[0]).toBe('dsh sessions store: /tmp/ab');
  });

  it('names the absence of a root', () => {
    expect(statusPresentation({ root: null, indexed: 0, indexing: false, discovered: 0 }).tooltip).toContain('(no sessions root)');
  });
});

describe('isSessionStoreStatus', () => {
  it('accepts the documented shape', () => {
    expect(isSessionStoreStatus({ root: '/s', indexed: 3, indexing: true, discovered: 7 })).toBe(true);
    expect(isSessionStoreStatus({ root: null, indexed: 0, indexing: false, discovered: 0 })).toBe(true);
  });

  it.each([
    ['nothing', undefined],
    ['a string', 'ready'],
    ['a missing count', { root: '/s', indexing: false, discovered: 1 }],
    ['a negative count', { root: '/s', indexed: -1, indexing: false, discovered: 1 }],
    ['a fractional count', { root: '/s', indexed: 1.5, indexing: false, discovered: 1 }],
    ['a numeric root', { root: 3, indexed: 1, indexing: false, discovered: 1 }],
    ['a string flag', { root: '/s', indexed: 1, indexing: 'no', discovered: 1 }],
    ['a bad discovered count', { root: '/s', indexed: 1, indexing: true, discovered: 'some' }],
    ['a missing discovered count', { root: '/s', indexed: 1, indexing: true }],
    ['a root problem that is not a string', { root: '/s', indexed: 0, indexing: false, discovered: 0, rootProblem: 1 }],
  ])('rejects %s', (_name, value) => {
    expect(isSessionStoreStatus(value)).toBe(false);
  });
});
