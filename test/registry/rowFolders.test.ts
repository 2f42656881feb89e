/**
 * The warm open's unbuilt folders (rowFolder.ts) and the GUID map built on first need: a warm scan
 * matches a package folder's listing against its cache rows in order, and counts assets without a
 * GUID map while every live entry is an unchanged snapshot row. Each case changes the project
 * while no process runs, then compares a warm open + scan with a cold scan of the same tree.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AssetRegistry } from '../../src/registry/AssetRegistry.js';
import { RowFolder } from '../../src/registry/rowFolder.js';
import type { AssetRecord } from '../../src/registry/types.js';
import { bumpMtime, g, hard, makeProject, soft, type TempProject } from './fixtures.js';

let p: TempProject;
beforeEach(() => {
  p = makeProject();
});
afterEach(() => p.cleanup());

/** Content/Props: A..F and Z, with Props/Sub's rows between F and Z in the cache (file order). */
const NAMES = ['A', 'B', 'C', 'D', 'E', 'F', 'Z'];
const rel = (n: string) => `Content/Props/${n}.lasset`;

/** A whole second (as utimes takes it), so a test can put an mtime back exactly. */
const ROUND_MTIME = 1_700_000_000;

function writeProject(): void {
  NAMES.forEach((n, i) => p.pkg(rel(n), g(i + 1), { imports: i > 0 ? [hard(g(i)), soft(g(1))] : [] }));
  fs.utimesSync(p.abs(rel('D')), ROUND_MTIME, ROUND_MTIME);
  p.pkg('Content/Props/Sub/S1.lasset', g(50));
  p.pkg('Content/Props/Sub/S2.lasset', g(51));
  p.pkg('Content/Other/O.lasset', g(60));
}

const view = (r: AssetRecord) => ({ ...r, dependencies: r.dependencies.map((d) => ({ ...d })) });

/** A cold scan of the tree as it is now (its own cache file, so the project's stays). */
async function coldRecords(): Promise<{ records: ReturnType<typeof view>[]; problems: string[] }> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lumina-rowcold-'));
  try {
    const reg = await AssetRegistry.open({ config: p.config(), cacheFile: path.join(tmp, 'cold.assetdb'), autoSave: false });
    const r = await reg.scan();
    return { records: reg.all().map(view), problems: r.problems.map((x) => `${x.code} ${x.file}`) };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

async function primeCache(): Promise<void> {
  const reg = await AssetRegistry.open({ config: p.config() });
  const r = await reg.scan();
  reg.close();
  expect(r.problems).toEqual([]);
}

const propsDir = () => path.join(p.content, 'Props');

describe('warm scan over unbuilt cache folders', () => {
  it('a no-op warm scan matches the folders as rows (built by no one), and every query then answers as a cold scan does', async () => {
    writeProject();
    await primeCache();
    const reg = await AssetRegistry.open({ config: p.config() });
    const r = await reg.scan();
    expect(r).toMatchObject({ assets: 10, read: 0, cached: 10, removed: 0, problems: [] });
    // The shortcut is in use (so the cases below exercise it): the folder is still held as rows.
    const entries = (reg as unknown as { entries: { slot(d: string): unknown } }).entries;
    expect(entries.slot(propsDir())).toBeInstanceOf(RowFolder);
    expect(reg.size).toBe(10);
    const again = await reg.scan();
    expect(again).toMatchObject({ assets: 10, read: 0, cached: 10, removed: 0 });
    // Queries build the GUID map from the rows: the same answers as a cold scan.
    expect(reg.get(g(3))?.file).toBe(p.abs(rel('C')));
    expect(reg.byFile(p.abs('Content/Props/Sub/S2.lasset'))?.guid).toBe(g(51));
    expect(reg.referrers(g(1)).map((x) => x.guid)).toEqual(NAMES.slice(1).map((_, i) => g(i + 2)));
    expect(reg.all().map(view)).toEqual((await coldRecords()).records);
    // After the map is built, a batch is told against it as before.
    p.pkg(rel('D'), g(77));
    const seen: string[][] = [];
    reg.onChange((c) => seen.push([...c.added, ...c.removed]));
    const upd = await reg.updateFiles([p.abs(rel('D'))]);
    expect(upd.change).toEqual({ added: [g(77)], changed: [], removed: [g(4)] });
    expect(seen).toEqual([[g(77), g(4)]]);
    reg.close();
  });

  const cases: Array<{ name: string; change: () => void; expect: { read: number; removed: number }; readAgain?: number }> = [
    {
      name: 'same size, new bytes, new mtime',
      change: () => {
        const f = p.pkg(rel('C'), g(3), { imports: [hard(g(2)), soft(g(1))], extra: 7 });
        expect(fs.statSync(f).size).toBe(fs.statSync(p.abs(rel('B'))).size);
        bumpMtime(f);
      },
      expect: { read: 1, removed: 0 },
    },
    {
      // D's mtime is a whole second since the project was written (writeProject), so it is put back to the bit.
      name: 'new size, mtime put back',
      change: () => {
        const f = p.abs(rel('D'));
        fs.appendFileSync(f, Buffer.alloc(3));
        fs.utimesSync(f, ROUND_MTIME, ROUND_MTIME);
      },
      // Trailing bytes after the tables still parse: the file is read again, same asset.
      expect: { read: 1, removed: 0 },
    },
    { name: 'first file deleted', change: () => fs.rmSync(p.abs(rel('A'))), expect: { read: 0, removed: 1 } },
    { name: 'middle file deleted', change: () => fs.rmSync(p.abs(rel('C'))), expect: { read: 0, removed: 1 } },
    { name: 'last file deleted (after the sub-folder)', change: () => fs.rmSync(p.abs(rel('Z'))), expect: { read: 0, removed: 1 } },
    { name: 'a file added before the first', change: () => p.pkg(rel('0'), g(90)), expect: { read: 1, removed: 0 } },
    { name: 'a file added in the middle', change: () => p.pkg(rel('Cc'), g(90)), expect: { read: 1, removed: 0 } },
    { name: 'a file added after the last', change: () => p.pkg(rel('Zz'), g(90)), expect: { read: 1, removed: 0 } },
    {
      // Its asset export is still named B: a problem naming the file, read again by each scan.
      name: 'a file renamed, mtime and size kept',
      change: () => fs.renameSync(p.abs(rel('B')), p.abs(rel('G'))),
      expect: { read: 1, removed: 1 },
      readAgain: 1,
    },
    {
      // The new name is the tail of the old one's (S1 -> 1): a row is matched by its whole name.
      name: 'a file renamed to the tail of its name',
      change: () => fs.renameSync(p.abs('Content/Props/Sub/S1.lasset'), p.abs('Content/Props/Sub/1.lasset')),
      expect: { read: 1, removed: 1 },
      readAgain: 1,
    },
    {
      name: 'a file replaced by a folder of the same name',
      change: () => {
        fs.rmSync(p.abs(rel('E')));
        fs.mkdirSync(p.abs(rel('E')));
      },
      expect: { read: 0, removed: 1 },
    },
    {
      name: 'a file replaced by a symlink to another package',
      change: () => {
        fs.rmSync(p.abs(rel('F')));
        fs.symlinkSync(p.abs(rel('A')), p.abs(rel('F')));
      },
      expect: { read: 0, removed: 1 },
    },
    { name: 'the sub-folder deleted', change: () => fs.rmSync(path.join(propsDir(), 'Sub'), { recursive: true }), expect: { read: 0, removed: 2 } },
    { name: 'the whole folder deleted', change: () => fs.rmSync(propsDir(), { recursive: true }), expect: { read: 0, removed: 9 } },
    {
      name: 'a text asset added to a package folder',
      change: () => {
        p.write('Content/Props/Hud.rml', '<rml/>');
      },
      expect: { read: 1, removed: 0 },
    },
    {
      name: 'a copy of a package (same GUID) in another folder: a duplicate',
      change: () => p.pkg('Content/Other/C.lasset', g(3)),
      expect: { read: 1, removed: 0 },
    },
  ];

  for (const c of cases) {
    it(`finds a change made while no process ran: ${c.name}`, async () => {
      writeProject();
      await primeCache();
      c.change();
      const reg = await AssetRegistry.open({ config: p.config() });
      const r = await reg.scan();
      const cold = await coldRecords();
      expect({ read: r.read, removed: r.removed }).toEqual(c.expect);
      expect(r.assets).toBe(cold.records.length);
      expect(r.problems.map((x) => `${x.code} ${x.file}`).filter((x) => !x.startsWith('LMETA'))).toEqual(cold.problems.filter((x) => !x.startsWith('LMETA')));
      expect(reg.all().map(view)).toEqual(cold.records);
      // And the cache it saved is as good: a second warm open reads nothing and agrees.
      reg.close();
      const next = await AssetRegistry.open({ config: p.config() });
      const r2 = await next.scan();
      expect(r2).toMatchObject({ read: c.readAgain ?? 0, removed: 0, assets: cold.records.length });
      expect(next.all().map(view)).toEqual(cold.records);
      next.close();
    });
  }

  it('a duplicate GUID already in the cache is reported by every warm scan, the path that sorts first winning', async () => {
    writeProject();
    p.pkg('Content/Other/C.lasset', g(3));
    await AssetRegistry.open({ config: p.config() }).then(async (reg) => {
      await reg.scan();
      reg.close();
    });
    const reg = await AssetRegistry.open({ config: p.config() });
    const r = await reg.scan();
    expect(r).toMatchObject({ read: 0, assets: 10 });
    expect(r.problems.map((x) => x.code)).toEqual(['DUPLICATE_GUID']);
    expect(reg.get(g(3))?.file).toBe(p.abs('Content/Other/C.lasset'));
    reg.close();
  });

  it('a query while a warm scan is reading (its first batch) leaves the registry as a cold scan gives it', async () => {
    writeProject();
    // A text asset's folder is built at load, so the scan keeps an entry (live, in its batch) before the query.
    p.write('Content/UI/Hud.rml', '<rml/>');
    await primeCache();
    p.pkg(rel('C'), g(88));
    p.pkg(rel('Cc'), g(89));
    fs.rmSync(p.abs(rel('E')));
    const reg = await AssetRegistry.open({ config: p.config() });
    const during: Array<string | undefined> = [];
    const r = await reg.scan({
      onProgress: (x) => {
        if (x.toRead > 0 && during.length === 0) during.push(reg.get(g(1))?.guid, String(reg.size));
      },
    });
    expect(during.length).toBe(2);
    const cold = await coldRecords();
    expect(r).toMatchObject({ read: 2, removed: 1, assets: cold.records.length, problems: [] });
    expect(reg.size).toBe(cold.records.length);
    expect(reg.all().map(view)).toEqual(cold.records);
    expect(reg.get(g(3))).toBeUndefined();
    expect(reg.get(g(88))?.file).toBe(p.abs(rel('C')));
    reg.close();
  });

  it('fileAsset answers from unbuilt folders (no GUID map) exactly what byFile and get answer once everything is built', async () => {
    writeProject();
    p.write('Content/UI/Hud.rml', '<rml/>');
    await primeCache();
    const reg = await AssetRegistry.open({ config: p.config() });
    await reg.scan();
    const entries = (reg as unknown as { entries: { slot(d: string): unknown } }).entries;
    const internals = reg as unknown as { pending: boolean };
    // Asked out of name order, and for names that sort between, before and after the rows.
    const asked = [...NAMES].reverse().map((n) => reg.fileAsset(propsDir(), `${n}.lasset`));
    const misses = ['0.lasset', 'Cc.lasset', 'Zz.lasset', 'a.lasset', 'Sub', 'C.lassetx', 'C.lasse'].map((n) => reg.fileAsset(propsDir(), n));
    const sub = reg.fileAsset(path.join(propsDir(), 'Sub'), 'S2.lasset');
    // The shortcut was taken: no GUID map, the package folder still held as rows.
    expect(internals.pending).toBe(true);
    expect(entries.slot(propsDir())).toBeInstanceOf(RowFolder);
    expect(misses).toEqual(misses.map(() => undefined));
    expect(asked.map((r) => r?.guid)).toEqual([...NAMES].reverse().map((_, i) => g(NAMES.length - i)));
    expect(sub?.guid).toBe(g(51));
    // Each is the record the registry gives for that file and GUID once built, the same object.
    const all = reg.all();
    for (const r of [...asked, sub]) {
      expect(reg.get(r!.guid)).toBe(r);
      expect(reg.byFile(r!.file)).toBe(r);
    }
    expect(all.map(view)).toEqual((await coldRecords()).records);
    reg.close();
  });

  it("fileAsset names only a GUID's asset: not a file no walked mount shows, not a duplicate's loser", async () => {
    writeProject();
    p.pkg('Plugins/Foliage/Content/Tree.lasset', g(70));
    await primeCache();
    // The plugin is disabled now: its file stays in the cache, but is no asset.
    const disabled = p.config({ plugins: [{ name: 'Foliage', path: 'Plugins/Foliage', chunk: 'FoliageChunk', enabled: false }] });
    const reg = await AssetRegistry.open({ config: disabled });
    await reg.scan();
    expect((reg as unknown as { pending: boolean }).pending).toBe(true);
    expect(reg.fileAsset(p.plugin, 'Tree.lasset')).toBeUndefined();
    expect(reg.fileAsset(propsDir(), 'D.lasset')?.guid).toBe(g(4));
    expect(reg.get(g(70))).toBeUndefined();
    reg.close();
    p.pkg('Content/Other/C.lasset', g(3));
    const dup = await AssetRegistry.open({ config: disabled });
    await dup.scan();
    dup.close();
    const again = await AssetRegistry.open({ config: disabled });
    expect((await again.scan()).read).toBe(0);
    // Content/Other/C sorts before Content/Props/C: it is g(3)'s asset, the other its loser.
    expect(again.fileAsset(propsDir(), 'C.lasset')).toBeUndefined();
    expect(again.fileAsset(path.join(p.content, 'Other'), 'C.lasset')?.file).toBe(p.abs('Content/Other/C.lasset'));
    expect(again.fileAsset(propsDir(), 'D.lasset')?.guid).toBe(g(4));
    again.close();
  });
});
