/**
 * The materials scan's cache (Intermediates/ShaderMaterials.json): a warm scan reads no package, a
 * package without materials is stored as its hash alone (a version 1 file is still read), and the
 * memo a full cook shares between its two scans never hides a change of the file on disk.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Cooker } from '../../cook/Cooker.js';
import { MATERIALS_CACHE_FILE, scanMaterials, type MaterialsMemo } from '../../cook/shaders/materials.js';
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
  it('reads each package once; stores a package without materials as its hash; still reads a version 1 file', async () => {
    const { records, file, intermediates } = await planned();
    const first = await scanMaterials(records, intermediates);
    expect(first.read).toBe(records.length);
    expect([...first.byPackage.keys()].sort()).toEqual([GUIDS.blur, GUIDS.plain, GUIDS.rock].sort());
    const saved = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(saved.version).toBe(2);
    const map = records.find((r) => r.guid === GUIDS.map)!;
    expect(saved.packages[GUIDS.map]).toBe(map.hash);
    expect(saved.packages[GUIDS.rock].materials).toHaveLength(1);
    expect((await scanMaterials(records, intermediates)).read).toBe(0);

    // The same cache as version 1 wrote it: nothing is read again, the same materials come out.
    const v1 = Object.fromEntries(Object.entries(saved.packages).map(([g, e]) => [g, typeof e === 'string' ? { hash: e, materials: [] } : e]));
    fs.writeFileSync(file, JSON.stringify({ version: 1, packages: v1 }));
    const fromV1 = await scanMaterials(records, intermediates);
    expect(fromV1.read).toBe(0);
    expect(fromV1.byPackage).toEqual(first.byPackage);
  });

  it("a memo's cache is used only while the file is as the scan left it", async () => {
    const { records, file, intermediates } = await planned();
    const memo: MaterialsMemo = {};
    expect((await scanMaterials(records, intermediates, { memo })).read).toBe(records.length);
    expect(memo.last?.file).toBe(file);
    expect((await scanMaterials(records, intermediates, { memo })).read).toBe(0);
    // Another writer replaced the file (here: forgot one package): the memo must not answer for it.
    const saved = JSON.parse(fs.readFileSync(file, 'utf8'));
    delete saved.packages[GUIDS.rock];
    fs.writeFileSync(file, JSON.stringify(saved));
    expect((await scanMaterials(records, intermediates, { memo })).read).toBe(1);
    fs.rmSync(file);
    expect((await scanMaterials(records, intermediates, { memo })).read).toBe(records.length);
  });
});
