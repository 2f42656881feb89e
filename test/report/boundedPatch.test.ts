/**
 * A bounded report (more assets than assetLimit: only the top lists, roots and their chains are
 * listed) is patched after a cook that changed a few listed assets, and after the cook that drops
 * one from the list again, instead of being built whole. Which assets it lists depends on the
 * numbers, so each patched report is compared byte for byte with the report of the same cook
 * built whole. The limits are lowered (3 assets, top lists of 1) instead of cooking 20k assets.
 * So is the first no-op after a cold cook, which cooked too many assets to name them all.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cooker } from '../../cook/Cooker.js';
import type { CookReport } from '../../cook/report/index.js';
import { REPORT_KEY_FILE, writeCookReport, type ReportFiles } from '../../cook/report/writeCookReport.js';
import { hard, prop } from '../../src/format/packageBuilder.js';
import { initHash } from '../../src/util/hash.js';
import { asset, g, tempDir, writeFixture, writeProject } from '../cook/helpers.js';

let dir: string;
const now = new Date('2026-12-05T00:00:00Z');

// Main (root) -> A -> E, Main -> B (the largest), E -> B. With top lists of 1 the body lists
// Main, B (largest) and whatever cooked now (the slowest of those cooked) with its chain.
const files = (e: string, main = 'main') => ({
  'Content/Maps/Main.lasset': asset(g(1), 'Main', { className: '/Script/Engine.CWorld', imports: [hard(g(2)), hard(g(3))], properties: [prop.str('Label', main)] }),
  'Content/Props/A.lasset': asset(g(2), 'A', { imports: [hard(g(5))] }),
  'Content/Props/B.lasset': asset(g(3), 'B', { properties: [prop.str('Label', 'b'.repeat(4000))] }),
  'Content/Props/C.lasset': asset(g(4), 'C'),
  'Content/Props/E.lasset': asset(g(5), 'E', { imports: [hard(g(3)), hard(g(4))], properties: [prop.str('Label', e)] }),
});

beforeAll(async () => {
  await initHash();
  dir = await tempDir('lc-report-bounded-');
  await writeProject(dir, { name: 'Bounded', cookRoots: ['/Game/Maps/Main'], textures: { encoder: 'rgba8' } }, files('e'));
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

/** One cook, its report written as the cook writes it and then built whole (no record): both files' bytes. */
async function cookAndReport(projectDir = dir): Promise<{ files: ReportFiles; cooked: number; patched: { json: Buffer; html: Buffer }; whole: { json: Buffer; html: Buffer } }> {
  const cooker = await Cooker.open({ projectDir });
  try {
    const summary = await cooker.cook({ report: false });
    expect(summary.ok).toBe(true);
    const plan = cooker.plan();
    // The plan's facts do not change in these edits (no import changes): one name for them.
    const input = { config: cooker.config, summary, plan, roots: plan.roots, records: plan.records, planFacts: 'the same facts', now, assetLimit: 3, listTop: 1 };
    const written = await writeCookReport(input);
    const read = () => ({ json: fs.readFileSync(written.json), html: fs.readFileSync(written.html) });
    const patched = read();
    fs.rmSync(path.join(cooker.config.intermediatesDir, REPORT_KEY_FILE));
    const again = await writeCookReport(input);
    expect(again.patched || again.reused).toBeFalsy();
    return { files: written, cooked: summary.cooked, patched, whole: read() };
  } finally {
    cooker.close();
  }
}

const listed = (bytes: Buffer) => (JSON.parse(bytes.toString('utf8')) as CookReport).assets.map((a) => a.path.replace(/^\/Game\/\w+\/|\.lasset$/g, ''));

describe('a bounded report after a cook that changed a few assets', () => {
  it('is patched to the bytes of the report built whole, as assets join and leave its list', async () => {
    await cookAndReport();
    await cookAndReport();
    const noop = await cookAndReport();
    expect(noop.files.reused).toBe(true);
    expect(listed(noop.whole.json)).toEqual(['Main', 'B']);

    // A listed asset (the root) cooked: its numbers patched in, the list unchanged.
    await writeFixture(dir, 'Content/Maps/Main.lasset', files('e', 'main 2')['Content/Maps/Main.lasset']);
    const root = await cookAndReport();
    expect(root.cooked).toBe(1);
    expect(root.files.patched).toBe(true);
    expect(root.patched).toEqual(root.whole);
    const afterRoot = await cookAndReport();
    expect(afterRoot.files.patched).toBe(true);
    expect(afterRoot.patched).toEqual(afterRoot.whole);

    // E, listed by nothing, cooked: it joins the list with A (its chain), which the last body
    // cannot give (their referrers and chains are not in it): built whole.
    await writeFixture(dir, 'Content/Props/E.lasset', files('e 2', 'main 2')['Content/Props/E.lasset']);
    const joined = await cookAndReport();
    expect(joined.files.patched).toBeFalsy();
    expect(listed(joined.whole.json)).toEqual(['Main', 'A', 'B', 'E']);
    // E cooked again: listed then and now, patched. B's referrers name E by its index.
    await writeFixture(dir, 'Content/Props/E.lasset', files('e 3', 'main 2')['Content/Props/E.lasset']);
    const again = await cookAndReport();
    expect(again.files.patched).toBe(true);
    expect(again.patched).toEqual(again.whole);
    const b = (JSON.parse(again.whole.json.toString('utf8')) as CookReport).assets[2];
    expect(b.referrers).toEqual([0, 3]);
    // The no-op after it: E and A leave the list, the indexes are renumbered and B's referrer E
    // becomes its path, the folders keep E's new bytes.
    const left = await cookAndReport();
    expect(left.cooked).toBe(0);
    expect(left.files.patched).toBe(true);
    expect(listed(left.whole.json)).toEqual(['Main', 'B']);
    expect(left.patched).toEqual(left.whole);
    expect((JSON.parse(left.whole.json.toString('utf8')) as CookReport).assets[1].referrers).toEqual([0, '/Game/Props/E.lasset']);
    expect((await cookAndReport()).files.reused).toBe(true);
  });
});

/** Text that does not compress (an LCG's digits), so its asset is the largest cooked. */
const noise = (n: number) => {
  let x = 1;
  return Array.from({ length: n }, () => ((x = (x * 1103515245 + 12345) % 2 ** 31) >>> 16) % 10).join('');
};

describe('a bounded report after a cold cook', () => {
  it('is patched on the next no-op, though the cold cook cooked more assets than a patch names', async () => {
    // Main (root) imports 70 props, P1 the largest: more assets cooked than MAX_PATCHED (64).
    const cold = await tempDir('lc-report-bounded-cold-');
    try {
      const props = Array.from({ length: 70 }, (_, k) => k + 1);
      const project: Record<string, ReturnType<typeof asset>> = {
        'Content/Maps/Main.lasset': asset(g(1000), 'Main', { className: '/Script/Engine.CWorld', imports: props.map((k) => hard(g(k))) }),
      };
      for (const k of props) project[`Content/Props/P${k}.lasset`] = asset(g(k), `P${k}`, { imports: k > 1 ? [hard(g(1))] : [], properties: [prop.str('Label', k === 1 ? noise(8000) : `p${k}`)] });
      await writeProject(cold, { name: 'BoundedCold', cookRoots: ['/Game/Maps/Main'], textures: { encoder: 'rgba8' } }, project);
      const first = await cookAndReport(cold);
      expect(first.cooked).toBe(71);
      // Main, P1 (the largest) and the slowest cooked asset, unless that is one of them.
      expect(listed(first.whole.json).length).toBeGreaterThanOrEqual(2);

      const noop = await cookAndReport(cold);
      expect(noop.cooked).toBe(0);
      expect(noop.files.patched).toBe(true);
      expect(noop.patched).toEqual(noop.whole);
      const report = JSON.parse(noop.whole.json.toString('utf8')) as CookReport;
      expect(listed(noop.whole.json)).toEqual(['P1', 'Main']);
      // P1's referrers in the registry's (GUID) order, unlisted ones by path, cut at 50 of 70.
      expect(report.assets[0].referrers.slice(0, 2)).toEqual(['/Game/Props/P2.lasset', '/Game/Props/P3.lasset']);
      expect(report.assets[0].referrers).toHaveLength(50);
      expect(report.assets[0].referrerCount).toBe(70);
      expect(report.folders!.map((f) => [f.folder, f.assets])).toEqual([['/Game/Maps', 1], ['/Game/Props', 70]]);
      expect((await cookAndReport(cold)).files.reused).toBe(true);
    } finally {
      await fsp.rm(cold, { recursive: true, force: true });
    }
  });
});
