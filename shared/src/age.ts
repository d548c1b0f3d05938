const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const MONTH = 30 * DAY;
const YEAR = 365 * DAY;

// Largest unit first; each unit is used once the age reaches one of it.
const UNITS: ReadonlyArray<readonly [number, string]> = [
  [YEAR, 'year'],
  [MONTH, 'month'],
  [DAY, 'day'],
  [HOUR, 'hour'],
  [MINUTE, 'minute'],
];

/** How long ago a session was created, in words ("3 days ago"); under a minute, or a clock ahead of us, is "just now". */
export function formatAge(createdAt: number, now: number): string {
  if (!Number.isFinite(createdAt) || !Number.isFinite(now)) return 'unknown age';
  const elapsed = now - createdAt;
  for (const [size, unit] of UNITS) {
    if (elapsed >= size) {
      const count = Math.floor(elapsed / size);
      return `${count} ${unit}${count === 1 ? '' : 's'} ago`;
    }
  }
  return 'just now';
}
