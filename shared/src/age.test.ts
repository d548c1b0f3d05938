import { describe, expect, it } from 'vitest';
import { formatAge } from '@dsh-session-ls/shared';

const NOW = Date.UTC(2026, 11, 2, 12, 0, 0);
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

describe('formatAge', () => {
  it('calls anything under a minute "just now"', () => {
    expect(formatAge(NOW, NOW)).toBe('just now');
    expect(formatAge(NOW - 59 * SECOND, NOW)).toBe('just now');
    expect(formatAge(NOW - 59_999, NOW)).toBe('just now');
  });

  it('uses the largest whole unit, singular for one', () => {
    expect(formatAge(NOW - MINUTE, NOW)).toBe('1 minute ago');
    expect(formatAge(NOW - 59 * MINUTE, NOW)).toBe('59 minutes ago');
    expect(formatAge(NOW - HOUR, NOW)).toBe('1 hour ago');
    expect(formatAge(NOW - 2 * HOUR, NOW)).toBe('2 hours ago');
    expect(formatAge(NOW - 23 * HOUR - 59 * MINUTE, NOW)).toBe('23 hours ago');
    expect(formatAge(NOW - DAY, NOW)).toBe('1 day ago');
    expect(formatAge(NOW - 3 * DAY - 5 * HOUR, NOW)).toBe('3 days ago');
    expect(formatAge(NOW - 29 * DAY, NOW)).toBe('29 days ago');
    expect(formatAge(NOW - 30 * DAY, NOW)).toBe('1 month ago');
    expect(formatAge(NOW - 45 * DAY, NOW)).toBe('1 month ago');
    expect(formatAge(NOW - 364 * DAY, NOW)).toBe('12 months ago');
    expect(formatAge(NOW - 365 * DAY, NOW)).toBe('1 year ago');
    expect(formatAge(NOW - 800 * DAY, NOW)).toBe('2 years ago');
  });

  it('does not count backwards when the session is dated after now (clock skew)', () => {
    expect(formatAge(NOW + 5 * DAY, NOW)).toBe('just now');
  });

  it('says so when a date is not a number', () => {
    expect(formatAge(Number.NaN, NOW)).toBe('unknown age');
    expect(formatAge(NOW, Number.POSITIVE_INFINITY)).toBe('unknown age');
  });
});
