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
import type { AssetRecord } from '../src/registry/types.js';

export const MAIN_CHUNK = 'Main';

/** The part of the registry the cook reads. `AssetRegistry` satisfies it. */
export interface AssetLookup {
  get(guid: string): AssetRecord | undefined;
  all(): Iterable<AssetRecord>;
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
  const mounted = (r: AssetRecord | undefined): r is AssetRecord => r !== undefined && opts.mountChunks.has(r.mount);
  const followSoft = opts.soft === 'include';
  const missing = new Map<string, DependencyEdge>();
  const softExcluded: DependencyEdge[] = [];

  // Neighbours in GUID order. Not cached: each walk visits a record once, and a cache held a
  // sorted copy per record (a Map of a million arrays at a million assets).
  const byGuidType = (a: { guid: string; type: DependencyType }, b: { guid: string; type: DependencyType }) => cmp(a.guid, b.guid) || a.type - b.type;
  const edgesOf = (r: AssetRecord): ReadonlyArray<{ guid: string; type: DependencyType }> => {
    const d = r.dependencies;
    for (let i = 1; i < d.length; i++) if (byGuidType(d[i - 1], d[i]) > 0) return [...d].sort(byGuidType);
    return d;
  };

  /** Depth-first walk with an explicit stack (deep chains must not overflow). */
  const walk = (
    start: AssetRecord[],
    visit: (r: AssetRecord) => boolean,
    soft: boolean,
    onEdge?: (from: AssetRecord, d: { guid: string; type: DependencyType }, target: AssetRecord | undefined) => void,
  ) => {
    const stack = [...start].reverse();
    while (stack.length) {
      const r = stack.pop()!;
      if (!visit(r)) continue;
      const edges = edgesOf(r);
      for (let i = edges.length - 1; i >= 0; i--) {
        const d = edges[i];
        const skip = d.type === DependencyType.Soft && !soft;
        // One lookup per edge, shared with onEdge (a no-op cook plans every time).
        const target = skip && !onEdge ? undefined : lookup.get(d.guid);
        onEdge?.(r, d, target);
        if (!skip && mounted(target) && target.kind === 'package') stack.push(target);
      }
    }
  };

  const rootRecords = new Map<string, { record: AssetRecord; chunks: Set<string> }>();
  for (const root of roots) {
    const record = lookup.get(root.guid);
    if (!mounted(record) || record.kind !== 'package') continue;
    const entry = rootRecords.get(record.guid) ?? { record, chunks: new Set<string>() };
    entry.chunks.add(root.chunk);
    rootRecords.set(record.guid, entry);
  }
  const allRoots = [...rootRecords.values()].map((e) => e.record).sort((a, b) => cmp(a.guid, b.guid));

  // Hard-only reach, to tell what a soft edge alone brought in.
  const hardReach = new Set<string>();
  walk(allRoots, (r) => !hardReach.has(r.guid) && (hardReach.add(r.guid), true), false);

  // Chunk by chunk, Main first: an asset takes the first chunk that reaches it. Anything reachable
  // from an asset already placed was placed with it, so each walk stops at placed assets.
  const chunkOf = new Map<string, string>();
  const placed: AssetRecord[] = [];
  const rootChunks = [...new Set([...rootRecords.values()].flatMap((e) => [...e.chunks]))].sort(compareChunks);
  for (const chunk of rootChunks) {
    const starts = allRoots.filter((r) => rootRecords.get(r.guid)!.chunks.has(chunk));
    walk(
      starts,
      (r) => !chunkOf.has(r.guid) && (chunkOf.set(r.guid, chunk), placed.push(r), true),
      followSoft,
      (from, d, target) => {
        if (d.type === DependencyType.Soft && !followSoft) {
          if (!mounted(target) || target.kind !== 'package' || !hardReach.has(target.guid)) softExcluded.push({ referrer: from, guid: d.guid, type: d.type });
          return;
        }
        if (!mounted(target)) missing.set(`${from.guid}:${d.guid}`, { referrer: from, guid: d.guid, type: d.type });
      },
    );
  }

  const planned = (record: AssetRecord): PlannedAsset => {
    const guid = record.guid;
    return { record, chunk: chunkOf.get(guid)!, via: rootRecords.has(guid) ? 'root' : hardReach.has(guid) ? 'hard' : 'soft' };
  };
  // The registry lists its records by GUID already: taking the placed ones in that order is the
  // sort (of 60k packages at 100k assets) without sorting; any other order is sorted here.
  let packages: PlannedAsset[] = [];
  const textAssets: PlannedAsset[] = [];
  let prev = '';
  let inOrder = true;
  for (const r of lookup.all()) {
    if (r.guid < prev) inOrder = false;
    prev = r.guid;
    if (r.kind === 'text') {
      if (mounted(r)) textAssets.push({ record: r, chunk: opts.mountChunks.get(r.mount)!, via: 'mount' });
    } else if (inOrder && chunkOf.has(r.guid)) packages.push(planned(r));
  }
  if (!inOrder || packages.length !== chunkOf.size) packages = placed.map(planned).sort((a, b) => cmp(a.record.guid, b.record.guid));
  if (!inOrder) textAssets.sort((a, b) => cmp(a.record.guid, b.record.guid));
  let softOnly = 0;
  for (const p of packages) if (p.via === 'soft') softOnly++;

  const chunks = [...new Set([...packages, ...textAssets].map((p) => p.chunk))].sort(compareChunks);
  const byReferrer = (a: DependencyEdge, b: DependencyEdge) => cmp(a.referrer.virtualPath, b.referrer.virtualPath) || cmp(a.guid, b.guid);
  // An edge to a text asset is satisfied by the text asset shipping; it is not missing.
  const missingList = [...missing.values()].sort(byReferrer);
  const dedupSoft = new Map(softExcluded.map((e) => [`${e.referrer.guid}:${e.guid}`, e]));
  return { packages, textAssets, chunks, missing: missingList, softExcluded: [...dedupSoft.values()].sort(byReferrer), softOnly };
}
