import { describe, expect, it } from 'vitest';
import { formatAge } from './age';

const NOW = Date.UTC(2026, 5, 15, 12, 0, 0);
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

describe('formatAge', () => {
  it('says how long ago, in the largest whole unit', () => {
    expect(formatAge(NOW - 3 * DAY - 5 * MINUTE, NOW)).toBe('3 days ago');
    expect(formatAge(NOW - DAY, NOW)).toBe('1 day ago');
    expect(formatAge(NOW - 2 * 60 * MINUTE, NOW)).toBe('2 hours ago');
    expect(formatAge(NOW - MINUTE, NOW)).toBe('1 minute ago');
    expect(formatAge(NOW - 45 * DAY, NOW)).toBe('1 month ago');
    expect(formatAge(NOW - 800 * DAY, NOW)).toBe('2 years ago');
  });

  it('says just now for under a minute and for a creation time in the future', () => {
    expect(formatAge(NOW - 59_999, NOW)).toBe('just now');
    expect(formatAge(NOW + DAY, NOW)).toBe('just now');
  });
});
