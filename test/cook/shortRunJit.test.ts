/**
 * A first cook (no cook cache) opens with V8's smaller inlining budget (src/util/shortRunJit.ts);
 * a cook with a cache keeps V8's; a very large project (lean-heap mode) goes back to V8's at its
 * scan; LUMINA_SHORT_RUN_JIT=0 never sets it. The budget and lean mode are process-wide (each test
 * file runs in its own process): the cases run in order, lean mode last.
 */
import fsp from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cooker } from '../../cook/Cooker.js';
import { initHash } from '../../src/util/hash.js';
import { leanHeapOn } from '../../src/util/leanHeap.js';
import { shortRunInlining, shortRunInliningOn } from '../../src/util/shortRunJit.js';
import { tempDir } from './helpers.js';
import { copySampleProject } from '../helpers/sampleProject.js';

let dir: string;
let leanDir: string;
beforeAll(async () => {
  await initHash();
  dir = await tempDir('lc-jit-');
  leanDir = await tempDir('lc-jit-lean-');
  await copySampleProject(dir);
  await copySampleProject(leanDir);
});
afterAll(async () => {
  delete process.env.LUMINA_LEAN_HEAP;
  delete process.env.LUMINA_SHORT_RUN_JIT;
  for (const d of [dir, leanDir]) await fsp.rm(d, { recursive: true, force: true });
});

describe('shortRunInlining', () => {
  it('is off until set, never set under LUMINA_SHORT_RUN_JIT=0, and goes back off', () => {
    expect(shortRunInliningOn()).toBe(false);
    expect(shortRunInlining(true, { LUMINA_SHORT_RUN_JIT: '0' })).toBe(false);
    expect(shortRunInliningOn()).toBe(false);
    expect(shortRunInlining(true, {})).toBe(true);
    expect(shortRunInlining(true, {})).toBe(true);
    expect(shortRunInlining(false, {})).toBe(false);
    expect(shortRunInliningOn()).toBe(false);
  });

  it('a first cook sets it when it opens; a cook with a cook cache does not', async () => {
    const first = await Cooker.open({ projectDir: dir, remoteCache: false });
    try {
      expect(shortRunInliningOn()).toBe(true);
      expect((await first.cook({ report: false })).ok).toBe(true);
    } finally {
      first.close();
    }
    shortRunInlining(false);
    const again = await Cooker.open({ projectDir: dir, remoteCache: false });
    again.close();
    expect(shortRunInliningOn()).toBe(false);
  });

  it("a first cook of a very large project (lean-heap mode) is back on V8's budget after its scan", async () => {
    process.env.LUMINA_LEAN_HEAP = '1';
    const opened = await Cooker.open({ projectDir: leanDir, remoteCache: false, lock: false });
    opened.close();
    expect(leanHeapOn()).toBe(true);
    expect(shortRunInliningOn()).toBe(false);
  });
});
