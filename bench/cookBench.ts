/**
 * Cook benchmark: a full cook (scan + plan + cook + paks, cold caches) of a generated project
 * against `tar -cf - Content Plugins | gzip -6 > /dev/null` over the same content in the same run
 * (reading every byte and compressing it once is the floor any cook has to do). Target: <= 1.0x
 * on 2 cores. Then a no-op re-cook (registry and cook cache warm, nothing changed): target < 1 s
 * for 20k assets.
 *
 * Textures use the 'rgba8' encoder: the KTX2 block encoder is measured by the texture bench, and
 * here it would turn a cook benchmark into a basisu one.
 *
 * Run alone: `npx tsx bench/cookBench.ts [assets]`.
 */
import { spawnSync } from 'node:child_process';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cookProject } from '../cook/cookProject.js';
import { generateProject } from '../samples/index.js';
import { ProgressBus } from '../src/log/events.js';
import { initHash } from '../src/util/hash.js';

const ms = (t: number) => `${(t / 1000).toFixed(2)} s`;

export async function runCookBench(opts: { assets?: number } = {}): Promise<{ lines: string[] }> {
  await initHash();
  const assets = opts.assets ?? 20_000;
  const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'lumina-cookbench-'));
  const lines: string[] = [];
  try {
    const t0 = performance.now();
    const gen = await generateProject({ out: root, assets, seed: 7, textureEncoder: 'rgba8' });
    lines.push(`generated ${gen.assets} assets, ${gen.files} files, ${(gen.bytes / 1048576).toFixed(1)} MiB in ${ms(performance.now() - t0)}`);

    const dirs = (await fsp.readdir(root)).filter((n) => n !== 'lumina-cook.json').sort();
    const tarStart = performance.now();
    const tar = spawnSync('sh', ['-c', `tar -cf - ${dirs.join(' ')} | gzip -6 > /dev/null`], { cwd: root, stdio: 'inherit' });
    const tarMs = performance.now() - tarStart;
    if (tar.status !== 0) throw new Error(`tar | gzip exited with ${tar.status}`);

    // Phase times say where a regression is: the registry scan, the per-asset cook, or the paks.
    const bus = new ProgressBus();
    const phases: string[] = [];
    bus.on((e) => {
      if (e.type === 'END') phases.push(`${e.phase} ${ms(e.ms)}`);
    });
    const fullStart = performance.now();
    const full = await cookProject({ projectDir: root, bus });
    const fullMs = performance.now() - fullStart;
    if (!full.ok) lines.push(`WARNING: the cook reported ${full.problems.filter((p) => p.severity === 'error').length} errors`);
    const paks = full.paks.map((p) => `${p.chunk} ${(p.bytes / 1048576).toFixed(1)} MiB`).join(', ');
    lines.push(`tar | gzip -6: ${ms(tarMs)}`);
    lines.push(
      `full cook: ${ms(fullMs)} (${(fullMs / tarMs).toFixed(2)}x tar|gzip, target <= 1.0x; ${phases.join(', ')}): ${full.cooked} cooked, ` +
        `${full.strippedExports} stripped objects, ${(full.bytesIn / 1048576).toFixed(1)} -> ${(full.bytesOut / 1048576).toFixed(1)} MiB; paks ${paks}`,
    );

    const noopStart = performance.now();
    const first = await cookProject({ projectDir: root });
    const noopMs = performance.now() - noopStart;
    lines.push(`no-op re-cook: ${ms(noopMs)} (target < 1 s): ${first.cooked} cooked, ${first.cached} cached, paks rewritten: ${first.paks.filter((p) => p.written).length}`);
    // What writing Saved/Reports costs: no-op re-cooks without and with the report, alternated
    // (the first no-op after a full cook also folds the cache journal, so it is not compared).
    const noop = async (report: boolean) => {
      const t = performance.now();
      await cookProject({ projectDir: root, report });
      return performance.now() - t;
    };
    const bare = [await noop(false), await noop(true), await noop(false), await noop(true)];
    const without = Math.min(bare[0], bare[2]);
    const withReport = Math.min(bare[1], bare[3]);
    lines.push(`no-op re-cook without / with the report: ${ms(without)} / ${ms(withReport)} (the report: ${ms(withReport - without)}, ${(withReport / without).toFixed(2)}x)`);
  } finally {
    await fsp.rm(root, { recursive: true, force: true });
  }
  return { lines };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const n = process.argv[2] ? Number(process.argv[2]) : undefined;
  runCookBench({ assets: n }).then(
    ({ lines }) => lines.forEach((l) => process.stdout.write(`${l}\n`)),
    (e) => {
      process.stderr.write(`${e?.stack ?? e}\n`);
      process.exitCode = 1;
    },
  );
}
