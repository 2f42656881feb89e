/**
 * One read per source on a first cook (src/registry/keptSources.ts): the registry's cold scan keeps
 * the bytes of each small package it read whole, and the cook workers cook those bytes instead of
 * reading the file again. The records and the registry cache must be exactly what a scan without
 * it makes, the cooked bytes exactly what a cook that reads the files makes, and what the cook
 * cooks is what the scan hashed.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/index.js';
import { Cooker, cookOrder } from '../../cook/Cooker.js';
import { generateProject } from '../../samples/index.js';
import { hard, prop } from '../../src/format/packageBuilder.js';
import { AssetRegistry } from '../../src/registry/AssetRegistry.js';
import { KeptSources } from '../../src/registry/keptSources.js';
import { hashHex, initHash, xxh64 } from '../../src/util/hash.js';
import { asset, g, outputBytes, tempDir, writeFixture, writeProject } from './helpers.js';

beforeAll(initHash);
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await fsp.rm(d, { recursive: true, force: true });
});
const envBefore = process.env.LUMINA_KEEP_SOURCES;
afterEach(() => {
  if (envBefore === undefined) delete process.env.LUMINA_KEEP_SOURCES;
  else process.env.LUMINA_KEEP_SOURCES = envBefore;
});

async function scanOnce(dir: string, keep?: KeptSources) {
  await fsp.rm(path.join(dir, 'Intermediates'), { recursive: true, force: true });
  const registry = await AssetRegistry.open({ config: loadConfig(dir).config, logProblems: false });
  try {
    const scan = await registry.scan({ keep });
    await registry.save();
    const cache = await fsp.readFile(path.join(dir, 'Intermediates/AssetRegistry.assetdb'));
    return { scan, records: JSON.stringify(registry.all()), cache };
  } finally {
    registry.close();
  }
}

describe('one read per source', () => {
  it("a cold scan keeps each small package's exact bytes, no text asset's; records and cache bytes as without it", async () => {
    const dir = await tempDir('lumina-oneread-scan-');
    dirs.push(dir);
    await generateProject({ out: dir, assets: 150, seed: 3, textureEncoder: 'rgba8' });
    // One package larger than a scan's first read (256 KiB): read in pieces, so not kept.
    await writeFixture(dir, 'Content/Big/Huge.lasset', asset(g(900), 'Huge', { properties: Array.from({ length: 6 }, (_, i) => prop.str(`Blob${i}`, 'x'.repeat(60_000))) }));
    const plain = await scanOnce(dir);
    const keep = new KeptSources(64 << 20);
    const kept = await scanOnce(dir, keep);
    expect(kept.scan.read).toBe(plain.scan.read);
    expect(kept.records).toBe(plain.records);
    expect(kept.cache.equals(plain.cache)).toBe(true);

    const packages = JSON.parse(plain.records).filter((r: { kind: string }) => r.kind === 'package');
    const huge = path.join(dir, 'Content/Big/Huge.lasset');
    expect(keep.size).toBe(packages.length - 1);
    let bytes = 0;
    for (const r of packages as Array<{ file: string; hash: string }>) {
      const b = keep.take(r.file);
      if (r.file === huge) {
        expect(b).toBeUndefined();
        continue;
      }
      expect(b).toBeDefined();
      // The file's bytes, the hash the record has.
      expect(Buffer.from(b!).equals(fs.readFileSync(r.file))).toBe(true);
      expect(hashHex(xxh64(b!))).toBe(r.hash);
      bytes += b!.byteLength;
    }
    expect(bytes).toBeGreaterThan(0);
    expect(keep.size).toBe(0);
    expect(keep.bytes).toBe(0);

    // Bounded: never past the budget; nothing for a scan reading more files than maxFiles.
    const small = new KeptSources(Math.floor(bytes / 3));
    await scanOnce(dir, small);
    expect(small.size).toBeGreaterThan(0);
    expect(small.size).toBeLessThan(packages.length / 2);
    expect(small.bytes).toBeLessThanOrEqual(small.budget);
    const few = new KeptSources(64 << 20, 10);
    await scanOnce(dir, few);
    expect(few.size).toBe(0);
  });

  it('a first cook from the kept bytes writes the same paks and cooked files as one whose workers read every file', async () => {
    const kept = await tempDir('lumina-oneread-kept-');
    const read = await tempDir('lumina-oneread-read-');
    dirs.push(kept, read);
    await generateProject({ out: kept, assets: 300, seed: 13, textureEncoder: 'rgba8' });
    await generateProject({ out: read, assets: 300, seed: 13, textureEncoder: 'rgba8' });
    const cook = async (dir: string) => {
      const cooker = await Cooker.open({ projectDir: dir, remoteCache: false });
      try {
        return await cooker.cook({ report: false });
      } finally {
        cooker.close();
      }
    };
    const a = await cook(kept);
    process.env.LUMINA_KEEP_SOURCES = '0';
    const b = await cook(read);
    expect(a.ok).toBe(true);
    expect(a.cooked).toBeGreaterThan(100);
    expect(b.cooked).toBe(a.cooked);
    const x = await outputBytes(kept);
    const y = await outputBytes(read);
    expect([...y.keys()]).toEqual([...x.keys()]);
    expect([...x.keys()].filter((k) => k.endsWith('.pak')).length).toBe(a.paks.length);
    expect([...x.keys()].filter((k) => !x.get(k)!.equals(y.get(k)!))).toEqual([]);
  });

  it('the cook cooks the bytes the scan hashed: a source replaced between the scan and the cook is cooked as scanned, and the next cook sees the change', async () => {
    const spec = (label: string) => ({
      'Content/Maps/Main.lasset': asset(g(1), 'Main', { className: '/Script/Engine.CWorld', imports: [hard(g(2))] }),
      'Content/Props/Rock.lasset': asset(g(2), 'Rock', { properties: [prop.str('Label', label)] }),
    });
    const cfg = { cookRoots: ['/Game/Maps/Main'], textures: { encoder: 'rgba8' }, cook: { workers: 1 } };
    const dir = await tempDir('lumina-oneread-swap-');
    const ref = await tempDir('lumina-oneread-ref-');
    dirs.push(dir, ref);
    await writeProject(dir, cfg, spec('scanned'));
    // The reference: a plain cook of the content the scan saw.
    await writeProject(ref, cfg, spec('scanned'));
    process.env.LUMINA_KEEP_SOURCES = '0';
    const r = await Cooker.open({ projectDir: ref, remoteCache: false });
    try {
      expect((await r.cook({ report: false })).cooked).toBe(2);
    } finally {
      r.close();
    }
    delete process.env.LUMINA_KEEP_SOURCES;
    const rock = 'Saved/Cooked/Game/Props/Rock.lasset';
    const scannedCook = await fsp.readFile(path.join(ref, rock));

    const cooker = await Cooker.open({ projectDir: dir, remoteCache: false });
    try {
      const scanned = cooker.registry.get(g(2))!;
      // Replaced after the scan (a new file renamed over it, as an editor saves).
      const tmp = path.join(dir, 'rock.tmp');
      await writeProject(ref, cfg, spec('edited later'));
      await fsp.copyFile(path.join(ref, 'Content/Props/Rock.lasset'), tmp);
      await fsp.rename(tmp, path.join(dir, 'Content/Props/Rock.lasset'));
      const s = await cooker.cook({ report: false });
      expect(s).toMatchObject({ ok: true, cooked: 2 });
      // Cooked from the bytes whose hash the registry holds (a worker reading the file would cook the edit).
      expect((await fsp.readFile(path.join(dir, rock))).equals(scannedCook)).toBe(true);
      expect(cooker.registry.get(g(2))!.hash).toBe(scanned.hash);
    } finally {
      cooker.close();
    }
    // The next cook sees the new file and cooks it.
    const next = await Cooker.open({ projectDir: dir, remoteCache: false });
    try {
      expect(await next.cook({ report: false })).toMatchObject({ ok: true, cooked: 1, cached: 1 });
      expect((await fsp.readFile(path.join(dir, rock))).equals(scannedCook)).toBe(false);
    } finally {
      next.close();
    }
  });

  it('queues the material packages first, then the packages with the text assets spread among them, none lost', () => {
    const a = (n: number, kind: 'package' | 'text', className = 'C') => ({ record: { guid: g(n), kind, className } }) as unknown as Parameters<typeof cookOrder>[0][number];
    const packages = Array.from({ length: 10 }, (_, i) => a(i + 1, 'package'));
    const texts = [a(20, 'text', 'Text.txt'), a(21, 'text', 'Text.json')];
    const material = a(30, 'package', 'M');
    const order = cookOrder([...packages, material, ...texts], (x) => x.record.className === 'M');
    expect(order.map((x) => x.record.guid)).toEqual([g(30), g(1), g(2), g(3), g(20), g(4), g(5), g(6), g(21), g(7), g(8), g(9), g(10)]);
    expect(cookOrder([...texts], () => false)).toEqual(texts);
  });
});
