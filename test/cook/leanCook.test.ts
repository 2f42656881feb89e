/**
 * A very large full cook (lean-heap mode, src/util/leanHeap.ts; forced here with
 * LUMINA_LEAN_HEAP=1 on the sample project, which is the strict level, lean included) keeps less
 * through its tail, where a million-asset cook peaks: the mode starts at the registry scan, not at
 * the cook; no cooked output is held for the paks (the pak writer reads every one back, so it
 * checks every one against its cook's hash); the cook workers are stopped after the loop (a
 * re-cook in the pak phase starts them again). Those two follow the lean level (the project's
 * size), not strict. The paks and cooked files are the same bytes as a normal cook's.
 *
 * Lean mode stays on for the process once on (each test file runs in its own process): the
 * normal cook runs first.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cooker } from '../../cook/Cooker.js';
import { ProgressBus } from '../../src/log/events.js';
import { initHash } from '../../src/util/hash.js';
import { leanHeapOn, leanHeapStrictOn } from '../../src/util/leanHeap.js';
import { outputBytes, tempDir } from './helpers.js';
import { copySampleProject } from '../helpers/sampleProject.js';

const ROCK = 'Saved/Cooked/Game/Meshes/Rock.lasset';
let normalDir: string;
let leanDir: string;
beforeAll(async () => {
  await initHash();
  normalDir = await tempDir('lc-lean-normal-');
  leanDir = await tempDir('lc-lean-');
  await copySampleProject(normalDir);
  await copySampleProject(leanDir);
});
afterAll(async () => {
  delete process.env.LUMINA_LEAN_HEAP;
  for (const d of [normalDir, leanDir]) await fsp.rm(d, { recursive: true, force: true });
});

/** Flip bytes inside a cooked file, keeping its size and mtime (all the cook cache looks at). */
function damage(file: string): void {
  const stamp = `${file}.stamp`;
  execFileSync('touch', ['-r', file, stamp]);
  const bad = fs.readFileSync(file);
  for (let i = bad.byteLength - 40; i < bad.byteLength - 20; i++) bad[i] ^= 0x5a;
  fs.writeFileSync(file, bad);
  execFileSync('touch', ['-r', stamp, file]);
  fs.rmSync(stamp);
}

/**
 * A cold cook that, when its pak phase starts, notes how many cook workers run and damages the
 * cooked Rock: a cook holding Rock's output ships the held bytes, one that holds none reads the
 * damaged file, finds it and cooks Rock again.
 */
async function cookDamagingRock(dir: string) {
  const bus = new ProgressBus();
  let cooker: Cooker | undefined;
  let workersAtPaks = -1;
  bus.on((e) => {
    if (e.type === 'START' && e.phase === 'pak') {
      workersAtPaks = cooker!.workersRunning;
      damage(path.join(dir, ROCK));
    }
  });
  cooker = await Cooker.open({ projectDir: dir, bus, remoteCache: false });
  try {
    const summary = await cooker.cook({ report: false });
    return { summary, workersAtPaks };
  } finally {
    cooker.close();
  }
}

describe('a lean (very large) full cook', () => {
  it('a normal cook keeps its workers to the paks and ships the outputs it held (the damage after the loop goes unseen)', async () => {
    delete process.env.LUMINA_LEAN_HEAP;
    const { summary, workersAtPaks } = await cookDamagingRock(normalDir);
    expect(leanHeapOn()).toBe(false);
    expect(leanHeapStrictOn()).toBe(false);
    expect(summary.ok).toBe(true);
    expect(summary.cooked).toBeGreaterThan(5);
    expect(workersAtPaks).toBeGreaterThan(0);
    expect(summary.problems.filter((p) => p.code === 'COOKED_INVALID')).toEqual([]);
  });

  it('turns lean at the scan, stops its workers after the loop, holds no output for the paks, and writes the same paks', async () => {
    process.env.LUMINA_LEAN_HEAP = '1';
    // The scan alone turns the mode on (no cook yet), forced to the strict level.
    const opened = await Cooker.open({ projectDir: leanDir, remoteCache: false, lock: false });
    opened.close();
    expect(leanHeapOn()).toBe(true);
    expect(leanHeapStrictOn()).toBe(true);
    await fsp.rm(path.join(leanDir, 'Intermediates'), { recursive: true, force: true });

    const { summary, workersAtPaks } = await cookDamagingRock(leanDir);
    expect(summary.ok).toBe(true);
    expect(workersAtPaks).toBe(0);
    // Read back from disk, the damaged Rock was found and cooked again (on a worker started again).
    const invalid = summary.problems.filter((p) => p.code === 'COOKED_INVALID');
    expect(invalid.map((p) => path.relative(leanDir, p.file!))).toEqual([ROCK]);

    const normalPaks = await outputBytes(normalDir, ['Saved/Paks']);
    const leanPaks = await outputBytes(leanDir, ['Saved/Paks']);
    expect([...leanPaks.keys()]).toEqual([...normalPaks.keys()]);
    expect([...normalPaks.keys()].some((k) => k.endsWith('.pak'))).toBe(true);
    expect([...normalPaks.keys()].filter((k) => !normalPaks.get(k)!.equals(leanPaks.get(k)!))).toEqual([]);
    // Every cooked file the same, Rock's too now that it was cooked again (the normal cook's Rock is the damaged one).
    const normalCooked = await outputBytes(normalDir, ['Saved/Cooked']);
    const leanCooked = await outputBytes(leanDir, ['Saved/Cooked']);
    expect([...leanCooked.keys()]).toEqual([...normalCooked.keys()]);
    expect([...normalCooked.keys()].filter((k) => k !== ROCK && !normalCooked.get(k)!.equals(leanCooked.get(k)!))).toEqual([]);
    // The damage flips bytes with XOR: done twice it gives the good file back.
    expect(leanCooked.get(ROCK)!.equals(normalCooked.get(ROCK)!)).toBe(false);
    damage(path.join(normalDir, ROCK));
    expect(leanCooked.get(ROCK)!.equals(fs.readFileSync(path.join(normalDir, ROCK)))).toBe(true);
  });
});
