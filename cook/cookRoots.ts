/**
 * Where a cook starts, with the chunk each root seeds:
 * - the project's `cookRoots` (chunk Main);
 * - each enabled plugin's `cookRoots` (the plugin's chunk);
 * - the legacy `GameStartupMap`, as one Main root, only when the project declares no cookRoots;
 * - every asset flagged Primary (the chunk of its mount).
 * A declared root may be a package path (`/Game/Maps/Main`) or an object path (`/Game/Maps/Main.Main`).
 */
import type { ProjectConfig } from '../config/index.js';
import type { AssetRecord } from '../src/registry/types.js';
import { AssetFlags } from '../src/format/packageTypes.js';
import { MAIN_CHUNK, type AssetLookup, type CookRoot } from './planCook.js';

export interface RootLookup extends AssetLookup {
  byPackagePath(packagePath: string): AssetRecord | undefined;
}

export interface ResolvedRoots {
  /** Sorted by GUID then chunk; one asset may seed several chunks. */
  roots: CookRoot[];
  /** Declared roots no mounted asset matches, as written in the config, with who declared them. */
  missing: Array<{ path: string; declaredBy: string }>;
}

type RootConfig = Pick<ProjectConfig, 'cookRoots' | 'gameStartupMap' | 'plugins' | 'mounts'>;

/** Resolve the cook roots of a project against the registry. Pure: no I/O. */
export function resolveCookRoots(registry: RootLookup, config: RootConfig): ResolvedRoots {
  const mountChunk = new Map(config.mounts.map((m) => [m.alias, m.chunk]));
  const declared: Array<{ path: string; chunk: string; reason: string }> = [];
  for (const p of config.cookRoots) declared.push({ path: p, chunk: MAIN_CHUNK, reason: 'cookRoots' });
  for (const pl of config.plugins) {
    if (!pl.enabled) continue;
    for (const p of pl.cookRoots) declared.push({ path: p, chunk: pl.chunk, reason: `plugin ${pl.name}` });
  }
  if (config.cookRoots.length === 0 && config.gameStartupMap) {
    declared.push({ path: config.gameStartupMap, chunk: MAIN_CHUNK, reason: 'GameStartupMap' });
  }
  const roots = new Map<string, CookRoot>();
  const missing: ResolvedRoots['missing'] = [];
  const add = (r: CookRoot) => roots.set(`${r.guid}\0${r.chunk}`, roots.get(`${r.guid}\0${r.chunk}`) ?? r);
  for (const d of declared) {
    const rec = findDeclared(registry, d.path);
    if (!rec || !mountChunk.has(rec.mount) || rec.kind !== 'package') missing.push({ path: d.path, declaredBy: d.reason });
    else add({ guid: rec.guid, packagePath: rec.packagePath, chunk: d.chunk, reason: d.reason });
  }
  for (const rec of registry.all()) {
    if (rec.kind === 'package' && rec.flags & AssetFlags.Primary && mountChunk.has(rec.mount)) {
      add({ guid: rec.guid, packagePath: rec.packagePath, chunk: mountChunk.get(rec.mount)!, reason: 'Primary' });
    }
  }
  const sorted = [...roots.values()].sort((a, b) => (a.guid < b.guid ? -1 : a.guid > b.guid ? 1 : a.chunk < b.chunk ? -1 : a.chunk > b.chunk ? 1 : 0));
  return { roots: sorted, missing };
}

function findDeclared(registry: RootLookup, p: string): AssetRecord | undefined {
  const direct = registry.byPackagePath(p);
  if (direct) return direct;
  // An object path: `/Game/Maps/Main.Main` names the asset Main in package /Game/Maps/Main.
  const slash = p.lastIndexOf('/');
  const dot = p.indexOf('.', slash);
  if (dot > 0) {
    const rec = registry.byPackagePath(p.slice(0, dot));
    if (rec && rec.name === p.slice(dot + 1)) return rec;
  }
  return undefined;
}
