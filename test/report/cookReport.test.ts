/**
 * The cook report: cook-report.json says what the cook did (chunks, sizes, reasons, chains,
 * referrers, soft and missing references), and cook.html shows it in a real browser (Chromium
 * through playwright-core) from a file:// URL with no network: the treemap has every chunk and
 * zooms, an asset opens its chain and referrers.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cookProject } from '../../cook/cookProject.js';
import { buildCookReport, renderReportHtml, type CookReport, type ReportAsset } from '../../cook/report/index.js';
import { Cooker } from '../../cook/Cooker.js';
import { hard, prop, soft } from '../../src/format/packageBuilder.js';
import { encodePng } from '../../samples/generate/png.js';
import { asset, g, tempDir, writeFixture, writeProject } from '../cook/helpers.js';
import { openBrowser, type TestBrowser } from '../helpers/browser.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await fsp.rm(d, { recursive: true, force: true });
});

/** Main -> Rock -> Stone (hard), Main ~> Sky (soft) ~> missing, Main -> Shared (a plugin asset); plugin root Oak -> Leaf, Oak -> Rock. */
async function project(config: Record<string, unknown> = {}): Promise<string> {
  const dir = await tempDir('lumina-report-');
  dirs.push(dir);
  const png = encodePng({ width: 8, height: 8, color: 'rgb', data: new Uint8Array(192).fill(90) });
  await writeProject(
    dir,
    { name: 'ReportTest', cookRoots: ['/Game/Maps/Main'], plugins: [{ name: 'Foliage', path: 'Plugins/Foliage', cookRoots: ['/Foliage/Trees/Oak'] }], textures: { encoder: 'rgba8' }, ...config },
    {
      'Content/Maps/Main.lasset': asset(g(1), 'Main', { className: '/Script/Engine.CWorld', imports: [hard(g(2)), soft(g(3)), hard(g(0x30))] }),
      'Content/Props/Rock.lasset': asset(g(2), 'Rock', { imports: [hard(g(5))] }),
      'Content/Env/Sky.lasset': asset(g(3), 'Sky', { imports: [soft(g(0x99))] }),
      'Content/Unused/Junk.lasset': asset(g(4), 'Junk', { imports: [hard(g(2))] }),
      'Content/Tex/Stone.lasset': { exports: [{ guid: g(5), name: 'Stone', className: '/Script/Engine.CTexture', properties: [prop.bool('SRGB', true), prop.bytes('SourceData', png)] }] },
      'Content/UI/Menu.rml': { text: '<rml><body>menu</body></rml>', guid: g(0x40) },
      'Plugins/Foliage/Content/Trees/Oak.lasset': asset(g(0x31), 'Oak', { imports: [hard(g(0x32)), hard(g(2))] }),
      'Plugins/Foliage/Content/Trees/Shared.lasset': asset(g(0x30), 'Shared'),
      'Plugins/Foliage/Content/Trees/Leaf.lasset': asset(g(0x32), 'Leaf'),
    },
  );
  return dir;
}

const readReport = (dir: string): CookReport => JSON.parse(fs.readFileSync(path.join(dir, 'Saved', 'Reports', 'cook-report.json'), 'utf8'));
const byPath = (r: CookReport, p: string) => {
  const i = r.assets.findIndex((a) => a.path === p);
  expect(i, p).toBeGreaterThanOrEqual(0);
  return i;
};
/** The chain as `registry why` prints it: root first, each link with the edge that reached it. */
const chain = (r: CookReport, p: string): string[] => {
  const out: string[] = [];
  for (let i: number | undefined = byPath(r, p); i !== undefined; i = r.assets[i].from) out.unshift(r.assets[i].from === undefined ? `${r.assets[i].path} (root: ${r.assets[i].root})` : `${r.assets[i].path} (${r.assets[i].fromVia})`);
  return out;
};

/** The project's report built twice from one cook: every asset listed, and bounded (a limit of 3, top lists of 1). */
async function boundedReports(): Promise<{ dir: string; full: CookReport; bounded: CookReport }> {
  const dir = await project();
  const cooker = await Cooker.open({ projectDir: dir });
  try {
    const summary = await cooker.cook({ report: false });
    const plan = cooker.plan();
    const input = { config: cooker.config, summary, plan, roots: plan.roots, records: cooker.registry.all() };
    return { dir, full: buildCookReport(input), bounded: buildCookReport({ ...input, assetLimit: 3, listTop: 1 }) };
  } finally {
    cooker.close();
  }
}

describe('cook report data', () => {
  it('stays bounded for a large cook: lists the top assets with their whole chains, and sizes every folder', async () => {
    const { full, bounded: r } = await boundedReports();
    expect(full.listed).toBeUndefined();
    expect(full.folders).toBeUndefined();
    expect(r.listed).toEqual({ assets: r.assets.length, of: 8, referrersPerAsset: 50 });
    expect(r.assets.length).toBeLessThan(8);
    // Chunk totals and the folders cover every asset, listed or not.
    expect(r.chunks).toEqual(full.chunks);
    for (const c of r.chunks) {
      const mine = r.folders!.filter((f) => f.chunk === c.name);
      expect(mine.reduce((n, f) => n + f.assets, 0)).toBe(c.assets);
      expect(mine.reduce((n, f) => n + f.bytesOut, 0)).toBe(c.bytesOut);
    }
    expect(r.folders!.find((f) => f.folder === '/Foliage/Trees' && f.chunk === 'Main')).toEqual({ chunk: 'Main', folder: '/Foliage/Trees', assets: 1, bytesOut: full.assets[byPath(full, '/Foliage/Trees/Shared.lasset')].bytesOut });
    // The largest asset, the soft-only one and the roots are listed, each with its whole chain.
    const largest = [...full.assets].sort((a, b) => b.bytesOut - a.bytesOut)[0].path;
    for (const p of [largest, '/Game/Env/Sky.lasset', '/Game/Maps/Main.lasset', '/Foliage/Trees/Oak.lasset']) expect(chain(r, p)).toEqual(chain(full, p));
    for (const a of r.assets) {
      expect(chain(r, a.path)).toEqual(chain(full, a.path));
      const f = full.assets[byPath(full, a.path)];
      expect({ ...a, referrers: [] }).toEqual({ ...f, from: a.from, referrers: [] });
      // Referrers not listed are named by path: a cooked one by its virtual path, an uncooked one by its package path.
      expect(a.referrers.map((x) => (typeof x === 'number' ? r.assets[x].path : x)).sort()).toEqual(
        f.referrers.map((x) => (typeof x === 'number' ? full.assets[x].path : x)).sort(),
      );
    }
  });

  it('lists every shipped asset with its chunk, size, reason, chain from a root of its chunk, and referrers', async () => {
    const dir = await project();
    const s = await cookProject({ projectDir: dir });
    expect(s.ok).toBe(true);
    expect(s.report).toEqual({ html: path.join(dir, 'Saved', 'Reports', 'cook.html'), json: path.join(dir, 'Saved', 'Reports', 'cook-report.json') });
    const r = readReport(dir);
    expect(r).toMatchObject({ version: 1, project: 'ReportTest', ok: true, totals: { assets: 8, cooked: 8, cached: 0 }, recooked: { new: 8 } });
    expect(r.chunks.map((c) => [c.name, c.assets, c.pak?.file])).toEqual([
      ['Main', 6, 'Saved/Paks/Main.pak'],
      ['Foliage', 2, 'Saved/Paks/Foliage.pak'],
    ]);
    for (const c of r.chunks) expect(c.bytesOut).toBe(r.assets.filter((a) => a.chunk === c.name).reduce((n, a) => n + a.bytesOut, 0));
    expect(r.assets.map((a) => a.path).sort()).toEqual(
      ['/Foliage/Trees/Leaf.lasset', '/Foliage/Trees/Oak.lasset', '/Foliage/Trees/Shared.lasset', '/Game/Env/Sky.lasset', '/Game/Maps/Main.lasset', '/Game/Props/Rock.lasset', '/Game/Tex/Stone.lasset', '/Game/UI/Menu.rml'].sort(),
    );
    for (const a of r.assets) {
      expect(a).toMatchObject({ status: 'cooked', reason: 'new' });
      expect(a.bytesOut).toBe(fs.statSync(path.join(dir, 'Saved', 'Cooked', ...a.path.split('/').filter(Boolean))).size);
      expect(a.ms).toBeGreaterThan(0);
    }
    expect(r.phases.map((p) => p.phase)).toEqual(['scan', 'plan', 'cook', 'outputs', 'paks']);

    expect(chain(r, '/Game/Tex/Stone.lasset')).toEqual(['/Game/Maps/Main.lasset (root: project)', '/Game/Props/Rock.lasset (Hard)', '/Game/Tex/Stone.lasset (Hard)']);
    expect(chain(r, '/Game/Env/Sky.lasset')).toEqual(['/Game/Maps/Main.lasset (root: project)', '/Game/Env/Sky.lasset (Soft)']);
    // Shared lives in the plugin but Main reaches it, so it ships in Main, reached from Main's root.
    expect(r.assets[byPath(r, '/Foliage/Trees/Shared.lasset')].chunk).toBe('Main');
    expect(chain(r, '/Foliage/Trees/Shared.lasset')).toEqual(['/Game/Maps/Main.lasset (root: project)', '/Foliage/Trees/Shared.lasset (Hard)']);
    expect(chain(r, '/Foliage/Trees/Leaf.lasset')).toEqual(['/Foliage/Trees/Oak.lasset (root: plugin)', '/Foliage/Trees/Leaf.lasset (Hard)']);
    expect(r.assets[byPath(r, '/Game/UI/Menu.rml')]).toMatchObject({ via: 'mount', chunk: 'Main' });
    expect(r.assets[byPath(r, '/Game/UI/Menu.rml')].from).toBeUndefined();

    // Referrers: cooked ones by index, the uncooked Junk by its package path.
    const rock = r.assets[byPath(r, '/Game/Props/Rock.lasset')];
    expect(rock.referrers.map((x) => (typeof x === 'number' ? r.assets[x].path : x)).sort()).toEqual(['/Foliage/Trees/Oak.lasset', '/Game/Maps/Main.lasset', '/Game/Unused/Junk']);
    expect(r.assets[byPath(r, '/Game/Env/Sky.lasset')].via).toBe('soft');
    expect(r.missing).toEqual([{ referrer: '/Game/Env/Sky', target: g(0x99), guid: g(0x99), type: 'Soft' }]);
    expect(r.softExcluded).toEqual([]);
    expect(r.problems.map((p) => p.code)).toEqual(['DEPENDENCY_MISSING']);
  });

  it('says why each asset re-cooked, and lists soft references left out', async () => {
    const dir = await project({ cook: { soft: 'exclude' } });
    await cookProject({ projectDir: dir });
    await writeFixture(dir, 'Content/Props/Rock.lasset', asset(g(2), 'Rock', { imports: [hard(g(5))], properties: [prop.str('Label', 'edited')] }));
    const s = await cookProject({ projectDir: dir });
    expect(s.cooked).toBe(1);
    const r = readReport(dir);
    expect(r.recooked).toEqual({ content: 1 });
    expect(r.assets.filter((a) => a.status !== 'cached').map((a) => [a.path, a.reason])).toEqual([['/Game/Props/Rock.lasset', 'content']]);
    expect(r.assets.filter((a) => a.status === 'cached').every((a) => a.reason === undefined)).toBe(true);
    expect(r.softExcluded).toEqual([{ referrer: '/Game/Maps/Main', target: '/Game/Env/Sky', guid: g(3), type: 'Soft' }]);
    expect(r.assets.some((a) => a.path === '/Game/Env/Sky.lasset')).toBe(false);
  });

  it('writes a report for a failed cook too, and none with report: false', async () => {
    const dir = await project();
    await fsp.writeFile(path.join(dir, 'Content', 'Props', 'Rock.lasset'), Buffer.concat([fs.readFileSync(path.join(dir, 'Content', 'Env', 'Sky.lasset')).subarray(0, 40)]));
    const s = await cookProject({ projectDir: dir, ci: true });
    expect(s.ok).toBe(false);
    const r = readReport(dir);
    expect(r.ok).toBe(false);
    expect(r.problems.some((p) => p.severity === 'error' && p.file?.endsWith('Rock.lasset'))).toBe(true);

    const other = await project();
    const s2 = await cookProject({ projectDir: other, report: false });
    expect(s2.report).toBeUndefined();
    expect(fs.existsSync(path.join(other, 'Saved', 'Reports'))).toBe(false);
  });

  it('is one self-contained file: no external script, style, font or image', async () => {
    const dir = await project();
    await cookProject({ projectDir: dir });
    const html = fs.readFileSync(path.join(dir, 'Saved', 'Reports', 'cook.html'), 'utf8');
    expect(html).not.toMatch(/<(script|img|link|iframe)[^>]+(src|href)=/i);
    expect(html).not.toMatch(/url\(|@import|https?:\/\//i);
  });

  it('keeps asset names from breaking out of the embedded data', async () => {
    const dir = await project();
    await writeFixture(dir, 'Content/UI/</script><b>x.rml', { text: '<rml/>', guid: g(0x41) });
    await cookProject({ projectDir: dir });
    const html = fs.readFileSync(path.join(dir, 'Saved', 'Reports', 'cook.html'), 'utf8');
    expect(html.match(/<\/script>/g)).toHaveLength(2);
  });
});

describe('cook report in a browser', () => {
  let browser: TestBrowser;
  beforeAll(async () => {
    browser = await openBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('opens from disk with no network, shows every chunk in the treemap, zooms, and inspects an asset', async () => {
    const dir = await project();
    await cookProject({ projectDir: dir });
    const r = readReport(dir);
    const { page, errors } = browser;
    const requests: string[] = [];
    page.on('request', (req) => requests.push(req.url()));
    await page.goto(`file://${path.join(dir, 'Saved', 'Reports', 'cook.html')}`);

    const chunks = page.locator('#treemap [data-kind="chunk"]');
    await chunks.first().waitFor();
    expect(await chunks.evaluateAll((els) => els.map((e) => e.getAttribute('data-name')))).toEqual(r.chunks.map((c) => c.name));
    // Every chunk's box is really there: visible, with an area.
    for (const c of r.chunks) {
      const box = await page.locator(`#treemap [data-kind="chunk"][data-name="${c.name}"]`).boundingBox();
      expect(box!.width * box!.height, c.name).toBeGreaterThan(100);
    }
    expect(await page.locator('#title-ok').textContent()).toBe('cook ok');

    // Zoom into Foliage: only its assets remain, the breadcrumb names it; Esc zooms back out.
    await page.locator('#treemap [data-kind="chunk"][data-name="Foliage"]').click({ position: { x: 5, y: 5 } });
    await page.locator('#tm-crumbs b', { hasText: 'Foliage.pak' }).waitFor();
    const shown = await page.locator('#treemap [data-kind="asset"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-name')).sort());
    expect(shown).toEqual(r.assets.filter((a) => a.chunk === 'Foliage').map((a) => a.path).sort());
    await page.keyboard.press('Escape');
    await page.locator('#tm-crumbs b', { hasText: 'ReportTest' }).waitFor();
    expect(await page.locator('#treemap [data-kind="chunk"]').count()).toBe(r.chunks.length);

    // An asset opens its chain from the cook root and its referrers.
    await page.locator('#treemap [data-kind="asset"][data-name="/Game/Tex/Stone.lasset"]').click();
    await page.locator('#inspector h3', { hasText: '/Game/Tex/Stone.lasset' }).waitFor();
    expect(await page.locator('#inspector ol.chain li').allTextContents()).toEqual(['root: project /Game/Maps/Main.lasset', 'Hard /Game/Props/Rock.lasset', 'Hard /Game/Tex/Stone.lasset']);
    await page.locator('#inspector ol.chain a', { hasText: '/Game/Props/Rock.lasset' }).click();
    await page.locator('#inspector h3', { hasText: '/Game/Props/Rock.lasset' }).waitFor();
    expect((await page.locator('#inspector ul.refs li').allTextContents()).sort()).toEqual(['/Foliage/Trees/Oak.lasset', '/Game/Maps/Main.lasset', '/Game/Unused/Junk (not cooked)']);

    expect(errors).toEqual([]);
    expect(requests.filter((u) => !u.startsWith('file://'))).toEqual([]);
  });

  it('draws a bounded report: the listed assets, each folder\'s unlisted rest as one box, and says so', async () => {
    const { dir, bounded: r } = await boundedReports();
    const file = path.join(dir, 'bounded.html');
    await fsp.writeFile(file, renderReportHtml(r));
    const { page, errors } = browser;
    await page.goto(`file://${file}`);
    await page.locator('#treemap [data-kind="chunk"]').first().waitFor();
    expect(await page.locator('#listed-note').textContent()).toContain(`lists ${r.assets.length} of its 8 assets`);
    // The tree sums to the whole cook, every asset counted once.
    const tree = await page.evaluate('({ size: TREE.size, count: TREE.count })');
    expect(tree).toEqual({ size: r.chunks.reduce((n, c) => n + c.bytesOut, 0), count: 8 });
    await page.locator('#treemap [data-kind="chunk"][data-name="Foliage"]').click({ position: { x: 5, y: 5 } });
    await page.locator('#tm-crumbs b', { hasText: 'Foliage.pak' }).waitFor();
    const shown = await page.locator('#treemap [data-kind="asset"], #treemap [data-kind="rest"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-name')));
    expect(shown.length).toBe(2);
    expect(errors).toEqual([]);
  });

  it('gives a tiny chunk (and one whose assets all failed) a visible box beside a huge one', async () => {
    const dir = await tempDir('lumina-report-');
    dirs.push(dir);
    const a = (p: string, chunk: string, bytesOut: number, status: ReportAsset['status'] = 'cooked'): ReportAsset => ({
      path: p, guid: p, className: '/Script/Engine.CTexture', file: p, chunk, via: 'root', status, bytesIn: bytesOut, bytesOut, ms: 1, referrers: [], root: 'project',
    });
    const report: CookReport = {
      version: 1, project: 'Tiny', projectDir: dir, generatedAt: new Date(0).toISOString(), ok: false,
      totals: { assets: 3, cooked: 2, cached: 0, fetched: 0, failed: 1, verbatim: 0, strippedExports: 0, nulledRefs: 0, bytesIn: 0, bytesOut: 0, ms: 1 },
      phases: [{ phase: 'cook', ms: 1 }],
      chunks: [{ name: 'Main', assets: 1, bytesOut: 500 << 20 }, { name: 'Tiny', assets: 1, bytesOut: 12 }, { name: 'Broken', assets: 1, bytesOut: 0 }],
      recooked: { new: 3 },
      assets: [a('/Game/Huge.lasset', 'Main', 500 << 20), a('/Tiny/Small.lasset', 'Tiny', 12), a('/Broken/Bad.lasset', 'Broken', 0, 'failed')],
      softExcluded: [], missing: [], problems: [],
    };
    const file = path.join(dir, 'cook.html');
    await fsp.writeFile(file, renderReportHtml(report));
    const { page, errors } = browser;
    await page.goto(`file://${file}`);
    await page.locator('#treemap [data-kind="chunk"]').first().waitFor();
    for (const name of ['Main', 'Tiny', 'Broken']) {
      const box = await page.locator(`#treemap [data-kind="chunk"][data-name="${name}"]`).boundingBox();
      expect(box!.width, name).toBeGreaterThan(10);
      expect(box!.height, name).toBeGreaterThan(10);
    }
    await page.locator('#treemap [data-kind="chunk"][data-name="Tiny"]').click({ position: { x: 3, y: 3 } });
    await page.locator('#tm-crumbs b', { hasText: 'Tiny.pak' }).waitFor();
    expect(await page.locator('#treemap [data-kind="asset"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-name')))).toEqual(['/Tiny/Small.lasset']);
    expect(errors).toEqual([]);
  });
});
