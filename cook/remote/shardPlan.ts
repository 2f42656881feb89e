/**
 * Which packages a CI agent cooks in `cook --shard i/N`. Every agent computes the same plan from
 * the same content, and this split depends only on that plan (GUIDs, source sizes and classes),
 * never on the machine, its caches or the time, so the N shares are disjoint and cover the plan.
 *
 * Balance: the longest-processing-time rule over an estimated cost (a texture's encode dwarfs a
 * package's strip; bigger sources take longer), each package going to the share with the least
 * estimated work so far; a stable hash of the GUID orders equal costs, so ties never depend on
 * registry order.
 */
import { createHash } from 'node:crypto';
import { errors } from '../../src/errors.js';
import type { PlannedAsset } from '../planCook.js';
import { TEXTURE_CLASS } from '../textureExport.js';

/** Shard `index` (0-based) of `count`. */
export interface ShardSpec {
  index: number;
  count: number;
}

/** Parse `i/N` as the CLI takes it: 1-based `i` from 1 to N. */
export function parseShard(text: string): ShardSpec {
  const m = /^(\d+)\/(\d+)$/.exec(text);
  const i = m ? Number(m[1]) : NaN;
  const n = m ? Number(m[2]) : NaN;
  if (!m || n < 1 || n > 10_000 || i < 1 || i > n) throw errors.usage(`--shard "${text}" must be i/N with 1 <= i <= N`, 'e.g. --shard 2/3 on the second of three agents');
  return { index: i - 1, count: n };
}

/** Estimated cook cost of a package: fixed overhead plus its source size, textures weighted up. */
export function estimatedCost(a: PlannedAsset): number {
  const size = a.record.size;
  return 4096 + (a.record.className === TEXTURE_CLASS ? 16 * size : size);
}

function guidRank(guid: string): string {
  return createHash('sha256').update(guid).digest('hex');
}

/** Split `assets` into `count` shares; returns share `index`, in the input's order. */
export function selectShard(assets: readonly PlannedAsset[], spec: ShardSpec, cost: (a: PlannedAsset) => number = estimatedCost): PlannedAsset[] {
  if (spec.count <= 1) return [...assets];
  const ranked = assets.map((a) => ({ a, cost: cost(a), rank: guidRank(a.record.guid) }));
  ranked.sort((x, y) => y.cost - x.cost || (x.rank < y.rank ? -1 : x.rank > y.rank ? 1 : 0));
  const load = new Array<number>(spec.count).fill(0);
  const mine = new Set<string>();
  for (const r of ranked) {
    let best = 0;
    for (let s = 1; s < spec.count; s++) if (load[s] < load[best]) best = s;
    load[best] += r.cost;
    if (best === spec.index) mine.add(r.a.record.guid);
  }
  return assets.filter((a) => mine.has(a.record.guid));
}
