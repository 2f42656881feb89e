/**
 * Why an asset ships, answered by the cook's own plan (`registry why`): whether the cook takes
 * it, the chunk it ships in, and the shortest chain to it from a root of that chunk, following
 * only the edges the cook follows (Soft ones only when `cook.soft` is "include", only mounted
 * packages). So the answer never shows a soft chain for an asset `cook.soft: "exclude"` leaves
 * out, nor a root of another chunk than the one the asset ships in.
 */
import type { ProjectConfig } from '../config/index.js';
import { findDependencyChain, resolveCookRoots, type ChainLink, type CookRoot, type RegistryView } from '../src/registry/cookRoots.js';
import { planCook } from './planCook.js';

export interface WhyShipped {
  /** The chunk the asset ships in, or null when the cook leaves it out. */
  chunk: string | null;
  /** The root of `chunk` the chain starts at; null for text assets (they ship by mount) and for assets left out. */
  root: CookRoot | null;
  chain: ChainLink[] | null;
  /** How the cook takes it: a root, through hard edges, only through a soft edge, or (text) by its mount. */
  via: 'root' | 'hard' | 'soft' | 'mount' | null;
  /** Left out, though a Soft reference leads to it (cook.soft is "exclude"). */
  softExcluded: boolean;
  roots: CookRoot[];
  /** Declared roots that match no asset. */
  missingRoots: string[];
}

/** Explain whether and where the cook ships the asset `guid`. */
export function whyShipped(registry: RegistryView, config: ProjectConfig, guid: string): WhyShipped {
  const { roots, missing } = resolveCookRoots(registry, config);
  const mountChunks = new Map(config.mounts.map((m) => [m.alias, m.chunk]));
  const plan = planCook(registry, roots, { soft: config.cook.soft, mountChunks });
  const planned = plan.packages.find((a) => a.record.guid === guid) ?? plan.textAssets.find((a) => a.record.guid === guid);
  const base = { roots, missingRoots: missing };
  if (!planned) {
    return { ...base, chunk: null, root: null, chain: null, via: null, softExcluded: plan.softExcluded.some((e) => e.guid === guid) };
  }
  if (planned.via === 'mount') return { ...base, chunk: planned.chunk, root: null, chain: null, via: 'mount', softExcluded: false };
  const chunkRoots = roots.filter((r) => r.chunk === planned.chunk).map((r) => r.guid);
  // Through the chunk's roots only: a chain through an asset placed in an earlier chunk cannot
  // exist, since the target would then have been placed there too.
  const chain = findDependencyChain(registry, chunkRoots, guid, {
    followSoft: config.cook.soft === 'include',
    follow: (r) => r.kind === 'package' && mountChunks.has(r.mount),
  });
  const root = chain ? (roots.find((r) => r.guid === chain[0].guid) ?? null) : null;
  return { ...base, chunk: planned.chunk, root, chain, via: planned.via, softExcluded: false };
}
