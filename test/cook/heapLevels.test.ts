/**
 * Which heap level (src/util/leanHeap.ts) a cook takes, on the sample project with the levels'
 * threshold lowered to a few assets (LUMINA_LEAN_HEAP_ASSETS), as a million-asset project would:
 * lean for a project that large; strict only when the scan reads that many files, the cook cooks
 * that many packages (never a no-op), or the Cooker holds a registry across cooks (the daemon).
 * Levels are process-wide and stay on: each case takes fresh copies of the modules.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { tempDir } from './helpers.js';
import { copySampleProject } from '../helpers/sampleProject.js';

let dir: string;
beforeAll(async () => {
  dir = await tempDir('lc-heap-levels-');
  await copySampleProject(dir);
});
afterAll(async () => {
  delete process.env.LUMINA_LEAN_HEAP_ASSETS;
  await fsp.rm(dir, { recursive: true, force: true });
});

/** The cook's modules, with no level on yet (V8 flags an earlier case set stay set). */
async function fresh() {
  vi.resetModules();
  const { Cooker } = await import('../../cook/Cooker.js');
  const { cookProject } = await import('../../cook/cookProject.js');
  const { AssetRegistry } = await import('../../src/registry/AssetRegistry.js');
  const { loadConfig } = await import('../../config/index.js');
  const leanHeap = await import('../../src/util/leanHeap.js');
  await (await import('../../src/util/hash.js')).initHash();
  const levels = () => ({ lean: leanHeap.leanHeapOn(), strict: leanHeap.leanHeapStrictOn() });
  return { Cooker, cookProject, AssetRegistry, loadConfig, levels };
}

async function cook(m: Awaited<ReturnType<typeof fresh>>, beforeCook?: () => void) {
  const cooker = await m.Cooker.open({ projectDir: dir, remoteCache: false });
  try {
    beforeCook?.();
    const summary = await cooker.cook({ report: false });
    expect(summary.ok).toBe(true);
    return summary;
  } finally {
    cooker.close();
  }
}

describe('heap levels of a cook', () => {
  it('a small project stays at neither level', async () => {
    delete process.env.LUMINA_LEAN_HEAP_ASSETS;
    const m = await fresh();
    expect((await cook(m)).cooked).toBeGreaterThan(5);
    expect(m.levels()).toEqual({ lean: false, strict: false });
  });

  it('a no-op cook of a large project is lean, not strict', async () => {
    process.env.LUMINA_LEAN_HEAP_ASSETS = '5';
    const m = await fresh();
    const summary = await cook(m);
    expect(summary.cooked).toBe(0);
    expect(m.levels()).toEqual({ lean: true, strict: false });
  });

  it('with no cook cache, the scan reads nothing and stays lean; the cook cooks everything and turns strict', async () => {
    process.env.LUMINA_LEAN_HEAP_ASSETS = '5';
    for (const f of ['CookCache.bin', 'CookCache.journal']) await fsp.rm(path.join(dir, 'Intermediates', f), { force: true });
    const m = await fresh();
    let atCook: ReturnType<typeof m.levels> | undefined;
    const summary = await cook(m, () => (atCook = m.levels()));
    expect(atCook).toEqual({ lean: true, strict: false });
    expect(summary.cooked).toBeGreaterThan(5);
    expect(m.levels()).toEqual({ lean: true, strict: true });
  });

  it('a cold scan (no registry cache) turns strict before the cook', async () => {
    process.env.LUMINA_LEAN_HEAP_ASSETS = '5';
    await fsp.rm(path.join(dir, 'Intermediates', 'AssetRegistry.assetdb'), { force: true });
    const m = await fresh();
    const cooker = await m.Cooker.open({ projectDir: dir, remoteCache: false, lock: false });
    cooker.close();
    expect(m.levels()).toEqual({ lean: true, strict: true });
  });

  it('a one-shot cook (cookProject) from cold holds strict off through its scan, loop and paks, and turns it on for the tail', async () => {
    process.env.LUMINA_LEAN_HEAP_ASSETS = '5';
    await fsp.rm(path.join(dir, 'Intermediates'), { recursive: true, force: true });
    const m = await fresh();
    const { ProgressBus } = await import('../../src/log/events.js');
    const bus = new ProgressBus();
    const seen: Record<string, ReturnType<typeof m.levels>> = {};
    bus.on((e) => {
      if (e.type === 'START' || e.type === 'END') seen[`${e.type} ${e.phase}`] = m.levels();
    });
    const summary = await m.cookProject({ projectDir: dir, remoteCache: false, report: false, bus });
    expect(summary.ok).toBe(true);
    expect(summary.cooked).toBeGreaterThan(5);
    expect(seen['END scan']).toEqual({ lean: true, strict: false });
    expect(seen['START cook']).toEqual({ lean: true, strict: false });
    expect(seen['END pak']).toEqual({ lean: true, strict: false });
    expect(m.levels()).toEqual({ lean: true, strict: true });
  });

  it("a Cooker opened with the caller's scanned registry (the daemon) turns strict", async () => {
    process.env.LUMINA_LEAN_HEAP_ASSETS = '5';
    const m = await fresh();
    const registry = await m.AssetRegistry.open({ config: m.loadConfig(dir).config, logProblems: false });
    try {
      const scan = await registry.scan();
      expect(scan.read).toBe(0);
      expect(m.levels()).toEqual({ lean: true, strict: false });
      const cooker = await m.Cooker.open({ projectDir: dir, registry, remoteCache: false, lock: false });
      cooker.close();
      expect(m.levels()).toEqual({ lean: true, strict: true });
    } finally {
      registry.close();
    }
  });
});
