/**
 * The cook worker pool (cook/pool): packages cook on worker threads in batches. The bytes must not
 * depend on how many workers cooked them; a package a worker cannot cook fails naming its file;
 * a worker that dies is replaced, the file it died on fails alone with a clear error, and the
 * cook neither hangs nor loses the other assets.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import fs from 'node:fs';
import { Cooker } from '../../cook/Cooker.js';
import { CACHE_FILE_NAME, CookCache, JOURNAL_FILE_NAME } from '../../cook/cookCache.js';
import { readCookJournal } from '../../cook/cookJournal.js';
import { CookPool, type JobResult } from '../../cook/pool/CookPool.js';
import { DEFAULTS } from '../../config/defaults.js';
import { generateProject } from '../../samples/index.js';
import { encodeProperties } from '../../src/format/properties.js';
import { hard, prop } from '../../src/format/packageBuilder.js';
import { initHash } from '../../src/util/hash.js';
import { asset, differingFiles, g, outputBytes, tempDir, writeFixture, writeProject } from './helpers.js';

beforeAll(initHash);
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await fsp.rm(d, { recursive: true, force: true });
});

async function setWorkers(dir: string, workers: number): Promise<void> {
  const file = path.join(dir, 'lumina-cook.json');
  const cfg = JSON.parse(await fsp.readFile(file, 'utf8'));
  await fsp.writeFile(file, JSON.stringify({ ...cfg, cook: { ...cfg.cook, workers } }));
}

/** Cook with a fresh Cooker; returns the summary and how many workers it started. */
async function cook(dir: string, exitOn?: string) {
  const cooker = await Cooker.open({ projectDir: dir, remoteCache: false });
  cooker.workerExitOn = exitOn;
  try {
    const summary = await cooker.cook({ report: false });
    return { summary, workers: cooker.workersStarted };
  } finally {
    cooker.close();
  }
}

describe('cook worker pool', () => {
  it('cooks the same bytes with 1 worker and with 3: every pak and every cooked file', async () => {
    const one = await tempDir('lumina-pool1-');
    const three = await tempDir('lumina-pool3-');
    dirs.push(one, three);
    // Textures (rgba8, mips), stripped exports and soft references: the work that moved to the workers.
    await generateProject({ out: one, assets: 300, seed: 11, textureEncoder: 'rgba8' });
    await generateProject({ out: three, assets: 300, seed: 11, textureEncoder: 'rgba8' });
    await setWorkers(one, 1);
    await setWorkers(three, 3);
    const a = await cook(one);
    const b = await cook(three);
    expect(a.summary.ok).toBe(true);
    expect(b.summary.ok).toBe(true);
    expect(a.summary.cooked).toBeGreaterThan(100);
    expect(b.summary.cooked).toBe(a.summary.cooked);
    expect(a.workers).toBe(1);
    expect(b.workers).toBe(3);
    const x = await outputBytes(one);
    const y = await outputBytes(three);
    expect([...x.keys()].filter((k) => k.endsWith('.pak')).length).toBeGreaterThan(0);
    expect(differingFiles(x, y)).toEqual([]);
  });

  const broken = () => {
    const bad = encodeProperties([prop.int('N', 5)]).slice();
    new DataView(bad.buffer).setInt32(20, 2, true);
    return bad;
  };

  async function smallProject(rockBroken: boolean): Promise<string> {
    const dir = await tempDir();
    dirs.push(dir);
    return writeProject(dir, { cookRoots: ['/Game/Maps/Main'], textures: { encoder: 'rgba8' }, cook: { workers: 2 } }, {
      'Content/Maps/Main.lasset': { imports: [hard(g(2)), hard(g(3)), hard(g(4))], exports: [{ guid: g(1), name: 'Main', className: '/Script/Engine.CWorld' }] },
      'Content/Props/Rock.lasset': rockBroken ? { imports: [], exports: [{ guid: g(2), name: 'Rock', className: 'C', data: broken() }] } : asset(g(2), 'Rock'),
      'Content/Props/Tree.lasset': asset(g(3), 'Tree', { properties: [prop.str('Label', 'tree')] }),
      'Content/Props/Bush.lasset': asset(g(4), 'Bush'),
    });
  }

  it('a cook with no cook cache starts its workers when it opens (they load while the registry scans); one with a cache or a remote cache does not', async () => {
    const dir = await smallProject(false);
    const opened = await Cooker.open({ projectDir: dir, remoteCache: false });
    try {
      // Started before the scan, and the very ones the cook then uses.
      expect(opened.workersStarted).toBe(2);
      expect((await opened.cook({ report: false })).cooked).toBe(4);
      expect(opened.workersStarted).toBe(2);
    } finally {
      opened.close();
    }
    const warm = await Cooker.open({ projectDir: dir, remoteCache: false });
    try {
      expect(warm.workersStarted).toBe(0);
    } finally {
      warm.close();
    }
    await fsp.rm(path.join(dir, 'Intermediates'), { recursive: true });
    // A remote cache may supply every asset: no worker until a package actually cooks here.
    const remote = await Cooker.open({ projectDir: dir, remoteCache: { url: 'http://127.0.0.1:9/', read: true, write: false } });
    try {
      expect(remote.workersStarted).toBe(0);
    } finally {
      remote.close();
    }
  });

  it("a package the worker cannot cook fails with the cook's typed error naming its file; the rest cook", async () => {
    const dir = await smallProject(true);
    const { summary, workers } = await cook(dir);
    expect(workers).toBeGreaterThan(0);
    expect(summary).toMatchObject({ ok: false, failed: 1, cooked: 3 });
    expect(summary.problems.filter((p) => p.severity === 'error').map(({ code, file }) => ({ code, file }))).toEqual([
      { code: 'PACKAGE_INVALID', file: path.join(dir, 'Content/Props/Rock.lasset') },
    ]);
    expect(summary.problems.find((p) => p.code === 'PACKAGE_INVALID')!.message).toContain('property N value');
  });

  it('an output the worker cannot write fails that asset with IO_FAILED naming the output, leaves no temp file, and the rest cook', async () => {
    const dir = await smallProject(false);
    // A folder where Tree's cooked file goes: the worker's rename onto it fails (EISDIR).
    const tree = path.join(dir, 'Saved/Cooked/Game/Props/Tree.lasset');
    await fsp.mkdir(tree, { recursive: true });
    const { summary, workers } = await cook(dir);
    expect(workers).toBeGreaterThan(0);
    expect(summary).toMatchObject({ ok: false, failed: 1, cooked: 3 });
    const errs = summary.problems.filter((p) => p.severity === 'error');
    expect(errs.map(({ code, file }) => ({ code, file }))).toEqual([{ code: 'IO_FAILED', file: tree }]);
    expect(errs[0].message).toMatch(/^write failed: .*EISDIR/);
    // Nothing half-written beside it; the others are there, whole.
    expect((await fsp.readdir(path.dirname(tree))).sort()).toEqual(['Bush.lasset', 'Rock.lasset', 'Tree.lasset']);
    expect(await fsp.readdir(tree)).toEqual([]);
    expect((await fsp.readFile(path.join(dir, 'Saved/Cooked/Game/Props/Rock.lasset'))).subarray(0, 4).toString()).toBe('LCKD');
  });

  it('a worker that dies is replaced: the file it died on fails alone naming it, the others cook, nothing hangs', async () => {
    const dir = await smallProject(false);
    const { summary, workers } = await cook(dir, 'Tree.lasset');
    const tree = path.join(dir, 'Content/Props/Tree.lasset');
    expect(summary).toMatchObject({ ok: false, failed: 1, cooked: 3 });
    expect(summary.problems.filter((p) => p.severity === 'error')).toEqual([
      { code: 'COOK_FAILED', message: 'the cook worker stopped while cooking this file (exit code 7)', file: tree, severity: 'error' },
    ]);
    // The worker died twice (its batch, then the file alone): both were replaced.
    expect(workers).toBeGreaterThanOrEqual(3);
    // What did cook is cached: the next cook (no fault) cooks only the file that failed.
    const again = await cook(dir);
    expect(again.summary).toMatchObject({ ok: true, cooked: 1, cached: 3, failed: 0 });
  });

  it('a re-cook that finds a few changed packages, one corrupt, cooks them on the main thread: the corrupt one fails with its typed error', async () => {
    const dir = await smallProject(false);
    expect((await cook(dir)).summary).toMatchObject({ ok: true, cooked: 4 });
    await writeFixture(dir, 'Content/Props/Rock.lasset', { imports: [], exports: [{ guid: g(2), name: 'Rock', className: 'C', data: broken() }] });
    const { summary, workers } = await cook(dir);
    expect(workers).toBe(0);
    expect(summary).toMatchObject({ ok: false, failed: 1, cooked: 0, cached: 3 });
    expect(summary.problems.filter((p) => p.severity === 'error').map(({ code, file }) => ({ code, file }))).toEqual([
      { code: 'PACKAGE_INVALID', file: path.join(dir, 'Content/Props/Rock.lasset') },
    ]);
    expect(summary.problems.find((p) => p.code === 'PACKAGE_INVALID')!.message).toContain('property N value');
  });

  it('a re-cook with a few changed packages cooks them on the main thread: no worker, the same bytes as a cook on workers', async () => {
    const dir = await tempDir('lumina-pool-few-');
    const fresh = await tempDir('lumina-pool-fresh-');
    dirs.push(dir, fresh);
    await generateProject({ out: dir, assets: 120, seed: 5, textureEncoder: 'rgba8' });
    const first = await cook(dir);
    expect(first.summary.ok).toBe(true);
    expect(first.workers).toBeGreaterThan(0);
    // Two packages change (a texture and another): cooked again here, without a worker.
    const reports = first.summary.assetReports.filter((a) => a.file.endsWith('.lasset') && a.status === 'cooked');
    const texture = reports.find((a) => a.path.includes('/Textures/'))!;
    const other = reports.find((a) => !a.path.includes('/Textures/') && !a.path.includes('/Maps/'))!;
    for (const a of [texture, other]) {
      const bytes = await fsp.readFile(a.file);
      // One byte past the end of the file changes its hash, not what it parses to.
      await fsp.writeFile(a.file, Buffer.concat([bytes, Buffer.from([0])]));
    }
    const again = await cook(dir);
    expect(again.summary).toMatchObject({ ok: true, cooked: 2, failed: 0 });
    expect(again.workers).toBe(0);
    // A first cook of the same content (on workers) gives the same bytes.
    await fsp.cp(dir, fresh, { recursive: true });
    await fsp.rm(path.join(fresh, 'Saved'), { recursive: true });
    await fsp.rm(path.join(fresh, 'Intermediates'), { recursive: true });
    const clean = await cook(fresh);
    expect(clean.workers).toBeGreaterThan(0);
    const x = await outputBytes(dir);
    const y = await outputBytes(fresh);
    expect(differingFiles(x, y)).toEqual([]);
  });

  it('a first cook copies its text assets on the workers: the same bytes and cache entries as a copy on the main thread', async () => {
    const dir = await tempDir('lumina-pool-text-');
    dirs.push(dir);
    await generateProject({ out: dir, assets: 400, seed: 7, textureEncoder: 'rgba8' });
    const first = await cook(dir);
    expect(first.summary.ok).toBe(true);
    const texts = first.summary.assetReports.filter((a) => !a.file.endsWith('.lasset'));
    expect(texts.length).toBeGreaterThan(3);
    expect(texts.every((a) => a.status === 'cooked')).toBe(true);
    const entries = async () => {
      const { cache } = await CookCache.load(path.join(dir, 'Intermediates', CACHE_FILE_NAME), path.join(dir, 'Saved/Cooked'), { readOnly: true });
      try {
        // What a copy records, but for when it was written and how long it took.
        return texts.map((a) => ({ ...cache.peek(a.guid)!, cookedMtimeMs: 0, cookMs: 0 }));
      } finally {
        cache.close();
      }
    };
    const onWorkers = await entries();
    expect(onWorkers.every((e) => e.key && e.xxh64 && e.cookedSize > 0)).toBe(true);
    const before = await outputBytes(dir);
    // A few outputs gone: the re-cook copies them again on this thread (no worker), as cookTextAsset.
    const some = texts.slice(0, 3);
    for (const a of some) await fsp.rm(path.join(dir, 'Saved/Cooked', a.path));
    const again = await cook(dir);
    expect(again.workers).toBe(0);
    expect(again.summary).toMatchObject({ ok: true, cooked: some.length, failed: 0 });
    expect(await entries()).toEqual(onWorkers);
    const after = await outputBytes(dir);
    expect(differingFiles(before, after)).toEqual([]);
  });

  it('a worker that dies copying a text asset fails that asset alone, naming it: text assets of a first cook are copied on the workers', async () => {
    const dir = await tempDir('lumina-pool-text-exit-');
    dirs.push(dir);
    await generateProject({ out: dir, assets: 120, seed: 7, textureEncoder: 'rgba8' });
    const text = (await fsp.readdir(path.join(dir, 'Content'), { recursive: true })).filter((f) => /\.(rml|rcss|luau)$/.test(f)).sort()[0];
    expect(text).toBeDefined();
    const { summary } = await cook(dir, path.basename(text));
    const file = path.join(dir, 'Content', text);
    expect(summary).toMatchObject({ ok: false, failed: 1 });
    expect(summary.problems.filter((p) => p.severity === 'error')).toEqual([
      { code: 'COOK_FAILED', message: 'the cook worker stopped while cooking this file (exit code 7)', file, severity: 'error' },
    ]);
  });

  it('submit: the results of a batch reach the sink in one call, every job once, the same outcomes as cook()', async () => {
    const dir = await tempDir('lumina-pool-submit-');
    dirs.push(dir);
    await generateProject({ out: dir, assets: 200, seed: 3, textureEncoder: 'rgba8' });
    const files = (await fsp.readdir(path.join(dir, 'Content'), { recursive: true })).filter((f) => f.endsWith('.lasset')).sort().slice(0, 90);
    expect(files.length).toBe(90);
    const settings = { editorOnlyClassPrefixes: [], compressionLevel: 6, textures: { ...DEFAULTS.textures, encoder: 'rgba8' as const }, onCookFailure: 'fail' as const, schemasDir: path.join(dir, 'Schemas') };
    const pool = new CookPool({ workers: 2, settings });
    try {
      const calls: number[] = [];
      const got = new Map<number, JobResult>();
      await new Promise<void>((done) => {
        const sink = (tokens: readonly number[], results: readonly JobResult[]) => {
          calls.push(tokens.length);
          expect(results.length).toBe(tokens.length);
          tokens.forEach((t, k) => {
            expect(got.has(t)).toBe(false);
            got.set(t, results[k]);
          });
          if (got.size === files.length) done();
        };
        files.forEach((f, i) => pool.submit(path.join(dir, 'Content', f), path.join(dir, 'out-a', f), 0, undefined, undefined, sink, 1000 + i));
      });
      // Batched: far fewer calls than jobs, none empty.
      expect(calls.length).toBeLessThan(files.length / 4);
      expect(calls.every((n) => n > 0)).toBe(true);
      expect([...got.keys()].sort((a, b) => a - b)).toEqual(files.map((_, i) => 1000 + i));
      // The same outcome as a job through cook() (its own promise), file by file.
      const one = await Promise.all(files.map((f) => pool.cook(path.join(dir, 'Content', f), path.join(dir, 'out-b', f))));
      const brief = (r: JobResult) => ('outcome' in r ? { status: r.outcome.status, hash: r.outcome.contentHash, raw: r.outcome.rawXxh64, cooked: r.written?.cookedXxh64 } : r);
      expect(files.map((_, i) => brief(got.get(1000 + i)!))).toEqual(one.map(brief));
      expect(one.filter((r) => !('outcome' in r) || r.outcome.status !== 'cooked').map((r) => ('outcome' in r ? r.outcome.error : r))).toEqual([]);
    } finally {
      await pool.close();
    }
    // A closed pool answers at once, through the sink.
    const late: JobResult[] = [];
    pool.submit(path.join(dir, 'Content', files[0]), path.join(dir, 'out-c', files[0]), 0, undefined, undefined, (_, r) => late.push(...r), 7);
    expect(late.map((r) => 'outcome' in r && r.outcome.status)).toEqual(['failed']);
  });

  it('a first cook journals the results of a batch in one write: every finished asset once, in fewer writes than assets', async () => {
    const dir = await tempDir('lumina-pool-journal-');
    dirs.push(dir);
    await generateProject({ out: dir, assets: 300, seed: 13, textureEncoder: 'rgba8' });
    const journal = path.join(dir, 'Intermediates', JOURNAL_FILE_NAME);
    const writes: Buffer[] = [];
    const real = fs.writeSync;
    const spy = vi.spyOn(fs, 'writeSync').mockImplementation(((fd: number, data: unknown, ...rest: unknown[]) => {
      // Only the journal's appends (the cook cache holds it open for appending).
      let target = '';
      try {
        target = fs.readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        // not a descriptor we can name
      }
      if (target === journal) writes.push(Buffer.from((data as Uint8Array).subarray((rest[0] as number) ?? 0)));
      return (real as (...a: unknown[]) => number)(fd, data, ...rest);
    }) as typeof fs.writeSync);
    let summary;
    try {
      const cooker = await Cooker.open({ projectDir: dir, remoteCache: false });
      try {
        // No paks: the cook cache is not folded by them, so the journal keeps what the loop wrote.
        summary = await cooker.cook({ report: false, paks: false });
      } finally {
        cooker.close();
      }
    } finally {
      spy.mockRestore();
    }
    expect(summary.ok).toBe(true);
    const read = readCookJournal(Buffer.concat(writes));
    expect(read.tail).toBeUndefined();
    const set = read.frames.flatMap((f) => f.ops.flatMap((op) => (op.kind === 'set' ? [op.guid] : [])));
    // Each cooked asset once (packages and text assets alike).
    expect(new Set(set).size).toBe(set.length);
    expect(set.length).toBe(summary.cooked);
    // The packages came back from the workers in batches, each batch's frame in one write.
    const packages = summary.assetReports.filter((a) => a.file.endsWith('.lasset')).length;
    expect(packages).toBeGreaterThan(100);
    expect(writes.length).toBeLessThan(set.length - packages / 2);
  });
});
