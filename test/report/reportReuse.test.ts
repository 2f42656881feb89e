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
import { escapeScriptJson } from '../../cook/report/pageStyle.js';

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
    // No body key for a cook that cooked something (only its frame, see below).
    expect(JSON.parse(fs.readFileSync(keyFile, 'utf8')).key).toBeUndefined();
    const rock = read().assets.find((a) => a.path === '/Game/Props/Rock.lasset')!;
    expect([rock.status, rock.reason]).toEqual(['cooked', 'content']);
    // The next cook changes nothing again: its body says everything came from the cache.
    const next = await cook();
    expect(next.report?.reused).toBeFalsy();
    expect(read().assets.every((a) => a.status === 'cached')).toBe(true);
    expect((await cook()).report?.reused).toBe(true);
  });
});

/**
 * A cook that changed a few assets (a one-file edit, the no-op after it) patches the last body:
 * the objects of the assets cooked now or then are written anew, the rest of the bytes kept.
 * Each patched report is compared with the report of a twin project (the same files, cooks and
 * edits) built whole: the same bytes from `"assets":[` on, but for the edited asset's cook time.
 */
describe('the report of a cook that changed a few assets', () => {
  let a: string;
  let b: string;
  const files = {
    'Content/Maps/Main.lasset': asset(g(1), 'Main', { className: '/Script/Engine.CWorld', imports: [hard(g(2)), hard(g(3))] }),
    'Content/Props/Rock.lasset': asset(g(2), 'Rock', { properties: [prop.str('Label', 'rock')] }),
    'Content/Props/Stone.lasset': asset(g(3), 'Stone'),
    'Content/Unused/Junk.lasset': asset(g(4), 'Junk', { imports: [hard(g(2))] }),
    'Content/UI/Menu.rml': { text: '<rml><body>menu</body></rml>', guid: g(0x40) },
  };
  beforeAll(async () => {
    a = await tempDir('lc-report-patch-');
    b = await tempDir('lc-report-whole-');
    for (const root of [a, b]) await writeProject(root, { name: 'Patch', cookRoots: ['/Game/Maps/Main'], textures: { encoder: 'rgba8' } }, files);
  });
  afterAll(async () => {
    await fsp.rm(a, { recursive: true, force: true });
    await fsp.rm(b, { recursive: true, force: true });
  });
  const reportOf = (root: string) => ({ json: path.join(root, 'Saved/Reports/cook-report.json'), html: path.join(root, 'Saved/Reports/cook.html') });
  /** A report file's body (from `"assets":[` on). */
  const body = (file: string): string => {
    const text = fs.readFileSync(file, 'utf8');
    return text.slice(text.indexOf('"assets":['));
  };
  /** Cook both: `a` as it comes, `b` with its report built whole. */
  const cookBoth = async () => {
    const s = await cookProject({ projectDir: a });
    fs.rmSync(path.join(b, 'Intermediates', REPORT_KEY_FILE), { force: true });
    const w = await cookProject({ projectDir: b });
    expect(s.ok && w.ok).toBe(true);
    expect(w.report?.reused || w.report?.patched).toBeFalsy();
    return s;
  };
  /** `a`'s report body is the bytes of `b`'s, `edited`'s cook time taken from `a`'s. */
  const expectLikeWhole = (edited?: string) => {
    const mine = JSON.parse(fs.readFileSync(reportOf(a).json, 'utf8')) as CookReport;
    const whole = JSON.parse(fs.readFileSync(reportOf(b).json, 'utf8')) as CookReport;
    if (edited) {
      const x = whole.assets.find((y) => y.path === edited)!;
      expect(x.status).toBe('cooked');
      x.ms = mine.assets.find((y) => y.path === edited)!.ms;
    }
    // The whole body as the writer makes it: JSON.stringify of the report, from its assets on.
    const text = JSON.stringify(whole);
    const wholeBody = text.slice(text.indexOf('"assets":['));
    expect(body(reportOf(a).json)).toBe(wholeBody + '\n');
    const page = body(reportOf(a).html);
    expect(page.slice(0, page.indexOf('</script>'))).toBe(escapeScriptJson(wholeBody));
  };
  const edit = async (label: string, imports = [] as ReturnType<typeof hard>[]) => {
    for (const root of [a, b]) await writeFixture(root, 'Content/Props/Rock.lasset', asset(g(2), 'Rock', { imports, properties: [prop.str('Label', label)] }));
  };

  it('patches the edited asset in and out again, to the bytes of a body built whole', async () => {
    await cookBoth();
    await cookBoth();
    expect((await cookProject({ projectDir: a })).report?.reused).toBe(true);
    for (const label of ['patch 1', 'patch 2']) {
      await edit(label);
      const s = await cookBoth();
      expect(s.cooked).toBe(1);
      expect(s.report?.patched).toBe(true);
      const rock = (JSON.parse(fs.readFileSync(reportOf(a).json, 'utf8')) as CookReport).assets.find((x) => x.path === '/Game/Props/Rock.lasset')!;
      expect([rock.status, rock.reason]).toEqual(['cooked', 'content']);
      expectLikeWhole('/Game/Props/Rock.lasset');
      // The no-op after it: the edited asset patched back to cached.
      const noop = await cookBoth();
      expect(noop.report?.patched).toBe(true);
      expectLikeWhole();
      expect((await cookProject({ projectDir: a })).report?.reused).toBe(true);
    }
  });

  it('builds the body whole when the edit changes what the plan is made of, or the body was damaged', async () => {
    await cookBoth();
    // A new import of a shipped package: another plan (its facts changed), whose referrers differ.
    await edit('imports', [hard(g(3))]);
    const s = await cookBoth();
    expect(s.report?.patched).toBeFalsy();
    expectLikeWhole('/Game/Props/Rock.lasset');
    // A damaged body (one byte of another asset's path, the length unchanged) is not patched.
    await cookBoth();
    await edit('damaged', [hard(g(3))]);
    const file = reportOf(a).json;
    const bytes = await fsp.readFile(file);
    const i = bytes.lastIndexOf(Buffer.from('/Game/Maps/Main.lasset'));
    bytes[i + 7] = 'X'.charCodeAt(0);
    await fsp.writeFile(file, bytes);
    const damaged = await cookBoth();
    expect(damaged.report?.patched).toBeFalsy();
    expectLikeWhole('/Game/Props/Rock.lasset');

    // A cook without a report (a daemon's, say) cooked Stone since the last report: Stone is
    // cached now, with numbers the last body does not have, though neither report lists it as cooked.
    await cookBoth();
    for (const root of [a, b]) {
      await writeFixture(root, 'Content/Props/Stone.lasset', asset(g(3), 'Stone', { properties: [prop.str('Label', 'a longer stone than before')] }));
      expect((await cookProject({ projectDir: root, report: false })).cooked).toBe(1);
    }
    await edit('after a cook without a report', [hard(g(3))]);
    const unseen = await cookBoth();
    expect(unseen.report?.patched).toBeFalsy();
    expectLikeWhole('/Game/Props/Rock.lasset');
  });
});
