/**
 * AssetRegistry.bin spliced from the one it replaces (cook/cookedRegistryOutput.ts): entries whose
 * GUID, name, path and package content are unchanged are copied, the rest encoded; the bytes must
 * always be exactly what encoding every entry gives.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cooker } from '../../cook/Cooker.js';
import { cookProject } from '../../cook/cookProject.js';
import { REGISTRY_HASHES_FILE } from '../../cook/cookedRegistryOutput.js';
import { decodeCookedRegistry, encodeCookedRegistry, encodeCookedRegistryReusing, type CookedRegistryAsset } from '../../src/format/cookedRegistry.js';
import { DependencyType } from '../../src/format/packageTypes.js';
import { hard, prop } from '../../src/format/packageBuilder.js';
import { initHash } from '../../src/util/hash.js';
import { g, tempDir, writeFixture, writeProject } from './helpers.js';

type Asset = CookedRegistryAsset & { hash: string };

describe('encodeCookedRegistryReusing', () => {
  it('gives encodeCookedRegistry bytes whatever changed: content, names, paths, assets added and removed, non-ASCII names, a prev that is not a registry', async () => {
    await initHash();
    let seed = 11;
    const rnd = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    let contents = 0;
    const make = (i: number): Asset => ({
      guid: g(0x1000 + ((i * 7919) % 100_000)),
      name: i % 17 === 0 ? `Méta${i}` : `Asset${i}`,
      className: i % 5 === 0 ? '/Script/Engine.CTexture' : '/Script/Engine.CStaticMesh',
      packagePath: `/Game/Set${i % 7}/Asset${i}`,
      flags: i % 3 === 0 ? 1 : 0,
      dependencies: Array.from({ length: i % 4 }, (_, d) => ({ guid: g(0x1000 + d), type: d % 2 ? DependencyType.Soft : DependencyType.Hard })),
      hash: (contents++).toString(16).padStart(16, '0'),
    });
    const texts = [{ guid: g(0x90000), path: '/Game/UI/Menu.rml' }, { guid: g(0x90001), path: '/Game/UI/Style.rcss' }];
    const byGuid = (a: Asset, b: Asset) => (a.guid < b.guid ? -1 : 1);
    let current = Array.from({ length: 300 }, (_, i) => make(i)).sort(byGuid);
    let prev = encodeCookedRegistry(current, texts);
    let next = 300;
    for (let round = 0; round < 25; round++) {
      const before = current;
      const after = before.map((a) => {
        const r = rnd();
        if (r < 0.05) return { ...a, className: `${a.className}X`, flags: a.flags ^ 1, hash: (contents++).toString(16).padStart(16, '0') }; // content changed
        if (r < 0.08) return { ...a, dependencies: [...a.dependencies, { guid: g(5), type: DependencyType.Hard }], hash: (contents++).toString(16).padStart(16, '0') };
        if (r < 0.1) return { ...a, name: `${a.name}R`, packagePath: `${a.packagePath}R` }; // renamed, same content
        if (r < 0.11) return { ...a, name: `${a.name}ü` }; // a non-ASCII name, same content
        return a;
      });
      const kept = after.filter(() => rnd() > 0.02);
      for (let n = Math.floor(rnd() * 4); n > 0; n--) kept.push(make(next++));
      current = kept.sort(byGuid);
      const hashes = before.map((a) => a.hash);
      const spliced = encodeCookedRegistryReusing(current, texts, prev, (a, k) => hashes[k] === a.hash);
      const whole = encodeCookedRegistry(current, texts);
      expect(Buffer.from(spliced).equals(Buffer.from(whole))).toBe(true);
      prev = whole;
    }
    // The copies are real: an entry vouched for wrongly (content changed, said the same) comes out as it was.
    const changed = current.map((a, i) => (i === 3 ? { ...a, flags: a.flags ^ 1 } : a));
    expect(Buffer.from(encodeCookedRegistryReusing(changed, texts, prev, () => true)).equals(Buffer.from(encodeCookedRegistry(changed, texts)))).toBe(false);
    // Not a registry (or cut short): nothing is copied, the bytes are encoded.
    for (const bad of [new Uint8Array(40), prev.subarray(0, prev.byteLength >> 1), Buffer.from('LREG garbage garbage garbage')]) {
      expect(Buffer.from(encodeCookedRegistryReusing(current, texts, bad, () => true)).equals(Buffer.from(encodeCookedRegistry(current, texts)))).toBe(true);
    }
  });
});

const mesh = (i: number, label = `m${i}`, imports: string[] = []) => ({
  imports: imports.map((x) => hard(x)),
  exports: [{ guid: g(0x100 + i), name: `Mesh${i}`, className: '/Script/Engine.CStaticMesh', properties: [prop.str('Label', label)] }],
});
const map = (n: number) => ({
  imports: Array.from({ length: n }, (_, i) => hard(g(0x100 + i))),
  exports: [{ guid: g(1), name: 'Main', className: '/Script/Engine.CWorld', properties: [prop.str('Label', 'main')] }],
});

let dir: string;
beforeAll(async () => {
  await initHash();
  dir = await tempDir('lc-regout-');
  const files: Parameters<typeof writeProject>[2] = { 'Content/Maps/Main.lasset': map(6), 'Content/UI/Menu.rml': { text: '<rml/>', guid: g(0x900) } };
  for (let i = 0; i < 6; i++) files[`Content/Meshes/Mesh${i}.lasset`] = mesh(i);
  await writeProject(dir, { name: 'RegOut', cookRoots: ['/Game/Maps/Main', '/Game/UI/Menu.rml'] }, files);
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

/** A cook, then AssetRegistry.bin against every shipped record encoded afresh. */
async function cookAndCompare(): Promise<Buffer> {
  const s = await cookProject({ projectDir: dir, report: false });
  expect(s.ok).toBe(true);
  const onDisk = fs.readFileSync(path.join(dir, 'Saved/Cooked/AssetRegistry.bin'));
  const c = await Cooker.open({ projectDir: dir });
  try {
    const plan = c.plan();
    const whole = c.registryBytes([...plan.packages, ...plan.textAssets].map((a) => a.record));
    expect(onDisk.equals(Buffer.from(whole))).toBe(true);
  } finally {
    c.close();
  }
  return onDisk;
}

/** Replace a file the way an editor saves (new file, renamed over). */
const save = async (rel: string, spec: Parameters<typeof writeFixture>[2]) => {
  await writeFixture(dir, `${rel}.new`, spec);
  await fsp.rename(path.join(dir, `${rel}.new`), path.join(dir, rel));
};

describe('a full cook writes AssetRegistry.bin from the one it replaces', () => {
  it('the same bytes as encoding every entry, after edits that keep, change and move entries, and with the sidecar damaged or gone', async () => {
    const sidecar = path.join(dir, 'Intermediates', REGISTRY_HASHES_FILE);
    const first = await cookAndCompare();
    expect(fs.existsSync(sidecar)).toBe(true);

    // A property edit: the entry is the same, so is the file (not rewritten).
    const registry = path.join(dir, 'Saved/Cooked/AssetRegistry.bin');
    const mtime = fs.statSync(registry).mtimeMs;
    const sidecarBefore = fs.readFileSync(sidecar);
    await save('Content/Meshes/Mesh1.lasset', mesh(1, 'edited'));
    expect((await cookAndCompare()).equals(first)).toBe(true);
    expect(fs.statSync(registry).mtimeMs).toBe(mtime);
    // No planning fact changed (the plan was carried): the registry was kept, nothing encoded, the
    // sidecar untouched (its claim about Mesh1's old content stays true; the next encode redoes that entry).
    expect(fs.readFileSync(sidecar).equals(sidecarBefore)).toBe(true);

    // A new import: that entry changes.
    await save('Content/Meshes/Mesh2.lasset', mesh(2, 'm2', [g(0x103)]));
    const withDep = await cookAndCompare();
    expect(decodeCookedRegistry(withDep, 'AssetRegistry.bin').assets.find((a) => a.guid === g(0x102))?.dependencies).toEqual([{ guid: g(0x103), type: DependencyType.Hard }]);

    // Moved (same content, new path): its name and path are not the old entry's.
    await writeFixture(dir, 'Content/Props/Mesh4.lasset', mesh(4));
    await fsp.rm(path.join(dir, 'Content/Meshes/Mesh4.lasset'));
    const moved = await cookAndCompare();
    expect(decodeCookedRegistry(moved, 'AssetRegistry.bin').assets.find((a) => a.guid === g(0x104))?.packagePath).toBe('/Game/Props/Mesh4');

    // A damaged sidecar serves nothing; a missing one neither.
    const b = fs.readFileSync(sidecar);
    b[30] ^= 0xff;
    fs.writeFileSync(sidecar, b);
    await save('Content/Meshes/Mesh3.lasset', mesh(3, 'm3', [g(0x100)]));
    await cookAndCompare();
    fs.rmSync(sidecar);
    await save('Content/Meshes/Mesh5.lasset', mesh(5, 'm5', [g(0x101)]));
    await cookAndCompare();
    expect(fs.existsSync(sidecar)).toBe(true);
  });
});
