/**
 * A first cook's registry scan reads on the cook workers (CookPool as the registry's ScanReaders,
 * src/registry/readPool.ts). What it makes must be exactly what the main thread alone makes: the
 * records, the problems (corrupt, truncated, asset-less packages named by file; a duplicate GUID),
 * the registry cache bytes, and the bytes it keeps for the cook.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/index.js';
import { Cooker } from '../../cook/Cooker.js';
import { CookPool } from '../../cook/pool/CookPool.js';
import { generateProject } from '../../samples/index.js';
import { prop } from '../../src/format/packageBuilder.js';
import { AssetRegistry } from '../../src/registry/AssetRegistry.js';
import { KeptSources } from '../../src/registry/keptSources.js';
import { hashHex, initHash, xxh64 } from '../../src/util/hash.js';
import { asset, g, tempDir, writeFixture } from './helpers.js';

beforeAll(initHash);
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await fsp.rm(d, { recursive: true, force: true });
});

/** A generated project plus the bad inputs a scan must name; returns the bad files. */
async function project(prefix: string): Promise<{ dir: string; bad: string[] }> {
  const dir = await tempDir(prefix);
  dirs.push(dir);
  await generateProject({ out: dir, assets: 400, seed: 29, textureEncoder: 'rgba8' });
  const bad: string[] = [];
  const put = async (rel: string, bytes: Uint8Array | string) => {
    const file = path.join(dir, rel);
    await fsp.mkdir(path.dirname(file), { recursive: true });
    await fsp.writeFile(file, bytes);
    return file;
  };
  bad.push(await put('Content/Bad/Garbage.lasset', 'not a package at all, but long enough to have a header....'));
  await writeFixture(dir, 'Content/Bad/Whole.lasset', asset(g(0xb001), 'Whole', { properties: [prop.str('Label', 'x'.repeat(300))] }));
  const whole = await fsp.readFile(path.join(dir, 'Content/Bad/Whole.lasset'));
  bad.push(await put('Content/Bad/Cut.lasset', whole.subarray(0, 80)));
  bad.push(await put('Content/Bad/CutTables.lasset', whole.subarray(0, whole.byteLength - 200)));
  // A package whose asset export is named for another file: no asset.
  bad.push(await put('Content/Bad/Renamed.lasset', whole));
  await fsp.rm(path.join(dir, 'Content/Bad/Whole.lasset'));
  // Two files, one GUID: the second (by path) is reported.
  await writeFixture(dir, 'Content/Dupes/A.lasset', asset(g(0xd0d0), 'A'));
  await writeFixture(dir, 'Content/Dupes/B.lasset', asset(g(0xd0d0), 'B'));
  bad.push(path.join(dir, 'Content/Dupes/B.lasset'));
  // Larger than a scan's first read (256 KiB): read in pieces, never kept.
  await writeFixture(dir, 'Content/Big/Huge.lasset', asset(g(0xb16), 'Huge', { properties: Array.from({ length: 6 }, (_, i) => prop.str(`Blob${i}`, 'y'.repeat(60_000))) }));
  return { dir, bad: bad.sort() };
}

interface ScanOut {
  counts: { assets: number; read: number; cached: number };
  problems: unknown;
  records: string;
  cache: Buffer;
  kept: Map<string, Buffer>;
}

async function scan(dir: string, readers?: CookPool, opts: { mainThreadReads?: boolean } = {}): Promise<ScanOut> {
  await fsp.rm(path.join(dir, 'Intermediates'), { recursive: true, force: true });
  const reg = await AssetRegistry.open({ config: loadConfig(dir).config, logProblems: false, readThreadsFrom: 1, ...opts });
  const keep = new KeptSources(64 << 20);
  try {
    const r = await reg.scan({ keep, readers });
    const kept = new Map<string, Buffer>();
    for (const a of reg.all()) {
      const b = keep.take(a.file);
      if (b) kept.set(a.file, Buffer.from(b));
    }
    return {
      counts: { assets: r.assets, read: r.read, cached: r.cached },
      problems: r.problems,
      records: JSON.stringify(reg.all()),
      cache: await fsp.readFile(path.join(dir, 'Intermediates/AssetRegistry.assetdb')),
      kept,
    };
  } finally {
    reg.close();
  }
}

function pool(): CookPool {
  return new CookPool({ workers: 2, settings: { editorOnlyClassPrefixes: [], compressionLevel: 6, textures: { encoder: 'rgba8' } as never, onCookFailure: 'fail', schemasDir: null } });
}

describe('a cold scan on the cook workers', () => {
  it('gives the records, problems, cache bytes and kept bytes of a scan on the main thread alone', async () => {
    const { dir, bad } = await project('lumina-scanworkers-');
    const serial = await scan(dir);
    expect(serial.counts.read).toBeGreaterThan(400);
    expect((serial.problems as Array<{ file: string }>).map((p) => p.file).sort()).toEqual(bad);
    // Every small package read whole is kept, with the bytes its hash is of; the huge one is not.
    expect(serial.kept.size).toBeGreaterThan(300);
    expect(serial.kept.has(path.join(dir, 'Content/Big/Huge.lasset'))).toBe(false);

    const p = pool();
    p.start();
    try {
      // Every batch on the workers, then with the main thread reading until they are ready.
      for (const mainThreadReads of [false, true]) {
        const before = p.scanBatches;
        const onWorkers = await scan(dir, p, { mainThreadReads });
        if (!mainThreadReads) expect(p.scanBatches - before).toBeGreaterThan(5);
        expect(onWorkers.counts).toEqual(serial.counts);
        expect(onWorkers.problems).toEqual(serial.problems);
        expect(onWorkers.records).toBe(serial.records);
        expect(onWorkers.cache.equals(serial.cache)).toBe(true);
        expect([...onWorkers.kept.keys()].sort()).toEqual([...serial.kept.keys()].sort());
        for (const [file, b] of onWorkers.kept) {
          expect(b.equals(fs.readFileSync(file))).toBe(true);
          expect(b.equals(serial.kept.get(file)!)).toBe(true);
        }
        const records = JSON.parse(onWorkers.records) as Array<{ file: string; hash: string }>;
        for (const r of records) if (onWorkers.kept.has(r.file)) expect(hashHex(xxh64(onWorkers.kept.get(r.file)!))).toBe(r.hash);
      }
    } finally {
      await p.close();
    }
    // A pool that cannot read (closed): every batch comes back to the main thread, same result.
    const closed = pool();
    await closed.close();
    const fallback = await scan(dir, closed);
    expect(fallback.records).toBe(serial.records);
    expect(fallback.problems).toEqual(serial.problems);
    expect(fallback.cache.equals(serial.cache)).toBe(true);
    expect(fallback.kept.size).toBe(serial.kept.size);
  });

  it('a first cook scans on its workers and leaves the registry cache a main-thread scan writes', async () => {
    const { dir } = await project('lumina-scanworkers-cook-');
    const cooker = await Cooker.open({ projectDir: dir, remoteCache: false });
    try {
      // The bad packages are reached by no root: reported, not fatal.
      const s = await cooker.cook({ report: false });
      expect(s.ok).toBe(true);
      expect(s.cooked).toBeGreaterThan(100);
    } finally {
      cooker.close();
    }
    const cooked = await fsp.readFile(path.join(dir, 'Intermediates/AssetRegistry.assetdb'));
    const serial = await scan(dir);
    expect(cooked.equals(serial.cache)).toBe(true);
  });
});
