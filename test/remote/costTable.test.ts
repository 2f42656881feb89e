/**
 * Recorded cook costs for `cook --shard`: the table's file format, and that a split balanced by
 * recorded costs finishes sooner than one balanced by the size estimate when the estimate is wrong
 * (the slowest share decides when CI is done). The cross-process agreement is in shardedCook.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeCostTable, readCostTable, shardCost, writeCostTable, type CostTable } from '../../cook/remote/costTable.js';
import { assignShares, estimatedCost } from '../../cook/remote/shardPlan.js';
import type { PlannedAsset } from '../../cook/planCook.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lumina-costs-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const TEXTURE = '/Script/Engine.CTexture';
const asset = (n: number, size: number, className = '/Script/Engine.CStaticMesh'): PlannedAsset =>
  ({ record: { guid: n.toString(16).padStart(32, '0'), size, className }, chunk: 'Main', via: 'hard' }) as unknown as PlannedAsset;

/**
 * 300 packages whose real cook times the size estimate gets wrong: every 7th mesh is small but
 * slow (a heavy strip), textures are cheaper than the estimate's 16x weight says.
 */
const assets = Array.from({ length: 300 }, (_, i) => asset(i, 2000 + ((i * 7919) % 60_000), i % 10 === 0 ? TEXTURE : undefined));
const realMs = (a: PlannedAsset): number => {
  const i = parseInt(a.record.guid, 16);
  if (a.record.className === TEXTURE) return 20 + a.record.size / 2000;
  return i % 7 === 0 ? 400 : 2 + a.record.size / 10_000;
};
const table = (file: string, only: (a: PlannedAsset) => boolean = () => true): CostTable => {
  writeCostTable(file, new Map(assets.filter(only).map((a) => [a.record.guid, realMs(a)])));
  return readCostTable(file);
};
/** When the slowest of 3 shares finishes, in real ms, for a split made with `cost`. */
const makespan = (cost: (a: PlannedAsset) => number): number => {
  const { share } = assignShares(assets, 3, (a) => a.record.guid, cost);
  const load = [0, 0, 0];
  for (const a of assets) load[share.get(a.record.guid)!] += Math.round(realMs(a));
  return Math.max(...load);
};

describe('recorded cook costs', () => {
  it('a split by recorded costs finishes sooner than one by the size estimate', () => {
    const total = assets.reduce((t, a) => t + Math.round(realMs(a)), 0);
    const estimated = makespan(shardCost(assets, undefined));
    const recorded = makespan(shardCost(assets, table(path.join(dir, 'all.json'))));
    // Recorded: within one package of a perfect third. The estimate is far off it.
    expect(recorded).toBeLessThanOrEqual(Math.ceil(total / 3) + 400);
    expect(recorded).toBeLessThan(estimated);
    expect(estimated - total / 3).toBeGreaterThan(4 * (recorded - total / 3));
  });

  it('packages the table does not know cost the estimate, scaled to the known ms', () => {
    const t = table(path.join(dir, 'half.json'), (a) => parseInt(a.record.guid, 16) % 2 === 0);
    const cost = shardCost(assets, t);
    const known = assets.filter((a) => t.costs.has(a.record.guid));
    const scale = known.reduce((s, a) => s + Math.max(1, Math.round(realMs(a))), 0) / known.reduce((s, a) => s + estimatedCost(a), 0);
    expect(cost(assets[0])).toBe(Math.round(1000 * Math.max(1, Math.round(realMs(assets[0])))));
    expect(cost(assets[1])).toBe(Math.round(1000 * estimatedCost(assets[1]) * scale));
  });

  it('the file is sorted JSON that reads back; anything else is a usage error naming it', () => {
    const text = encodeCostTable(new Map([['b'.repeat(32), 12.4], ['a'.repeat(32), 3]]));
    expect(text).toBe(`{\n  "version": 1,\n  "unit": "ms",\n  "costs": {\n    "${'a'.repeat(32)}": 3,\n    "${'b'.repeat(32)}": 12\n  }\n}\n`);
    const file = path.join(dir, 'ok.json');
    fs.writeFileSync(file, text);
    expect([...readCostTable(file).costs]).toEqual([['a'.repeat(32), 3], ['b'.repeat(32), 12]]);
    const bad = path.join(dir, 'bad.json');
    fs.writeFileSync(bad, '{"version": 1, "costs": {"x": "slow"}}');
    expect(() => readCostTable(bad)).toThrow(/bad\.json: the cost of x is "slow", not a number of ms/);
    fs.writeFileSync(bad, '[1, 2]');
    expect(() => readCostTable(bad)).toThrow(/bad\.json is not a version 1 cook cost table/);
    expect(() => readCostTable(path.join(dir, 'none.json'))).toThrow(/none\.json cannot be read/);
  });
});
