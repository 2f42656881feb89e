/**
 * What a bounded report lists must not depend on how it is computed: each top list is the first
 * `listTop` of its assets sorted by value (descending) then GUID order, ties included, and the
 * body is the same whether the records come in GUID order (paired by a merge) or not (looked up).
 */
import fsp from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cooker } from '../../cook/Cooker.js';
import type { AssetReport, CookSummary } from '../../cook/Cooker.js';
import { buildReportBody, topIndexes, type ReportInput } from '../../cook/report/buildCookReport.js';
import { hard, prop } from '../../src/format/packageBuilder.js';
import { asset, g, tempDir, writeProject } from '../cook/helpers.js';

/** The first `k` indexes `keep` accepts, sorted by `by` descending then index: what the report listed before the heap. */
function sortedTop(n: number, keep: (i: number) => boolean, by: (i: number) => number, k: number): number[] {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) if (keep(i)) ids.push(i);
  ids.sort((x, y) => by(y) - by(x) || x - y);
  return ids.slice(0, k);
}

/** A small seeded PRNG (mulberry32): the same cases every run. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('a top list', () => {
  it('keeps what a full sort keeps, ties to the lower index', () => {
    const next = rng(15);
    for (let round = 0; round < 200; round++) {
      const n = Math.floor(next() * 300);
      // Few distinct values: most of the list ties (as sizes and times of generated assets do).
      const distinct = 1 + Math.floor(next() * 6);
      const values = Array.from({ length: n }, () => Math.floor(next() * distinct) * (next() < 0.1 ? 0.5 : 1));
      const kept = Array.from({ length: n }, () => next() < 0.7);
      const keep = (i: number) => kept[i];
      const by = (i: number) => values[i];
      for (const k of [0, 1, 2, 7, Math.floor(n / 2), n, n + 3]) {
        const got = [...topIndexes(n, keep, by, k)].sort((a, b) => a - b);
        expect(got, `n ${n} k ${k}`).toEqual(sortedTop(n, keep, by, k).sort((a, b) => a - b));
      }
    }
  });
});

describe('a bounded report', () => {
  let dir: string;
  let input: ReportInput;

  beforeAll(async () => {
    dir = await tempDir('lc-report-select-');
    // Eight props of one size (the same properties, names of one length): a top list of 3 by size
    // takes three of the tied eight, the three first in GUID order.
    const props: Record<string, ReturnType<typeof asset>> = {};
    for (let k = 0; k < 8; k++) props[`Content/Props/P${k}.lasset`] = asset(g(0x20 + 7 - k), `P${k}`, { properties: [prop.str('Label', 'x'.repeat(3000))] });
    await writeProject(dir, { name: 'Select', cookRoots: ['/Game/Maps/Main'], textures: { encoder: 'rgba8' } }, {
      'Content/Maps/Main.lasset': asset(g(1), 'Main', { className: '/Script/Engine.CWorld', imports: Array.from({ length: 8 }, (_, k) => hard(g(0x20 + k))) }),
      ...props,
    });
    const cooker = await Cooker.open({ projectDir: dir });
    try {
      const summary = await cooker.cook({ report: false });
      expect(summary.ok).toBe(true);
      const plan = cooker.plan();
      // Every asset cooked now with one time: the slowest list ties too.
      const assetReports: AssetReport[] = summary.assetReports.map((a) => ({ ...a, ms: 5 }));
      input = { config: cooker.config, summary: { ...summary, assetReports } as CookSummary, plan, roots: plan.roots, records: [...plan.records], assetLimit: 3, listTop: 3 };
    } finally {
      cooker.close();
    }
  });
  afterAll(async () => {
    await fsp.rm(dir, { recursive: true, force: true });
  });

  it('lists the first tied assets in GUID order, as sorting them all did', () => {
    const all = input.summary.assetReports;
    const props = all.filter((a) => a.path.startsWith('/Game/Props/'));
    expect(new Set(props.map((a) => a.bytesOut)).size).toBe(1);
    const body = buildReportBody(input);
    // Main (the root and the largest), then the three props first by GUID; every list ties on the props.
    const by = (i: number) => all[i].bytesOut;
    const expected = new Set([...sortedTop(all.length, (i) => by(i) > 0, by, 3), ...sortedTop(all.length, () => true, (i) => all[i].ms, 3)].map((i) => all[i].path));
    expected.add('/Game/Maps/Main.lasset');
    expect(body.assets.map((a) => a.path).sort()).toEqual([...expected].sort());
    expect(body.assets.map((a) => a.guid)).toEqual([g(1), g(0x20), g(0x21), g(0x22)]);
  });

  it('is the same body whether the records come in GUID order or not', () => {
    const sorted = JSON.stringify(buildReportBody(input));
    const records = [...input.records];
    expect(records.map((r) => r.guid)).toEqual(records.map((r) => r.guid).sort());
    expect(JSON.stringify(buildReportBody({ ...input, records: [...records].reverse() }))).toBe(sorted);
    // Out of order from the middle on: the merge stops there and the rest is looked up.
    const half = records.length >> 1;
    expect(JSON.stringify(buildReportBody({ ...input, records: [...records.slice(0, half), ...records.slice(half).reverse()] }))).toBe(sorted);
    expect(JSON.stringify(buildReportBody({ ...input, assetLimit: 100 }))).toBe(JSON.stringify(buildReportBody({ ...input, assetLimit: 100, records: [...records].reverse() })));
  });
});
