/**
 * The registry cache's journal: a batch appends one frame (the snapshot is not rewritten), a load
 * folds the journal in, a torn or damaged tail is a warning and never a crash, and a kill -9 at any
 * moment loses no finished batch and never leaves a cache that gives a wrong answer.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inspectPackage } from '../../cli/commands/inspect.js';
import { AssetRegistry } from '../../src/registry/AssetRegistry.js';
import { bumpMtime, g, hard, makeProject, type TempProject } from './fixtures.js';
import { mulberry32 as rng } from '../helpers/rng.js';

let p: TempProject;
beforeEach(() => {
  p = makeProject();
});
afterEach(() => p.cleanup());

const open = () => AssetRegistry.open({ config: p.config() });
const listing = (reg: AssetRegistry) => reg.all().map(({ mtimeMs, ...rest }) => rest);

/** A registry over a fresh cache file elsewhere: what a cold scan finds (the truth). */
async function truth(): Promise<ReturnType<typeof listing>> {
  const reg = await AssetRegistry.open({ config: p.config(), cacheFile: path.join(p.dir, 'truth', 'AssetRegistry.assetdb'), autoSave: false });
  await reg.scan();
  return listing(reg);
}

async function seeded() {
  p.pkg('Content/A.lasset', g(1), { imports: [hard(g(2))] });
  p.pkg('Content/B.lasset', g(2));
  p.pkg('Content/C.lasset', g(3));
  const reg = await open();
  await reg.scan();
  return reg;
}

describe('registry cache journal', () => {
  it('appends one frame per batch and leaves the snapshot alone; a load folds the journal in', async () => {
    const reg = await seeded();
    const snapshot = fs.readFileSync(reg.cacheFile);
    expect(fs.existsSync(reg.journalFile)).toBe(false);

    p.pkg('Content/A.lasset', g(1), { imports: [hard(g(3))] });
    bumpMtime(p.abs('Content/A.lasset'));
    const d = p.pkg('Content/D.lasset', g(4));
    await reg.updateFiles([p.abs('Content/A.lasset'), d]);
    const afterOne = fs.statSync(reg.journalFile).size;
    expect(afterOne).toBeGreaterThan(0);
    fs.rmSync(p.abs('Content/B.lasset'));
    await reg.updateFiles([p.abs('Content/B.lasset')]);
    expect(fs.statSync(reg.journalFile).size).toBeGreaterThan(afterOne);
    expect(fs.readFileSync(reg.cacheFile)).toEqual(snapshot);
    reg.close();

    const again = await open();
    expect(again.cacheStatus).toBe('loaded');
    const r = await again.scan();
    expect(r).toMatchObject({ read: 0, cached: 3, removed: 0, problems: [] });
    expect(listing(again)).toEqual(await truth());
    expect(again.dependencies(g(1)).map((x) => x.guid)).toEqual([g(3)]);
  });

  it('a journal with no snapshot beside it is loaded, and the next save writes the snapshot', async () => {
    const reg = await seeded();
    p.pkg('Content/D.lasset', g(4));
    await reg.updateFiles([p.abs('Content/D.lasset')]);
    reg.close();
    fs.rmSync(reg.cacheFile);
    const again = await open();
    expect(await again.scan()).toMatchObject({ assets: 4, read: 3, cached: 1, problems: [] });
    expect(fs.existsSync(again.cacheFile)).toBe(true);
    expect(fs.existsSync(again.journalFile)).toBe(false);
  });

  it('compact() folds the journal into the snapshot and empties it', async () => {
    const reg = await seeded();
    p.pkg('Content/D.lasset', g(4));
    await reg.updateFiles([p.abs('Content/D.lasset')]);
    expect(fs.statSync(reg.journalFile).size).toBeGreaterThan(0);
    await reg.compact();
    expect(fs.statSync(reg.journalFile).size).toBe(0);
    reg.close();
    const again = await open();
    expect(await again.scan()).toMatchObject({ assets: 4, read: 0, cached: 4, problems: [] });
  });

  const tails: Array<[string, (journal: Buffer, firstFrameEnd: number) => Buffer]> = [
    ['a frame cut short (a kill mid-write)', (j, first) => j.subarray(0, first + Math.floor((j.length - first) / 2))],
    ['a frame with a flipped byte', (j) => { j[j.length - 12] ^= 0x20; return j; }],
    ['garbage after the last frame', (j, first) => Buffer.concat([j.subarray(0, first), Buffer.from('not a frame at all, the rest of a crashed write')])],
  ];
  for (const [what, damage] of tails) {
    it(`ignores ${what} with a warning, keeps the frames before it and cuts the tail off`, async () => {
      const reg = await seeded();
      const first = p.pkg('Content/D.lasset', g(4));
      await reg.updateFiles([first]);
      const firstFrameEnd = fs.statSync(reg.journalFile).size;
      const second = p.pkg('Content/E.lasset', g(5));
      await reg.updateFiles([second]);
      reg.close();
      fs.writeFileSync(reg.journalFile, damage(fs.readFileSync(reg.journalFile), firstFrameEnd));

      const again = await open();
      expect(again.cacheStatus).toBe('loaded');
      const r = await again.scan();
      // D came from the first frame; E's frame was lost, so E alone is read again.
      expect(r).toMatchObject({ assets: 5, read: 1, cached: 4 });
      expect(r.problems).toEqual([
        { code: 'CACHE_INVALID', message: expect.stringMatching(/^cache journal has a torn tail \(a run was killed while writing it\): .* at offset \d+; ignored the last \d+ bytes$/), file: again.journalFile, severity: 'warning' },
      ]);
      expect(listing(again)).toEqual(await truth());
      again.close();
      // The tail is gone and the re-read was appended after the good frames: the next load is clean.
      const third = await open();
      expect(await third.scan()).toMatchObject({ read: 0, cached: 5, problems: [] });
    });
  }

  it('inspect names imports from the journal too (a daemon batch is only there)', async () => {
    const reg = await seeded();
    const d = p.pkg('Content/D.lasset', g(4));
    await reg.updateFiles([d]);
    reg.close();
    const a = p.pkg('Content/A.lasset', g(1), { imports: [hard(g(4))] });
    const { importPaths } = await inspectPackage(a);
    expect(importPaths.get(g(4))).toBe('/Game/D.D');
  });

  it('a journal that is not one at all is a warning and a re-read, never a crash', async () => {
    const reg = await seeded();
    reg.close();
    fs.writeFileSync(reg.journalFile, '{"someone": "else"}\n');
    const again = await open();
    const r = await again.scan();
    expect(r).toMatchObject({ assets: 3, read: 0, cached: 3 });
    expect(r.problems.map((x) => [x.code, x.file, x.severity])).toEqual([['CACHE_INVALID', again.journalFile, 'warning']]);
  });
});

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const child = path.join(repo, 'test', 'registry', 'journalChild.ts');

// Replay or stress: LUMINA_CRASH_SEED=7 LUMINA_CRASH_ITERATIONS=30 npx vitest run test/registry/journal.test.ts
const ITERATIONS = Number(process.env.LUMINA_CRASH_ITERATIONS ?? 6);
const SEED = Number(process.env.LUMINA_CRASH_SEED ?? 0x5eed);

describe('kill -9 while batches are journaled', () => {
  it(`loses no finished batch and never leaves a wrong cache, ${ITERATIONS} kills`, async () => {
    const rand = rng(SEED);
    p.pkg('Content/Base.lasset', g(1));
    let next = 0;
    for (let it = 0; it < ITERATIONS; it++) {
      const start = next;
      const proc = spawn(process.execPath, ['--import', 'tsx', child, p.dir, String(start)], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      proc.stdout!.on('data', (d) => (out += d));
      proc.stderr!.on('data', (d) => (err += d));
      const exited = new Promise<void>((r) => proc.once('exit', () => r()));
      // Kill a random time after the child's first batch: anywhere in a batch, an append or a snapshot.
      for (;;) {
        if (/^done /m.test(out)) break;
        if (proc.exitCode !== null) throw new Error(`child exited early: ${err}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      await new Promise((r) => setTimeout(r, Math.floor(rand() * 800)));
      proc.kill('SIGKILL');
      await exited;
      const done = [...out.matchAll(/^done (\d+)$/gm)].map((m) => Number(m[1]));
      const lastDone = done[done.length - 1];
      // The batch in flight at the kill: its files were all written before its updateFiles call.
      const inFlight = lastDone + 1;
      next = inFlight + 1;
      const inFlightFiles = Array.from({ length: 1 + (inFlight % 40) }, (_, k) => inFlight * 40 + k).filter((i) =>
        fs.existsSync(p.abs(`Content/Set${i % 7}/K${i}.lasset`)),
      ).length;

      const reg = await open();
      expect(reg.cacheStatus, err).toBe('loaded');
      const r = await reg.scan();
      // Every finished batch is in the cache; the one in flight is there whole or not at all.
      expect([0, inFlightFiles], `read ${r.read} after batch ${lastDone}`).toContain(r.read);
      expect(r.rehashed).toBe(0);
      expect(r.problems.filter((x) => !(x.code === 'CACHE_INVALID' && x.file === reg.journalFile && /torn tail/.test(x.message)))).toEqual([]);
      expect(listing(reg)).toEqual(await truth());
      reg.close();
    }
  }, 60_000 + ITERATIONS * 15_000);
});
