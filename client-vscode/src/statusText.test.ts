import { describe, expect, it } from 'vitest';
import type { SessionStoreStatus } from '@dsh-session-ls/shared';
import { isSessionStoreStatus, statusPresentation } from './statusText';

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

  it('warns when the root is not a directory or cannot be read, and says where', () => {
    expect(statusPresentation({ root: '/home/u/.dsh/sessions', indexed: 0, indexing: false, discovered: 0, rootProblem: 'not-a-directory' })).toEqual({
      text: '$(warning) dsh: sessions root is not a directory',
      tooltip: 'The dsh sessions root /home/u/.dsh/sessions is not a directory, so no sessions can be listed; it is picked up once it is one.',
    });
    expect(statusPresentation({ root: '/s', indexed: 0, indexing: false, discovered: 0, rootProblem: 'inaccessible' }).text).toBe('$(warning) dsh: sessions root cannot be read');
    // A problem a newer server names is shown as an unreadable root.
    const future = { root: '/s', indexed: 0, indexing: false, discovered: 0, rootProblem: 'on-fire' } as unknown as SessionStoreStatus;
    expect(isSessionStoreStatus(future)).toBe(true);
    expect(statusPresentation(future).text).toBe('$(warning) dsh: sessions root cannot be read');
  });

  it('counts no sessions for a missing root, and says it does not exist yet', () => {
    const shown = statusPresentation({ root: '/s', indexed: 0, indexing: false, discovered: 0, rootProblem: 'missing' });
    expect(shown.text).toBe('$(history) dsh: 0 sessions');
    expect(shown.tooltip).toBe('dsh sessions store: /s\n0 sessions indexed\nThe dsh sessions root /s does not exist yet; sessions appear once it does.');
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
