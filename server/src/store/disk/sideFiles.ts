/**
 * Side files: files beside the session folders whose content changes listing facts, when the
 * format names some (`SideFileRules`): an agent's title index at the top of its home, its
 * project registry there and a marker in each project folder. They are read as values
 * (`../engine/homeSideFiles.ts`) at each scan of the root's own level, of a project folder, and
 * when a watch names one; what they said is this part's own state, handed to the format's
 * listing rule. A change in it makes the listing stale (`listingChanged` on the event stream).
 * Nothing of it is cached: it is read again at every start.
 */
import path from 'node:path';
import type { SideFacts, SideFileRules } from '../formats/adapter';
import { readProjectMarker, readProjectRegistry, readTitleIndex, type TitlesRead } from '../engine/homeSideFiles';
import { baseDepthOf, depthBelowBase, projectKeyOf } from '../layoutScopes';
import type { SessionLayout } from '../formats/adapter';
import type { FileIdentity } from '../transcriptFiles';
import type { StoreEvents } from './events';
import type { Attached, StoreState } from './state';

function sameMap(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  return a.size === b.size && [...a].every(([key, value]) => b.get(key) === value);
}

export class SideFiles {
  private titles: ReadonlyMap<string, string> = new Map();
  /** The title index as last read: its identity and the ids it was read for (its titles of other ids were not kept). */
  private titlesRead: TitlesRead = { identity: undefined, ids: new Set() };
  /** The project registry's cwds by project folder name, and its identity when read (undefined: none). */
  private registry: ReadonlyMap<string, string> = new Map();
  private registryIdentity: FileIdentity | undefined;
  /** Each project folder's marker (by the folder's key): the cwd it names, and its identity when read. */
  private readonly markers = new Map<string, { cwd: string | undefined; identity: FileIdentity }>();
  /** Reads run one at a time, in the order asked. */
  private queue: Promise<void> = Promise.resolve();
  private readonly baseDepth: number;

  constructor(
    private readonly state: StoreState,
    private readonly events: StoreEvents,
    private readonly layout: SessionLayout,
    private readonly rules: SideFileRules,
  ) {
    this.baseDepth = baseDepthOf(layout);
  }

  /** What the side files say, for the listing rule. */
  facts(): SideFacts {
    const { markers, registry, baseDepth } = this;
    return {
      titles: this.titles,
      projectCwd: (key) => {
        if (markers.size === 0 && registry.size === 0) return undefined;
        const project = projectKeyOf(key, baseDepth);
        return markers.get(project)?.cwd ?? registry.get(project.slice(project.lastIndexOf('/') + 1));
      },
    };
  }

  /** Whether a watch event on root-relative folder `dir` names a side file (then this part looks at it, not discovery). */
  concerns(dir: string, name: string | undefined): boolean {
    const { titleIndex, projectIndex } = this.rules;
    if (name === undefined) return false;
    if (dir === '') return name === titleIndex?.file || name === projectIndex?.file;
    return name === projectIndex?.marker && this.isProject(dir);
  }

  /** Reads again the side file a watch named (see {@link concerns}). */
  watched(attached: Attached, dir: string, name: string): Promise<void> {
    if (dir !== '') return this.project(attached, dir);
    return name === this.rules.projectIndex?.file ? this.root(attached, undefined) : this.titlesFor(attached);
  }

  /** The root's own level was scanned: the registry read again (if changed), the markers of project folders gone forgotten. */
  root(attached: Attached, projects: readonly string[] | undefined): Promise<void> {
    const { projectIndex } = this.rules;
    if (projectIndex === undefined) return Promise.resolve();
    return this.run(attached, async () => {
      let changed = false;
      if (projects !== undefined) {
        const present = new Set(projects);
        for (const [dir, marker] of [...this.markers]) {
          if (present.has(dir)) continue;
          this.markers.delete(dir);
          if (marker.cwd !== undefined) changed = true;
        }
      }
      const read = await readProjectRegistry(projectIndex, path.join(attached.realRoot, projectIndex.file), this.registryIdentity);
      if (read !== 'unchanged') {
        this.registryIdentity = read.identity;
        if (!sameMap(read.cwds, this.registry)) {
          this.registry = read.cwds;
          changed = true;
        }
      }
      return changed;
    });
  }

  /** A project folder was scanned: its marker read again (if changed). Another folder: nothing. */
  project(attached: Attached, dir: string): Promise<void> {
    const { projectIndex } = this.rules;
    if (projectIndex === undefined || !this.isProject(dir)) return Promise.resolve();
    return this.run(attached, async () => {
      const known = this.markers.get(dir);
      const read = await readProjectMarker(projectIndex, path.join(attached.realRoot, ...dir.split('/'), projectIndex.marker), known?.identity);
      if (read === 'unchanged') return false;
      if (read.identity === undefined) {
        this.markers.delete(dir);
        return known?.cwd !== undefined;
      }
      this.markers.set(dir, { cwd: read.cwd, identity: read.identity });
      return known?.cwd !== read.cwd;
    });
  }

  /** The title index read for the sessions indexed, when it changed or sessions it was not read for appeared. */
  titlesFor(attached: Attached): Promise<void> {
    const { titleIndex } = this.rules;
    if (titleIndex === undefined) return Promise.resolve();
    return this.run(attached, async () => {
      const ids = new Set<string>();
      for (const { summary } of attached.index.all()) if (summary?.headerProblem === undefined && summary?.header !== undefined) ids.add(summary.header.id);
      const read = await readTitleIndex(titleIndex, path.join(attached.realRoot, titleIndex.file), this.titlesRead, ids);
      if (read === 'unchanged') return false;
      this.titlesRead = { identity: read.identity, ids };
      if (sameMap(read.titles, this.titles)) return false;
      this.titles = read.titles;
      return true;
    });
  }

  private isProject(dir: string): boolean {
    return this.baseDepth === 0 ? !dir.includes('/') : depthBelowBase(dir, this.baseDepth, 1) === 1 && dir.startsWith(`${this.layout.base}/`);
  }

  /** Runs one read after the others; a change of what the side files say makes the listing stale. */
  private run(attached: Attached, read: () => Promise<boolean>): Promise<void> {
    const run = this.queue.then(async () => {
      if (!this.state.isCurrent(attached)) return;
      if ((await read()) && this.state.isCurrent(attached)) this.events.emit({ type: 'listingChanged', attached, removed: false });
    });
    this.queue = run.catch((error: unknown) => this.state.log(`reading a side file failed: ${error instanceof Error ? error.message : String(error)}`));
    return this.queue;
  }
}
