/** The naive baseline's fold: the project's own log decoder, loaded from the built server. */
import type { TitleReader } from './naive';

/** A title reader over the server's `loadSessionLog`, or undefined while the decoder does not exist. */
export function projectTitleReader(): TitleReader | undefined {
  return undefined;
}
