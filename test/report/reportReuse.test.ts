/**
 * A cook that changed nothing writes its report from a new head (time, totals, paks) and the last
 * report's body bytes, when Intermediates/CookReport.json says that body is the one this cook
 * would build and the bytes still hash as recorded. Everything else builds the body again: these
 * tests change what a wrong key would miss, and check the files equal a report built whole.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cookProject } from '../../cook/cookProject.js';
import type { CookReport } from '../../cook/report/index.js';
import { REPORT_KEY_FILE } from '../../cook/report/writeCookReport.js';
import { hard, prop } from '../../src/format/packageBuilder.js';
import { initHash } from '../../src/util/hash.js';
import { asset, g, tempDir, writeFixture, writeProject } from '../cook/helpers.js';

let dir: string;
let json: string;
let html: string;
let keyFile: string;

beforeAll(async () => {
  await initHash();
  dir = await tempDir('lc-report-reuse-');
  await writeProject(dir, { name: 'Reuse', cookRoots: ['/Game/Maps/Main'], textures: { encoder: 'rgba8' } }, {
    'Content/Maps/Main.lasset': asset(g(1), 'Main', { className: '/Script/Engine.CWorld', imports: [hard(g(2)), hard(g(3))] }),
    'Content/Props/Rock.lasset': asset(g(2), 'Rock', { properties: [prop.str('Label', 'rock')] }),
    'Content/Props/Stone.lasset': asset(g(3), 'Stone'),
    // Shipped by nothing: it only shows up as a referrer of what it imports.
    'Content/Unused/Junk.lasset': asset(g(4), 'Junk', { imports: [hard(g(2))] }),
    'Content/UI/Menu.rml': { text: '<rml><body>menu</body></rml>', guid: g(0x40) },
  });
  json = path.join(dir, 'Saved/Reports/cook-report.json');
  html = path.join(dir, 'Saved/Reports/cook.html');
  keyFile = path.join(dir, 'Intermediates', REPORT_KEY_FILE);
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

const cook = async () => {
  const s = await cookProject({ projectDir: dir });
  expect(s.ok).toBe(true);
  return s;
};
const read = (): CookReport => JSON.parse(fs.readFileSync(json, 'utf8'));
/** The report without what differs between two cooks of the same content (time). */
const timeless = (r: CookReport) => {
  const { generatedAt: _, totals, phases: __, ...rest } = r;
  return { ...rest, totals: { ...totals, ms: 0 } };
};
/** The embedded JSON of cook.html. */
const fromHtml = (): CookReport => {
  const page = fs.readFileSync(html, 'utf8');
  const m = /<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(page);
  return JSON.parse(m![1]);
};
/** The same cook's report built whole (no record of a last body). */
const builtWhole = async () => {
  fs.rmSync(keyFile, { force: true });
  const s = await cook();
  expect(s.report?.reused).toBeFalsy();
  return { json: read(), html: fromHtml() };
};
const referrersOf = (r: CookReport, p: string) => {
  const a = r.assets.find((x) => x.path === p)!;
  return a.referrers.map((x) => (typeof x === 'number' ? r.assets[x].path : x)).sort();
};

describe('the report of a cook that changed nothing', () => {
  it('keeps the last body and writes a new head; the files equal a report built whole', async () => {
    const first = await cook();
    expect(first.cooked).toBeGreaterThan(0);
    expect(first.report?.reused).toBeFalsy();
    // The first cook re-cooked everything, so its body is not a no-op's: the next builds it.
    expect((await cook()).report?.reused).toBeFalsy();
    const before = read();
    const s = await cook();
    expect(s.report?.reused).toBe(true);
    const reused = { json: read(), html: fromHtml() };
    expect(reused.json.generatedAt >= before.generatedAt).toBe(true);
    expect(reused.json.totals.ms).toBe(s.ms);
    expect(reused.html).toEqual(reused.json);
    const whole = await builtWhole();
    expect(timeless(reused.json)).toEqual(timeless(whole.json));
    expect(timeless(reused.html)).toEqual(timeless(whole.html));
  });

  it('builds the body again when a package the cook does not ship starts importing a shipped one', async () => {
    await cook();
    expect((await cook()).report?.reused).toBe(true);
    expect(referrersOf(read(), '/Game/Props/Stone.lasset')).toEqual(['/Game/Maps/Main.lasset']);
    await writeFixture(dir, 'Content/Unused/Junk.lasset', asset(g(4), 'Junk', { imports: [hard(g(2)), hard(g(3))] }));
    const s = await cook();
    expect(s.cooked).toBe(0);
    expect(s.report?.reused).toBeFalsy();
    expect(referrersOf(read(), '/Game/Props/Stone.lasset')).toEqual(['/Game/Maps/Main.lasset', '/Game/Unused/Junk']);
    expect(fromHtml()).toEqual(read());
  });

  it('builds the body again when the report was damaged since', async () => {
    await cook();
    expect((await cook()).report?.reused).toBe(true);
    // One byte of the body (an asset's path), the file's length unchanged.
    const bytes = await fsp.readFile(json);
    const at = bytes.lastIndexOf(Buffer.from('/Game/Props/Rock.lasset'));
    bytes[at + 7] = 'X'.charCodeAt(0);
    await fsp.writeFile(json, bytes);
    const s = await cook();
    expect(s.report?.reused).toBeFalsy();
    const r = read();
    expect(r.assets.map((a) => a.path)).toContain('/Game/Props/Rock.lasset');
    expect(fromHtml()).toEqual(r);
  });

  it('builds the body again after a cook that cooked something, and says what it re-cooked', async () => {
    await cook();
    expect((await cook()).report?.reused).toBe(true);
    await writeFixture(dir, 'Content/Props/Rock.lasset', asset(g(2), 'Rock', { properties: [prop.str('Label', 'rock 2')] }));
    const s = await cook();
    expect(s.cooked).toBe(1);
    expect(s.report?.reused).toBeFalsy();
    expect(fs.existsSync(keyFile)).toBe(false);
    const rock = read().assets.find((a) => a.path === '/Game/Props/Rock.lasset')!;
    expect([rock.status, rock.reason]).toEqual(['cooked', 'content']);
    // The next cook changes nothing again: its body says everything came from the cache.
    const next = await cook();
    expect(next.report?.reused).toBeFalsy();
    expect(read().assets.every((a) => a.status === 'cached')).toBe(true);
    expect((await cook()).report?.reused).toBe(true);
  });
});
