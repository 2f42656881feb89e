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
import { TEXTURE_CLASS } from '../textureClass.js';

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

function rankOf(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}

/**
 * Which share of `count` each item goes to, by the longest-processing-time rule: costliest first,
 * each to the share with the least cost so far (the lowest index on a tie), equal costs ordered by
 * a SHA-256 of the item's id, so the split depends only on the ids and costs, never on input order.
 * Returns the share index per id and each share's total cost.
 */
export function assignShares<T>(items: readonly T[], count: number, idOf: (x: T) => string, cost: (x: T) => number): { share: Map<string, number>; load: number[] } {
  const ranked = items.map((x) => ({ id: idOf(x), cost: cost(x) })).map((r) => ({ ...r, rank: rankOf(r.id) }));
  ranked.sort((x, y) => y.cost - x.cost || (x.rank < y.rank ? -1 : x.rank > y.rank ? 1 : 0));
  const load = new Array<number>(Math.max(1, count)).fill(0);
  const share = new Map<string, number>();
  for (const r of ranked) {
    let best = 0;
    for (let s = 1; s < load.length; s++) if (load[s] < load[best]) best = s;
    load[best] += r.cost;
    share.set(r.id, best);
  }
  return { share, load };
}

/** Share `spec.index` of `items` (in the input's order), split as {@link assignShares} does. Equal costs when `cost` is omitted. */
export function selectShare<T>(items: readonly T[], spec: ShardSpec, idOf: (x: T) => string, cost: (x: T) => number = () => 1): T[] {
  if (spec.count <= 1) return [...items];
  const { share } = assignShares(items, spec.count, idOf, cost);
  return items.filter((x) => share.get(idOf(x)) === spec.index);
}

/** Split `assets` into `count` shares; returns share `index`, in the input's order. */
export function selectShard(assets: readonly PlannedAsset[], spec: ShardSpec, cost: (a: PlannedAsset) => number = estimatedCost): PlannedAsset[] {
  return selectShare(assets, spec, (a) => a.record.guid, cost);
}
