/**
 * The materials scan's cache (Intermediates/ShaderMaterials.bin) as a full cook uses it: the
 * ShaderMaterials.json that version 2 wrote (a package without materials as its hash alone) is
 * read once without reading a package, and the memo a full cook shares between its two scans
 * never hides a change of the file on disk.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Cooker } from '../../cook/Cooker.js';
import { LEGACY_MATERIALS_CACHE_FILE, MATERIALS_CACHE_FILE, MaterialsTable, scanMaterials, type MaterialsMemo } from '../../cook/shaders/materials.js';
import type { AssetRecord } from '../../src/registry/types.js';
import { tempDir } from '../cook/helpers.js';
import { GUIDS, writeShaderProject } from './fixtures.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

async function planned(): Promise<{ dir: string; records: AssetRecord[]; file: string; intermediates: string }> {
  const root = await tempDir();
  dirs.push(root);
  const dir = await writeShaderProject(root);
  const c = await Cooker.open({ projectDir: dir, lock: false });
  try {
    const records = c.plan().packages.map((p) => p.record);
    const intermediates = path.join(dir, 'Intermediates');
    return { dir, records, file: path.join(intermediates, MATERIALS_CACHE_FILE), intermediates };
  } finally {
    c.close();
  }
}

describe('materials scan cache', () => {
  it('a version 2 ShaderMaterials.json (hash strings for packages without materials) is read once, no package read, and replaced', async () => {
    const { records, file, intermediates } = await planned();
    const first = await scanMaterials(records, intermediates);
    expect(first.read).toBe(records.length);
    expect([...first.byPackage.keys()].sort()).toEqual([GUIDS.blur, GUIDS.plain, GUIDS.rock].sort());
    const table = fs.readFileSync(file);
    fs.rmSync(file);
    const packages = Object.fromEntries(records.map((r) => {
      const m = first.byPackage.get(r.guid);
      return [r.guid, m ? { hash: r.hash, materials: m.materials } : r.hash];
    }));
    fs.writeFileSync(path.join(intermediates, LEGACY_MATERIALS_CACHE_FILE), JSON.stringify({ version: 2, packages }));
    const fromV2 = await scanMaterials(records, intermediates);
    expect(fromV2.read).toBe(0);
    expect(fromV2.byPackage).toEqual(first.byPackage);
    expect(fs.existsSync(path.join(intermediates, LEGACY_MATERIALS_CACHE_FILE))).toBe(false);
    // The same table as a scan of the packages wrote.
    expect(fs.readFileSync(file).equals(table)).toBe(true);
  });

  it('a JSON of an unknown version is not trusted: every package is read', async () => {
    const { records, intermediates } = await planned();
    fs.mkdirSync(intermediates, { recursive: true });
    fs.writeFileSync(path.join(intermediates, LEGACY_MATERIALS_CACHE_FILE), JSON.stringify({ version: 3, packages: Object.fromEntries(records.map((r) => [r.guid, r.hash])) }));
    expect((await scanMaterials(records, intermediates)).read).toBe(records.length);
  });

  it("a memo's table is used only while the file is as the scan left it", async () => {
    const { records, file, intermediates } = await planned();
    const memo: MaterialsMemo = {};
    expect((await scanMaterials(records, intermediates, { memo })).read).toBe(records.length);
    expect(memo.last?.file).toBe(file);
    expect((await scanMaterials(records, intermediates, { memo })).read).toBe(0);
    // Another writer replaced the file (here: forgot one package): the memo must not answer for it.
    const t = MaterialsTable.decode(fs.readFileSync(file));
    const kept = Array.from({ length: t.count }, (_, i) => i).filter((i) => t.guid(i) !== GUIDS.rock);
    const byGuid = new Map(records.map((r) => [r.guid, r.hash]));
    const fewer = MaterialsTable.encode(kept.map((i) => t.guid(i)), kept.map((i) => byGuid.get(t.guid(i))!), kept.map((i) => t.blob(i)));
    fs.writeFileSync(file, fewer.data);
    expect((await scanMaterials(records, intermediates, { memo })).read).toBe(1);
    fs.rmSync(file);
    expect((await scanMaterials(records, intermediates, { memo })).read).toBe(records.length);
  });
});
