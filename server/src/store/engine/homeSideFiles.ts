/**
 * Reading a home's side files as values: the agent's title index (session id → title) and its
 * project registry and markers (project folder → cwd). Each reader takes the file, the identity
 * it had when last read and what is wanted, and returns what it read ('unchanged': the same
 * identity, nothing read); the engine keeps the results. Absent or unreadable: nothing from it.
 */
import { promises as fsp } from 'node:fs';
import { MAX_PROJECT_INDEX_BYTES, MAX_TITLE_INDEX_TEXT_BYTES, type ProjectIndex, type TitleIndex } from '../formats/adapter';
import { readRegularFile } from '../regularFile';
import { fileIdentity, sameIdentity, type FileIdentity } from '../transcriptFiles';
import { JsonlRecordLines, streamForeignFile } from './foreignRecords';

/** A title index as last read: its identity (undefined: none) and the ids its titles were kept for. */
export interface TitlesRead {
  readonly identity: FileIdentity | undefined;
  readonly ids: ReadonlySet<string>;
}

/**
 * The titles of the title index at `file` for the ids `wanted`; 'unchanged' when it has the
 * identity `before` read and that read kept the titles of every wanted id. Streamed in bounded
 * lines when the index folds records (see `TitleIndex`).
 */
export async function readTitleIndex(
  titleIndex: TitleIndex,
  file: string,
  before: TitlesRead,
  wanted: ReadonlySet<string>,
): Promise<'unchanged' | { identity: FileIdentity | undefined; titles: Map<string, string> }> {
  try {
    const identity = fileIdentity(await fsp.stat(file));
    if (sameIdentity(before.identity, identity) && [...wanted].every((id) => before.ids.has(id))) return 'unchanged';
    return { identity, titles: await readTitles(titleIndex, file, identity.size, (id) => wanted.has(id)) };
  } catch {
    // No index (never renamed, or removed): titles fall back to each session's own.
    return { identity: undefined, titles: new Map() };
  }
}

/** The titles of a title index for the ids `wanted` accepts. */
async function readTitles(titleIndex: TitleIndex, file: string, size: number, wanted: (id: string) => boolean): Promise<Map<string, string>> {
  if (titleIndex.newFold !== undefined) {
    const fold = titleIndex.newFold(wanted);
    await streamForeignFile(file, new JsonlRecordLines((line, value) => fold.add({ line, value })));
    return fold.titles();
  }
  if (size > MAX_TITLE_INDEX_TEXT_BYTES) return new Map();
  return new Map([...titleIndex.titles(await readRegularFile(file, { encoding: 'utf8' }))].filter(([id]) => wanted(id)));
}

/** The cwds of the project registry at `file`, by project folder name; 'unchanged' when it has the identity `before`. */
export async function readProjectRegistry(
  projectIndex: ProjectIndex,
  file: string,
  before: FileIdentity | undefined,
): Promise<'unchanged' | { identity: FileIdentity | undefined; cwds: Map<string, string> }> {
  try {
    const identity = fileIdentity(await fsp.stat(file));
    if (sameIdentity(before, identity)) return 'unchanged';
    const cwds = identity.size <= MAX_PROJECT_INDEX_BYTES ? projectIndex.cwds(await readRegularFile(file, { encoding: 'utf8' })) : new Map<string, string>();
    return { identity, cwds };
  } catch {
    // No registry: cwds come from the markers alone.
    return { identity: undefined, cwds: new Map() };
  }
}

/** The cwd the project marker at `file` names; 'unchanged' when it has the identity `before`. */
export async function readProjectMarker(
  projectIndex: ProjectIndex,
  file: string,
  before: FileIdentity | undefined,
): Promise<'unchanged' | { identity: FileIdentity | undefined; cwd: string | undefined }> {
  try {
    const identity = fileIdentity(await fsp.stat(file));
    if (sameIdentity(before, identity)) return 'unchanged';
    const cwd = identity.size <= MAX_PROJECT_INDEX_BYTES ? projectIndex.markerCwd(await readRegularFile(file, { encoding: 'utf8' })) : undefined;
    return { identity, cwd };
  } catch {
    // Gone meanwhile, or unreadable: no cwd from it (the next look tries again).
    return { identity: undefined, cwd: undefined };
  }
}
