/**
 * The material scan's table (Intermediates/ShaderMaterials.bin): packed records that round-trip,
 * a warm scan that reads no package and writes nothing, the JSON table of before read once and
 * replaced, and a damaged table that only costs a re-read.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Cooker } from '../../cook/Cooker.js';
import { LEGACY_MATERIALS_CACHE_FILE, MATERIALS_CACHE_FILE, MaterialsTable, packagesWithMaterials, scanMaterials, type MaterialScan } from '../../cook/shaders/materials.js';
import type { AssetRecord } from '../../src/registry/types.js';
import { initHash, xxh64 } from '../../src/util/hash.js';
import { tempDir } from '../cook/helpers.js';
import { prop, hard } from '../../src/format/packageBuilder.js';
import { GUIDS, material, writeShaderProject } from './fixtures.js';

/** The project's planned packages, as the cook hands them to the scan. */
async function packagesOf(dir: string): Promise<AssetRecord[]> {
  const c = await Cooker.open({ projectDir: dir });
  try {
    return c.plan().packages.map((p) => p.record);
  } finally {
    c.close();
  }
}

/** byPackage as plain data, sorted by GUID. */
const plain = (s: MaterialScan) =>
  [...s.byPackage]
    .map(([guid, v]) => ({ guid, materials: v.materials, error: v.error?.message }))
    .sort((a, b) => (a.guid < b.guid ? -1 : 1));

describe('ShaderMaterials.bin', () => {
  it('encodes and looks up packed records: hits by GUID and hash, misses, bad GUIDs left out, one record per GUID', async () => {
    await initHash();
    const g = (n: number) => n.toString(16).padStart(32, '0');
    const blob = Buffer.from('{"materials":[]}');
    const t = MaterialsTable.decode(MaterialsTable.encode([g(3), g(1), 'not-a-guid', g(2), g(1)], ['00000000000000aa', '00000000000000bb', '00000000000000cc', 'xyz', '00000000000000dd'], [blob, undefined, blob, blob, blob]).data);
    // g(2)'s hash is not hex: left out, like the bad GUID; g(1) twice: the first kept.
    expect(t.count).toBe(2);
    expect(t.find(g(2))).toBe(-1);
    expect(t.find('not-a-guid')).toBe(-1);
    expect(t.find(g(9))).toBe(-1);
    const one = t.find(g(1));
    const three = t.find(g(3));
    expect([one, three]).toEqual([0, 1]);
    // A hint is only a first guess: right, wrong, past the end or negative, the answer is the same.
    expect([t.find(g(3), 1), t.find(g(3), 0), t.find(g(3), 2), t.find(g(1), 1), t.find(g(1), -1), t.find(g(2), 0), t.find(g(9), 1)]).toEqual([1, 1, 1, 0, 0, -1, -1]);
    expect(t.guid(three)).toBe(g(3));
    expect(t.hashIs(one, '00000000000000bb')).toBe(true);
    expect(t.hashIs(one, '00000000000000dd')).toBe(false);
    expect(t.blob(one)?.byteLength).toBe(0);
    expect([t.blobEmpty(one), t.blobEmpty(three)]).toEqual([true, false]);
    expect(Buffer.from(t.blob(three)!).toString()).toBe('{"materials":[]}');
    // Binary search over many records: GUIDs that differ in their first, middle or last byte, high
    // bytes included; every one found at its sorted index without a hint, and none that is absent.
    const many = Array.from({ length: 300 }, (_, i) => {
      const b = Buffer.alloc(16, 0x7f);
      b[i % 3 === 0 ? 0 : i % 3 === 1 ? 8 : 15] = (i * 37) & 0xff;
      b[(i >> 2) % 16] ^= i & 0x80;
      return b.toString('hex');
    });
    const kept = [...new Set(many)].sort();
    const big = MaterialsTable.encode(kept, kept.map(() => '00000000000000aa'), kept.map(() => undefined));
    expect(kept.map((guid) => big.find(guid))).toEqual(kept.map((_, i) => i));
    const absent = kept.map((guid) => guid.slice(0, 31) + (guid[31] === 'f' ? 'e' : 'f')).filter((guid) => !kept.includes(guid));
    expect(absent.length).toBeGreaterThan(100);
    expect(absent.map((guid) => big.find(guid))).toEqual(absent.map(() => -1));
    // A flipped byte anywhere fails the footer hash.
    const bad = Buffer.from(MaterialsTable.encode([g(1)], ['00000000000000bb'], [blob]).data);
    bad[20] ^= 1;
    expect(() => MaterialsTable.decode(bad)).toThrow(/footer/);
  });

  it('a warm scan reads no package and rewrites nothing; a changed package is the only one read', async () => {
    const dir = await writeShaderProject(await tempDir());
    const inter = path.join(dir, 'Intermediates');
    const cold = await scanMaterials(await packagesOf(dir), inter);
    const file = path.join(inter, MATERIALS_CACHE_FILE);
    expect(cold.read).toBe(4);
    expect(plain(cold).map((p) => p.guid)).toEqual([GUIDS.rock, GUIDS.plain, GUIDS.blur].sort());
    const bytes = fs.readFileSync(file);
    const mtime = fs.statSync(file).mtimeMs;

    const warm = await scanMaterials(await packagesOf(dir), inter);
    expect(warm.read).toBe(0);
    expect(plain(warm)).toEqual(plain(cold));
    expect(fs.statSync(file).mtimeMs).toBe(mtime);
    expect(packagesWithMaterials(inter)).toEqual(new Set([GUIDS.rock, GUIDS.plain, GUIDS.blur]));

    // Plain loses its defines' twin: a new ShaderSource, only it is read.
    await writeShaderProject(dir, { 'Content/Materials/Plain.lasset': material(GUIDS.plain, 'Plain', '/Game/Shaders/Blur.glsl', ['X=1']) });
    const changed = await scanMaterials(await packagesOf(dir), inter);
    expect(changed.read).toBe(1);
    expect(changed.byPackage.get(GUIDS.plain)?.materials).toEqual([{ objectPath: '/Game/Materials/Plain.Plain', source: '/Game/Shaders/Blur.glsl', defines: ['X=1'] }]);
    expect(fs.readFileSync(file).equals(bytes)).toBe(false);
    expect((await scanMaterials(await packagesOf(dir), inter)).read).toBe(0);
  });

  it('a ShaderMaterials.json of before is read once (no package read) and replaced by the table', async () => {
    const dir = await writeShaderProject(await tempDir());
    const inter = path.join(dir, 'Intermediates');
    const packages = await packagesOf(dir);
    const cold = await scanMaterials(packages, inter);
    // The version-1 JSON the cook wrote before: an entry per package, with its hash.
    const legacy = {
      version: 1,
      packages: Object.fromEntries(packages.map((r) => [r.guid, { hash: r.hash, materials: cold.byPackage.get(r.guid)?.materials ?? [] }])),
    };
    fs.rmSync(path.join(inter, MATERIALS_CACHE_FILE));
    fs.writeFileSync(path.join(inter, LEGACY_MATERIALS_CACHE_FILE), JSON.stringify(legacy));
    expect(packagesWithMaterials(inter)).toEqual(new Set([GUIDS.rock, GUIDS.plain, GUIDS.blur]));

    const first = await scanMaterials(packages, inter);
    expect(first.read).toBe(0);
    expect(plain(first)).toEqual(plain(cold));
    expect(fs.existsSync(path.join(inter, LEGACY_MATERIALS_CACHE_FILE))).toBe(false);
    expect(fs.existsSync(path.join(inter, MATERIALS_CACHE_FILE))).toBe(true);
    expect((await scanMaterials(packages, inter)).read).toBe(0);
  });

  it('a damaged table is read again from the packages, never a failure', async () => {
    const dir = await writeShaderProject(await tempDir());
    const inter = path.join(dir, 'Intermediates');
    const packages = await packagesOf(dir);
    const cold = await scanMaterials(packages, inter);
    const file = path.join(inter, MATERIALS_CACHE_FILE);
    const b = fs.readFileSync(file);
    b[b.byteLength - 12] ^= 0xff;
    fs.writeFileSync(file, b);
    // The daemon is not told "no package has materials" by a damaged table: it is told nothing.
    expect(packagesWithMaterials(inter)).toBeUndefined();
    const again = await scanMaterials(packages, inter);
    expect(again.read).toBe(4);
    expect(plain(again)).toEqual(plain(cold));
    expect((await scanMaterials(packages, inter)).read).toBe(0);
    fs.writeFileSync(file, 'garbage');
    expect(packagesWithMaterials(inter)).toBeUndefined();
    expect((await scanMaterials(packages, inter)).read).toBe(4);
    fs.rmSync(file);
    expect(packagesWithMaterials(inter)).toBeUndefined();
  });
  it('a table patched by record gives the bytes encode gives for the same records (hashes and materials changed, added, emptied)', async () => {
    await initHash();
    const g = (n: number) => n.toString(16).padStart(32, '0');
    const h = (n: number) => n.toString(16).padStart(16, '0');
    const blob = (n: number) => (n % 3 === 0 ? undefined : Buffer.from(`{"materials":[{"objectPath":"/Game/M${n}.M${n}","source":"/Game/S.glsl","defines":[${'"X",'.repeat(n % 5)}"Y"]}]}`));
    const n = 200;
    const guids = Array.from({ length: n }, (_, i) => g(1000 + ((i * 7919) % n)));
    const hashes = guids.map((_, i) => h(i + 1));
    const blobs = guids.map((_, i) => blob(i));
    const base = MaterialsTable.encode(guids, hashes, blobs);
    let seed = 7;
    const rnd = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let round = 0; round < 20; round++) {
      const next = { hashes: [...hashes], blobs: [...blobs] };
      const changes: Array<{ i: number; hash: string; blob: Uint8Array | undefined }> = [];
      const picked = new Set<number>();
      for (let c = 0; c < 1 + round * 3; c++) {
        const k = Math.floor(rnd() * n);
        if (picked.has(k)) continue;
        picked.add(k);
        const hash = h(5000 + round * 100 + c);
        const b = rnd() < 0.4 ? undefined : blob(Math.floor(rnd() * 50));
        const at = guids.indexOf(base.guid(k));
        next.hashes[at] = hash;
        next.blobs[at] = b;
        changes.push({ i: k, hash, blob: b });
      }
      const patched = base.patched(changes)!;
      expect(Buffer.from(patched.data).equals(Buffer.from(MaterialsTable.encode(guids, next.hashes, next.blobs).data))).toBe(true);
      expect(MaterialsTable.decode(Buffer.from(patched.data)).count).toBe(n);
    }
    // Nothing changed: the same bytes. A bad hash or a record named twice: no patch (the caller encodes).
    expect(Buffer.from(base.patched([])!.data).equals(Buffer.from(base.data))).toBe(true);
    expect(base.patched([{ i: 0, hash: 'xyz', blob: undefined }])).toBeUndefined();
    expect(base.patched([{ i: 1, hash: h(1), blob: undefined }, { i: 1, hash: h(2), blob: undefined }])).toBeUndefined();
    expect(base.patched([{ i: n, hash: h(1), blob: undefined }])).toBeUndefined();
  });

  it('a patch that keeps every blob length copies the table, and still gives encode\'s bytes from a table laid out otherwise', async () => {
    await initHash();
    const g = (n: number) => n.toString(16).padStart(32, '0');
    const h = (n: number) => n.toString(16).padStart(16, '0');
    const blob = (n: number, tag = 'A') => (n % 3 === 0 ? undefined : Buffer.from(`{"materials":[{"objectPath":"/Game/M${n}.M${n}","source":"/Game/${tag}.glsl","defines":[]}]}`));
    const n = 40;
    const guids = Array.from({ length: n }, (_, i) => g(1000 + i));
    const hashes = guids.map((_, i) => h(i + 1));
    const blobs = guids.map((_, i) => blob(i));
    const base = MaterialsTable.encode(guids, hashes, blobs);
    // New hashes, blobs of the same length (other bytes), an empty one left empty.
    const changes = [
      { i: 3, hash: h(900), blob: undefined },
      { i: 4, hash: h(901), blob: blob(4, 'B') },
      { i: 17, hash: h(902), blob: blob(17, 'C') },
    ];
    const next = { hashes: [...hashes], blobs: [...blobs] };
    for (const c of changes) {
      next.hashes[c.i] = c.hash;
      next.blobs[c.i] = c.blob;
    }
    const want = Buffer.from(MaterialsTable.encode(guids, next.hashes, next.blobs).data);
    expect(Buffer.from(base.patched(changes)!.data).equals(want)).toBe(true);
    // The same records with two blobs swapped in the blob section (a layout encode never writes):
    // the patch lays them out again, as encode does.
    const odd = Buffer.from(base.data);
    const rec = (k: number) => 16 + k * 32;
    const blobAt = 16 + n * 32;
    const [a, b] = [1, 2];
    const la = odd.readUInt32LE(rec(a) + 28);
    const lb = odd.readUInt32LE(rec(b) + 28);
    const oa = odd.readUInt32LE(rec(a) + 24);
    const bytesA = Buffer.from(odd.subarray(blobAt + oa, blobAt + oa + la));
    const bytesB = Buffer.from(odd.subarray(blobAt + oa + la, blobAt + oa + la + lb));
    bytesB.copy(odd, blobAt + oa);
    bytesA.copy(odd, blobAt + oa + lb);
    odd.writeUInt32LE(oa + lb, rec(a) + 24);
    odd.writeUInt32LE(oa, rec(b) + 24);
    odd.writeBigUInt64LE(xxh64(odd.subarray(0, odd.byteLength - 8)), odd.byteLength - 8);
    const shuffled = MaterialsTable.decode(odd);
    expect(Buffer.from(shuffled.blob(a)!).equals(bytesA)).toBe(true);
    expect(Buffer.from(shuffled.patched(changes)!.data).equals(want)).toBe(true);
  });

  it('a one-package change: the early material-class-only scan writes nothing, the scan after it writes the bytes a scan from scratch writes', async () => {
    const dir = await writeShaderProject(await tempDir());
    const inter = path.join(dir, 'Intermediates');
    const file = path.join(inter, MATERIALS_CACHE_FILE);
    await scanMaterials(await packagesOf(dir), inter);
    const before = fs.readFileSync(file);
    const stat = fs.statSync(file);
    // The map (not a material) is edited, as an editor saves it.
    await writeShaderProject(dir, {
      'Content/Maps/Main.lasset': {
        imports: [hard(GUIDS.rock), hard(GUIDS.plain), hard(GUIDS.blur)],
        exports: [{ guid: GUIDS.map, name: 'Main', className: '/Script/Engine.CWorld', properties: [prop.int('X', 2)] }],
      },
    });
    const packages = await packagesOf(dir);
    const early = await scanMaterials(packages, inter, { materialClassOnly: true });
    expect(early.read).toBe(0);
    expect(fs.readFileSync(file).equals(before)).toBe(true);
    expect(fs.statSync(file).mtimeMs).toBe(stat.mtimeMs);
    const after = await scanMaterials(packages, inter);
    expect(after.read).toBe(1);
    const patched = fs.readFileSync(file);
    expect(patched.equals(before)).toBe(false);
    // From scratch (no table): every package read, the table encoded whole.
    fs.rmSync(file);
    const scratch = await scanMaterials(packages, inter);
    expect(scratch.read).toBe(4);
    expect(fs.readFileSync(file).equals(patched)).toBe(true);
    expect(plain(after)).toEqual(plain(scratch));
  });
});
