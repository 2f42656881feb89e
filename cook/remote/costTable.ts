/**
 * Recorded cook costs for balancing `cook --shard i/N`.
 *
 * Every shard must compute the SAME split, or packages are cooked twice or by nobody. A split
 * balanced by times measured on each agent, or read from the remote cache while other shards are
 * publishing into it, differs between agents (and a timeout on one agent changes only its split).
 * So the costs come from a file: every full cook writes `Saved/CookCosts.json` (each shipped
 * package's cook time in ms as the cook cache recorded it: measured where it was cooked, carried
 * through the remote cache in the action entry's `lumina.cookMs` when it was fetched), and the
 * shards read a copy that is the same bytes on every agent: `CookCosts.json` committed at the
 * project root, or the file `--shard-costs` names (e.g. the last assembly's artifact). Times are
 * not reproducible across machines, and need not be: the file is an input, every agent reads the
 * same one. The shard summary reports the table's SHA-256 and a hash of the whole split, so CI can
 * check that its agents agree.
 *
 * A package the table does not know (new since it was written) costs the size estimate, scaled to
 * milliseconds by the packages the table does know, so both kinds weigh alike.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { errors } from '../../src/errors.js';
import type { PlannedAsset } from '../planCook.js';
import { writeFileAtomicSync } from '../../src/util/atomicWrite.js';
import { assignShares, estimatedCost, type ShardSpec } from './shardPlan.js';

export const COST_TABLE_FILE = 'CookCosts.json';
const VERSION = 1;

export interface CostTable {
  /** Cook ms per package GUID. */
  costs: Map<string, number>;
  /** SHA-256 of the file's bytes. */
  sha256: string;
  file: string;
}

/** The file's text: GUIDs sorted, one per line, so a committed table diffs well. */
export function encodeCostTable(costs: ReadonlyMap<string, number>): string {
  const guids = [...costs.keys()].sort();
  const lines = guids.map((g) => `    ${JSON.stringify(g)}: ${Math.max(0, Math.round(costs.get(g)!))}`);
  return `${COSTS_HEAD}${lines.join(',\n')}${COSTS_TAIL}`;
}

const COSTS_HEAD = `{\n  "version": ${VERSION},\n  "unit": "ms",\n  "costs": {\n`;
const COSTS_TAIL = '\n  }\n}\n';

/**
 * `old` (a table as encodeCostTable writes it) with the costs of `changed` set: encodeCostTable's
 * text for the same packages when `old` is theirs. A cook that re-cooked a few packages of the
 * same shipped set changes only their lines (at 20k assets the whole table was ~12k cache lookups,
 * a sort and an encode per one-file change). Undefined when `old` is not in that form or lacks a
 * line of one of them.
 */
export function patchCostTable(old: string, changed: ReadonlyMap<string, number>): string | undefined {
  if (!old.startsWith(COSTS_HEAD) || !old.endsWith(COSTS_TAIL)) return undefined;
  const at: Array<[number, number, string]> = [];
  for (const [guid, ms] of changed) {
    const key = `\n    ${JSON.stringify(guid)}: `;
    // The first line follows the head's own newline.
    const found = old.indexOf(key, COSTS_HEAD.length - 1);
    if (found < 0 || old.indexOf(key, found + key.length) >= 0) return undefined;
    const from = found + key.length;
    let to = from;
    while (to < old.length && old.charCodeAt(to) >= 0x30 && old.charCodeAt(to) <= 0x39) to++;
    if (to === from || (old[to] !== ',' && old[to] !== '\n')) return undefined;
    at.push([from, to, String(Math.max(0, Math.round(ms)))]);
  }
  at.sort((a, b) => a[0] - b[0]);
  let out = '';
  let copied = 0;
  for (const [from, to, text] of at) {
    out += old.slice(copied, from) + text;
    copied = to;
  }
  return out + old.slice(copied);
}

/** Write the table atomically. */
export function writeCostTable(file: string, costs: ReadonlyMap<string, number>): void {
  writeFileAtomicSync(file, Buffer.from(encodeCostTable(costs), 'utf8'));
}

/** Read a table; a file that is not one is a usage error naming it (a shard must not guess). */
export function readCostTable(file: string): CostTable {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (e) {
    throw errors.usage(`--shard-costs ${file} cannot be read: ${(e as Error).message}`, 'pass the CookCosts.json a full cook wrote in Saved/');
  }
  let obj: unknown;
  try {
    obj = JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    throw errors.usage(`${file} is not JSON: ${(e as Error).message}`, 'pass the CookCosts.json a full cook wrote in Saved/');
  }
  const o = obj as { version?: unknown; costs?: unknown };
  if (!o || typeof o !== 'object' || o.version !== VERSION || !o.costs || typeof o.costs !== 'object' || Array.isArray(o.costs)) {
    throw errors.usage(`${file} is not a version ${VERSION} cook cost table ({ "version": 1, "unit": "ms", "costs": { GUID: ms } })`);
  }
  const costs = new Map<string, number>();
  for (const [guid, ms] of Object.entries(o.costs as Record<string, unknown>)) {
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) throw errors.usage(`${file}: the cost of ${guid} is ${JSON.stringify(ms)}, not a number of ms`);
    costs.set(guid, ms);
  }
  return { costs, sha256: createHash('sha256').update(bytes).digest('hex'), file };
}

/**
 * The cost of each planned package for the split: the recorded ms (at least 1, so a package is
 * never free), else the size estimate scaled by the known packages' ms per estimated unit.
 * Integers (µs), so the split's sums are exact. Without a table: the estimate alone.
 */
export function shardCost(assets: readonly PlannedAsset[], table: CostTable | undefined): (a: PlannedAsset) => number {
  if (!table) return estimatedCost;
  let knownMs = 0;
  let knownEstimate = 0;
  for (const a of assets) {
    const ms = table.costs.get(a.record.guid);
    if (ms === undefined) continue;
    knownMs += Math.max(1, ms);
    knownEstimate += estimatedCost(a);
  }
  const msPerUnit = knownEstimate > 0 ? knownMs / knownEstimate : 1;
  return (a) => {
    const ms = table.costs.get(a.record.guid);
    return Math.round(1000 * (ms !== undefined ? Math.max(1, ms) : estimatedCost(a) * msPerUnit));
  };
}

/** One shard's share of the packages, and what every agent can compare to see they agree. */
export interface ShardSplit {
  mine: PlannedAsset[];
  /** SHA-256 of the table's bytes, or "none" (balanced by the size estimate alone). */
  costTable: string;
  /** Packages of the plan whose cost the table recorded. */
  recorded: number;
  /** SHA-256 of every package's share ("<guid> <share>" lines, sorted): the same on every agent. */
  assignment: string;
  /** Each share's total cost, in the split's units (µs with a table). */
  load: number[];
}

/** Split the plan's packages for `spec` with the table's costs (see the module comment). */
export function splitForShard(packages: readonly PlannedAsset[], spec: ShardSpec, table: CostTable | undefined): ShardSplit {
  const { share, load } = assignShares(packages, spec.count, (a) => a.record.guid, shardCost(packages, table));
  const lines = [...share].map(([guid, s]) => `${guid} ${s}`).sort();
  return {
    mine: packages.filter((a) => share.get(a.record.guid) === spec.index),
    costTable: table?.sha256 ?? 'none',
    recorded: table ? packages.filter((a) => table.costs.has(a.record.guid)).length : 0,
    assignment: createHash('sha256').update(lines.join('\n')).digest('hex'),
    load,
  };
}

/** The table a shard uses: `file` when given, else `<projectDir>/CookCosts.json` when there, else none. */
export function shardCostTable(projectDir: string, file?: string): CostTable | undefined {
  if (file !== undefined) return readCostTable(path.resolve(projectDir, file));
  const committed = path.join(projectDir, COST_TABLE_FILE);
  return fs.existsSync(committed) ? readCostTable(committed) : undefined;
}
