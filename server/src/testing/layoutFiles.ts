/**
 * The session files a layout names in a home, by a plain recursive listing (tests hold the
 * engine's discovery to it): regular files passing `isSessionFile` in the folders `leafDepth`
 * below `base` (only those named `leafName`, when the layout names one), never through a link.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import type { SessionLayout } from '../store/formats/adapter';

export function layoutFileKeys(layout: SessionLayout, home: string): string[] {
  const keys: string[] = [];
  const visit = (dir: string, depth: number): void => {
    let entries;
    try {
      entries = readdirSync(path.join(home, ...dir.split('/')), { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const key = `${dir}/${entry.name}`;
      if (depth < layout.leafDepth) {
        const leaf = depth + 1 === layout.leafDepth;
        if (entry.isDirectory() && (!leaf || layout.leafName === undefined || entry.name === layout.leafName)) visit(key, depth + 1);
      } else if (entry.isFile() && layout.isSessionFile(entry.name)) {
        keys.push(key);
      }
    }
  };
  // The base itself must be a real folder (a link is not walked).
  const baseEntry = readdirSync(home, { withFileTypes: true }).find((entry) => entry.name === layout.base.split('/')[0]);
  if (baseEntry?.isDirectory() === true) visit(layout.base, 0);
  return keys.sort();
}
