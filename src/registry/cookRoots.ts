/**
 * What the cook starts from, and how an asset is reached from there. Shared by the cook (what to
 * cook, into which chunk) and `registry why`.
 */
import type { ProjectConfig } from '../../config/index.js';
import { MAIN_CHUNK } from '../../config/index.js';
import { isLuminaError } from '../errors.js';
import { AssetFlags, DependencyType } from '../format/packageTypes.js';
import type { AssetRecord } from './types.js';

/** The part of the registry these functions need (AssetRegistry satisfies it). */
export interface RegistryView {
  resolve(query: string): AssetRecord;
  get(guid: string): AssetRecord | undefined;
  all(): readonly AssetRecord[];
}

export type CookRootReason = 'project' | 'plugin' | 'startupMap' | 'primary';

export interface CookRoot {
  guid: string;
  packagePath: string;
  chunk: string;
  reason: CookRootReason;
}

export interface CookRoots {
  roots: CookRoot[];
  /** Declared roots (config.cookRoots, plugin cookRoots, GameStartupMap) that match no asset. */
  missing: string[];
}

/**
 * The cook roots, each asset once, in this order (the first reason wins): config.cookRoots
 * ('project', chunk Main); each enabled plugin's cookRoots ('plugin', the plugin's chunk);
 * GameStartupMap when config.cookRoots is empty ('startupMap', Main); every asset flagged Primary,
 * sorted by package path ('primary', the chunk of its mount: Main for /Game and /Engine).
 * Disabled plugins contribute nothing.
 */
export function resolveCookRoots(registry: RegistryView, config: ProjectConfig): CookRoots {
  const roots: CookRoot[] = [];
  const missing: string[] = [];
  const seen = new Set<string>();
  const add = (query: string, reason: CookRootReason, chunk: string) => {
    let rec: AssetRecord;
    try {
      rec = registry.resolve(query);
    } catch (e) {
      if (isLuminaError(e) && e.code === 'ASSET_NOT_FOUND') {
        missing.push(query);
        return;
      }
      throw e;
    }
    if (seen.has(rec.guid)) return;
    seen.add(rec.guid);
    roots.push({ guid: rec.guid, packagePath: rec.packagePath, chunk, reason });
  };
  for (const r of config.cookRoots) add(r, 'project', MAIN_CHUNK);
  for (const p of config.plugins) if (p.enabled) for (const r of p.cookRoots) add(r, 'plugin', p.chunk);
  if (config.cookRoots.length === 0 && config.gameStartupMap) add(config.gameStartupMap, 'startupMap', MAIN_CHUNK);
  const chunkOf = new Map(config.mounts.map((m) => [m.alias, m.chunk]));
  const primaries = registry
    .all()
    .filter((r) => (r.flags & AssetFlags.Primary) !== 0 && !seen.has(r.guid))
    .sort((a, b) => (a.packagePath < b.packagePath ? -1 : a.packagePath > b.packagePath ? 1 : 0));
  for (const r of primaries) {
    seen.add(r.guid);
    roots.push({ guid: r.guid, packagePath: r.packagePath, chunk: chunkOf.get(r.mount) ?? MAIN_CHUNK, reason: 'primary' });
  }
  return { roots, missing };
}

/**
 * Primary assets that share a name, each group sorted by package path (only mounted packages: a
 * disabled plugin's assets never load). The runtime finds Primary assets by name, so all but one
 * of a group would be unreachable there.
 */
export function primaryNameClashes(registry: Pick<RegistryView, 'all'>, config: Pick<ProjectConfig, 'mounts'>): Array<{ name: string; records: AssetRecord[] }> {
  const mounted = new Set(config.mounts.map((m) => m.alias));
  const byName = new Map<string, AssetRecord[]>();
  for (const r of registry.all()) {
    if (r.kind !== 'package' || (r.flags & AssetFlags.Primary) === 0 || !mounted.has(r.mount)) continue;
    const list = byName.get(r.name) ?? [];
    list.push(r);
    byName.set(r.name, list);
  }
  const byPath = (a: AssetRecord, b: AssetRecord) => (a.packagePath < b.packagePath ? -1 : a.packagePath > b.packagePath ? 1 : 0);
  return [...byName]
    .filter(([, records]) => records.length > 1)
    .map(([name, records]) => ({ name, records: records.sort(byPath) }))
    .sort((a, b) => byPath(a.records[0], b.records[0]));
}

export interface ChainLink {
  guid: string;
  /** The edge from the previous link; absent on the first (the root). */
  via?: DependencyType;
}

export interface ChainOptions {
  /** Follow Soft edges (default true); the cook follows them only when `cook.soft` is "include". */
  followSoft?: boolean;
  /** Only step onto assets this accepts (the cook: mounted packages); default every known asset. */
  follow?: (record: AssetRecord) => boolean;
}

/**
 * The shortest dependency chain from any of `roots` to `target`, root first, or null when
 * `target` is not reachable. Breadth-first from all roots at once, roots and imports taken in
 * order, so the answer is deterministic. Edges to GUIDs no asset has are not followed.
 */
export function findDependencyChain(registry: Pick<RegistryView, 'get'>, roots: readonly string[], target: string, opts: ChainOptions = {}): ChainLink[] | null {
  const followSoft = opts.followSoft ?? true;
  const accept = (guid: string): boolean => {
    const r = registry.get(guid);
    return r !== undefined && (opts.follow === undefined || opts.follow(r));
  };
  const prev = new Map<string, { from: string | null; via?: DependencyType }>();
  const queue: string[] = [];
  for (const r of roots) {
    if (prev.has(r) || !accept(r)) continue;
    prev.set(r, { from: null });
    queue.push(r);
  }
  for (let head = 0; head < queue.length; head++) {
    const g = queue[head];
    if (g === target) {
      const chain: ChainLink[] = [];
      for (let cur: string | null = g; cur !== null; ) {
        const p: { from: string | null; via?: DependencyType } = prev.get(cur)!;
        chain.push(p.via === undefined ? { guid: cur } : { guid: cur, via: p.via });
        cur = p.from;
      }
      return chain.reverse();
    }
    for (const d of registry.get(g)?.dependencies ?? []) {
      if (prev.has(d.guid) || (d.type === DependencyType.Soft && !followSoft) || !accept(d.guid)) continue;
      prev.set(d.guid, { from: g, via: d.type });
      queue.push(d.guid);
    }
  }
  return null;
}
