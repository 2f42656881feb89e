import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AssetRegistry } from '../../src/registry/AssetRegistry.js';
import { outcomeError, ReadThreads, readOnPool, runReadJob, type PoolOutcome, type ReadJob } from '../../src/registry/readPool.js';
import { thawRecord } from '../../src/registry/registryCache.js';
import { initHash } from '../../src/util/hash.js';
import { bumpMtime, g, hard, makeProject, soft, type TempProject } from './fixtures.js';

let p: TempProject;
beforeEach(() => {
  p = makeProject();
});
afterEach(() => p.cleanup());

const FILES = 150;

/** 150 packages with imports over a few folders, plus a corrupt one, one without its asset, a truncated one and a text asset. */
function fill(): { bad: string[] } {
  for (let i = 0; i < FILES; i++) {
    const imports = i === 0 ? [] : [hard(g(1 + (i % 7))), soft(g(1 + ((i * 13) % i)))];
    p.pkg(`Content/Set${i % 5}/Sub${i % 3}/A${i}.lasset`, g(i + 1), { imports, flags: i === 0 ? 1 : 0 });
  }
  const corrupt = p.write('Content/Set1/Broken.lasset', 'definitely not a package, but long enough for a header..........');
  const noAsset = p.pkg('Content/Set2/Renamed.lasset', g(900));
  const moved = p.abs('Content/Set2/Moved.lasset');
  fs.renameSync(noAsset, moved);
  const whole = fs.readFileSync(p.pkg('Content/Set3/Cut.lasset', g(901)));
  const cut = p.abs('Content/Set3/Cut.lasset');
  fs.writeFileSync(cut, whole.subarray(0, 60));
  p.write('Content/UI/Hud.rml', '<rml/>');
  p.write('Content/UI/Hud.rml.lmeta', JSON.stringify({ guid: g(902) }));
  return { bad: [corrupt, moved, cut] };
}

describe('reading packages on worker threads', () => {
  it('gives the records, problems and cache bytes of a main-thread read, for a cold scan and for touched and edited files', async () => {
    const { bad } = fill();
    const intermediates = p.abs('Intermediates');
    const scanWith = async (readThreads: number) => {
      const reg = await AssetRegistry.open({ config: p.config(), readThreads, readThreadsFrom: 1, mainThreadReads: false, logProblems: false });
      const r = await reg.scan();
      const out = { counts: { assets: r.assets, read: r.read, cached: r.cached, rehashed: r.rehashed, removed: r.removed }, problems: r.problems, all: reg.all() };
      reg.close();
      return { ...out, cache: fs.readFileSync(path.join(intermediates, 'AssetRegistry.assetdb')) };
    };

    const main = await scanWith(0);
    expect(main.counts).toMatchObject({ assets: FILES + 1, read: FILES + 4 });
    expect(main.problems.map((x) => x.file)).toEqual([...bad].sort());
    fs.rmSync(intermediates, { recursive: true });
    const threads = await scanWith(2);
    expect(threads).toEqual(main);

    // Touched (same bytes, new mtime), edited at the same size (another GUID), and a corrupt one fixed.
    const saved = fs.mkdtempSync(path.join(p.dir, 'saved-'));
    fs.cpSync(intermediates, saved, { recursive: true });
    for (const i of [3, 40, 77]) bumpMtime(p.abs(`Content/Set${i % 5}/Sub${i % 3}/A${i}.lasset`));
    p.pkg('Content/Set1/Sub2/A11.lasset', g(5000));
    bumpMtime(p.abs('Content/Set1/Sub2/A11.lasset'));
    p.pkg('Content/Set3/Cut.lasset', g(901));
    const changed = await scanWith(0);
    expect(changed.counts).toMatchObject({ assets: FILES + 2, rehashed: 3, read: 4 });
    expect(changed.all.find((a) => a.guid === g(5000))?.file).toBe(p.abs('Content/Set1/Sub2/A11.lasset'));
    fs.rmSync(intermediates, { recursive: true });
    fs.cpSync(saved, intermediates, { recursive: true });
    expect(await scanWith(2)).toEqual(changed);
  });

  it('workers answer every job as the main thread does: the same record, or the same error naming the file', async () => {
    const { bad } = fill();
    await initHash();
    const reg = await AssetRegistry.open({ config: p.config(), readThreads: 0 });
    await reg.scan();
    reg.close();
    const jobs: ReadJob[] = [];
    for (const a of reg.all()) if (a.kind === 'package') jobs.push({ file: a.file, virtualPath: a.virtualPath, mount: a.mount, mtimeMs: a.mtimeMs, size: a.size, hashOnly: jobs.length % 10 === 0 });
    for (const file of bad) jobs.push({ file, virtualPath: `/Game/${path.relative(p.content, file)}`, mount: '/Game', mtimeMs: 1, size: fs.statSync(file).size, hashOnly: false });
    jobs.push({ file: p.abs('Content/Gone.lasset'), virtualPath: '/Game/Gone.lasset', mount: '/Game', mtimeMs: 1, size: 100, hashOnly: false });

    const got = new Map<ReadJob, PoolOutcome>();
    const threads = new ReadThreads(2);
    const stats = await readOnPool(jobs, (j) => j, threads, (job, o) => got.set(job, o), { mainThreadReads: false }).finally(() => threads.close());
    expect(stats).toEqual({ workerBatches: Math.ceil(jobs.length / 64), mainBatches: 0 });
    expect(got.size).toBe(jobs.length);
    let errorsSeen = 0;
    for (const job of jobs) {
      const o = got.get(job)!;
      const here = await runReadJob(job);
      if ('record' in here) expect('entry' in o && thawRecord(o.entry)).toEqual(here.record);
      else if ('hash' in here) expect(o).toEqual(here);
      else {
        errorsSeen++;
        const e = outcomeError(o) as { code?: string; message: string; file?: string };
        expect(e).toBeDefined();
        expect({ code: e.code, message: e.message, file: e.file }).toEqual({ code: (outcomeError(here) as { code: string }).code, message: (outcomeError(here) as Error).message, file: job.file });
      }
    }
    expect(errorsSeen).toBe(bad.length + 1);
  });
});
