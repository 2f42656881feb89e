/**
 * What to cook and where it ships: the dependency closure of the cook roots, and a chunk for every
 * asset in it. Works on registry records only (dependencies come from the import tables the
 * registry already read), so planning a 20k-asset cook reads no file.
 *
 * Rules:
 * - Hard edges are always followed; Soft edges when `soft` is "include". Soft edges are reported
 *   apart from hard ones: with "include", which assets only a soft edge brought in; with
 *   "exclude", which soft targets were left out.
 * - Cycles terminate (each asset is visited once). A dependency no mounted asset has is reported
 *   with its referrer; a record under a mount that is not enabled (a disabled plugin) counts as
 *   missing, since nothing would load it at run time.
 * - Chunks: an asset reached from a Main root ships in Main; otherwise in the chunk of the plugin
 *   roots that reach it, the alphabetically first when several do.
 * - Text assets (.rml/.rcss/.luau) are always cooked, in the chunk of their mount, reached or
 *   not: UI and scripts load them by path, which no import table records.
 * - Everything is visited and listed in GUID order, so the same content gives the same plan.
 */
import { DependencyType } from '../src/format/packageTypes.js';
import type { ScanChanges } from '../src/registry/AssetRegistry.js';
import type { AssetRecord } from '../src/registry/types.js';
import { sortedByString } from '../src/util/stringOrder.js';

export const MAIN_CHUNK = 'Main';

/** The part of the registry the cook reads. `AssetRegistry` satisfies it. */
export interface AssetLookup {
  get(guid: string): AssetRecord | undefined;
  all(): Iterable<AssetRecord>;
  /** Names the records exactly (AssetRegistry.contentIdentity); undefined when it cannot. */
  readonly contentIdentity?: string;
  /** How many assets `all()` would give, without building them (AssetRegistry.size); optional. */
  readonly size?: number;
  /** The asset whose file is `name` in folder `dir` (AssetRegistry.fileAsset); optional. */
  fileAsset?(dir: string, name: string): AssetRecord | undefined;
  /** What the last full scan changed since a named content (AssetRegistry.lastScanChanges); optional. */
  readonly lastScanChanges?: ScanChanges;
}

export interface CookRoot {
  guid: string;
  packagePath: string;
  chunk: string;
  /** Why it is a root: "cookRoots", "plugin Foliage", "GameStartupMap", "Primary"... */
  reason: string;
}

export interface PlannedAsset {
  record: AssetRecord;
  chunk: string;
  /** How it entered the cook: a root, a path of hard edges, only through a soft edge, or (text) its mount. */
  via: 'root' | 'hard' | 'soft' | 'mount';
}

export interface DependencyEdge {
  referrer: AssetRecord;
  guid: string;
  type: DependencyType;
}

export interface CookPlan {
  /** Packages to cook, sorted by GUID. */
  packages: PlannedAsset[];
  /** Text assets to ship, sorted by GUID. */
  textAssets: PlannedAsset[];
  /** Chunks that have content: Main first, then alphabetical. */
  chunks: string[];
  /** Followed dependencies whose target no mounted asset has, sorted by referrer path then GUID. */
  missing: DependencyEdge[];
  /** soft: "exclude" only: soft edges to assets the cook left out. */
  softExcluded: DependencyEdge[];
  /** soft: "include" only: number of assets only a soft edge brought in. */
  softOnly: number;
}

export interface PlanOptions {
  soft: 'include' | 'exclude';
  /** Enabled mount alias -> chunk. Records under other mounts are not cooked. */
  mountChunks: ReadonlyMap<string, string>;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Main first, then by name. */
export function compareChunks(a: string, b: string): number {
  if (a === b) return 0;
  if (a === MAIN_CHUNK) return -1;
  if (b === MAIN_CHUNK) return 1;
  return cmp(a, b);
}

/** Build the cook plan. Roots that are not in `lookup` are ignored (the caller reports them). */
export function planCook(lookup: AssetLookup, roots: readonly CookRoot[], opts: PlanOptions): CookPlan {
  const followSoft = opts.soft === 'include';
  const missing = new Map<string, DependencyEdge>();
  const softExcluded: DependencyEdge[] = [];

  // Records by number, in `all()`'s order, each resolved edge a number: a no-op cook plans every
  // time, and two walks that each asked `lookup.get` per edge (a lower-cased key, a Map, a thaw)
  // and sorted every unsorted dependency list again were most of the plan.
  const recs: AssetRecord[] = [];
  const idOf = new Map<string, number>();
  let listed = 0;
  let inOrder = true;
  let prev = '';
  for (const r of lookup.all()) {
    if (r.guid < prev) inOrder = false;
    prev = r.guid;
    if (!idOf.has(r.guid)) idOf.set(r.guid, recs.length);
    recs.push(r);
    listed++;
  }
  /** The number of what `lookup.get(guid)` answers, -1 for nothing (a lookup may know records `all()` did not list). */
  const resolve = (guid: string): number => {
    const i = idOf.get(guid);
    if (i !== undefined && recs[i].guid === guid) return i;
    const r = lookup.get(guid);
    if (!r) return -1;
    let j = idOf.get(r.guid);
    if (j === undefined || recs[j] !== r) {
      j = recs.length;
      recs.push(r);
      edgeStart.push(-1);
      edgeEnd.push(-1);
      hardReach.push(false);
      chunkOf.push(undefined);
    }
    return j;
  };
  const mounted = (i: number): boolean => i >= 0 && opts.mountChunks.has(recs[i].mount);
  const mountedPackage = (i: number): boolean => mounted(i) && recs[i].kind === 'package';

  // Each visited record's edges in GUID order (then type), resolved once for both walks: the
  // dependency objects and their targets in two flat lists, a record's run [edgeStart, edgeEnd).
  const edgeStart: number[] = new Array<number>(recs.length).fill(-1);
  const edgeEnd: number[] = new Array<number>(recs.length).fill(-1);
  /** Reached from a root by hard edges alone. */
  const hardReach: boolean[] = new Array<boolean>(recs.length).fill(false);
  /** The chunk an asset was placed in. */
  const chunkOf: Array<string | undefined> = new Array<string | undefined>(recs.length).fill(undefined);
  const edgeDep: Array<{ guid: string; type: DependencyType }> = [];
  const edgeTarget: number[] = [];
  const byGuidType = (a: { guid: string; type: DependencyType }, b: { guid: string; type: DependencyType }) => cmp(a.guid, b.guid) || a.type - b.type;
  const edgesOf = (i: number): void => {
    if (edgeStart[i] >= 0) return;
    let d: ReadonlyArray<{ guid: string; type: DependencyType }> = recs[i].dependencies;
    for (let k = 1; k < d.length; k++) {
      if (byGuidType(d[k - 1], d[k]) > 0) {
        d = [...d].sort(byGuidType);
        break;
      }
    }
    edgeStart[i] = edgeDep.length;
    for (const e of d) {
      edgeDep.push(e);
      edgeTarget.push(resolve(e.guid));
    }
    edgeEnd[i] = edgeDep.length;
  };

  /** Depth-first walk with an explicit stack (deep chains must not overflow). */
  const walk = (start: number[], visit: (i: number) => boolean, soft: boolean, onEdge?: (from: number, d: { guid: string; type: DependencyType }, target: number) => void) => {
    const stack = [...start].reverse();
    while (stack.length) {
      const i = stack.pop()!;
      if (!visit(i)) continue;
      edgesOf(i);
      for (let e = edgeEnd[i] - 1; e >= edgeStart[i]; e--) {
        const d = edgeDep[e];
        const t = edgeTarget[e];
        onEdge?.(i, d, t);
        if ((soft || d.type !== DependencyType.Soft) && mountedPackage(t)) stack.push(t);
      }
    }
  };

  const rootRecords = new Map<number, Set<string>>();
  for (const root of roots) {
    const i = resolve(root.guid);
    if (!mountedPackage(i)) continue;
    let chunks = rootRecords.get(i);
    if (!chunks) rootRecords.set(i, (chunks = new Set<string>()));
    chunks.add(root.chunk);
  }
  const allRoots = sortedByString([...rootRecords.keys()], (i) => recs[i].guid);

  // Hard-only reach, to tell what a soft edge alone brought in.
  walk(allRoots, (i) => !hardReach[i] && (hardReach[i] = true), false);

  // Chunk by chunk, Main first: an asset takes the first chunk that reaches it. Anything reachable
  // from an asset already placed was placed with it, so each walk stops at placed assets.
  const placed: number[] = [];
  const rootChunks = [...new Set([...rootRecords.values()].flatMap((c) => [...c]))].sort(compareChunks);
  for (const chunk of rootChunks) {
    const starts = allRoots.filter((i) => rootRecords.get(i)!.has(chunk));
    walk(
      starts,
      (i) => chunkOf[i] === undefined && ((chunkOf[i] = chunk), placed.push(i), true),
      followSoft,
      (from, d, target) => {
        if (d.type === DependencyType.Soft && !followSoft) {
          if (!mountedPackage(target) || !hardReach[target]) softExcluded.push({ referrer: recs[from], guid: d.guid, type: d.type });
          return;
        }
        if (!mounted(target)) missing.set(`${recs[from].guid}:${d.guid}`, { referrer: recs[from], guid: d.guid, type: d.type });
      },
    );
  }

  const planned = (i: number): PlannedAsset => ({ record: recs[i], chunk: chunkOf[i]!, via: rootRecords.has(i) ? 'root' : hardReach[i] ? 'hard' : 'soft' });
  // The registry lists its records by GUID already: taking the placed ones in that order is the
  // sort (of 60k packages at 100k assets) without sorting; any other order is sorted here.
  let packages: PlannedAsset[] = [];
  let textAssets: PlannedAsset[] = [];
  for (let i = 0; i < listed; i++) {
    const r = recs[i];
    if (r.kind === 'text') {
      if (mounted(i)) textAssets.push({ record: r, chunk: opts.mountChunks.get(r.mount)!, via: 'mount' });
    } else if (inOrder && chunkOf[i] !== undefined) packages.push(planned(i));
  }
  if (!inOrder || packages.length !== placed.length) packages = sortedByString(placed.map(planned), (p) => p.record.guid);
  if (!inOrder) textAssets = sortedByString(textAssets, (p) => p.record.guid);
  let softOnly = 0;
  for (const p of packages) if (p.via === 'soft') softOnly++;

  const chunks = [...new Set([...packages, ...textAssets].map((p) => p.chunk))].sort(compareChunks);
  const byReferrer = (a: DependencyEdge, b: DependencyEdge) => cmp(a.referrer.virtualPath, b.referrer.virtualPath) || cmp(a.guid, b.guid);
  // An edge to a text asset is satisfied by the text asset shipping; it is not missing.
  const missingList = [...missing.values()].sort(byReferrer);
  const dedupSoft = new Map(softExcluded.map((e) => [`${e.referrer.guid}:${e.guid}`, e]));
  return { packages, textAssets, chunks, missing: missingList, softExcluded: [...dedupSoft.values()].sort(byReferrer), softOnly };
}
