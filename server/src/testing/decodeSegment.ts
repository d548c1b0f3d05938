/** The inverse of the store's session directory names (store/layout.ts), the oracle of their tests. */
import { encodeSegment } from '../store/layout';

/**
 * The id a session directory name encodes, or undefined when the name is not exactly what
 * `encodeSegment` would produce (so every directory name maps to at most one id and back).
 */
export function decodeSegment(name: string): string | undefined {
  let id = '';
  let i = 0;
  while (i < name.length) {
    if (name[i] === '~') {
      const hex = name.slice(i + 1, i + 5);
      if (!/^[0-9A-F]{4}$/.test(hex)) return undefined;
      id += String.fromCharCode(parseInt(hex, 16));
      i += 5;
    } else {
      id += name[i];
      i += 1;
    }
  }
  if (id === '') return undefined;
  return encodeSegment(id) === name ? id : undefined;
}
