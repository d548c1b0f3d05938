/** Hot spots of a V8 CPU profile (`node --cpu-prof`), by self time, for the results. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

/** One function's share of the profile. */
export interface HotSpot {
  name: string;
  selfMs: number;
  share: number;
}

/** The `top` functions by self time in the newest profile of `dir`, with the total busy (non-idle) time. */
export function hotSpots(dir: string, top = 15): { totalMs: number; spots: HotSpot[] } | undefined {
  const files = readdirSync(dir).filter((name) => name.endsWith('.cpuprofile')).sort();
  if (files.length === 0) return undefined;
  const profile = JSON.parse(readFileSync(path.join(dir, files[files.length - 1]), 'utf8')) as {
    nodes: ProfileNode[];
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<string, number>();
  // Shares are of the busy time: an idle server is not a hot spot.
  let total = 0;
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)!.callFrame;
    const where = frame.url ? `${frame.url.split('/').slice(-2).join('/')}:${frame.lineNumber + 1}` : '';
    const key = `${frame.functionName || '(anonymous)'} ${where}`.trim();
    self.set(key, (self.get(key) ?? 0) + profile.timeDeltas[i]);
    if (key !== '(idle)') total += profile.timeDeltas[i];
  });
  const spots = [...self]
    .filter(([name]) => name !== '(idle)')
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, micros]) => ({ name, selfMs: micros / 1000, share: micros / total }));
  return { totalMs: total / 1000, spots };
}
