/**
 * Remote cache benchmark: a second "machine" cooking a generated project with the default texture
 * encoder from a warm remote cache (nginx WebDAV on 127.0.0.1), against its own cold cook and the
 * local no-op, all in the same run. Target: the warm-remote cook at least 5x faster than the cold.
 *
 * 1. machine A (a fresh checkout) cooks cold and publishes everything (`remoteCache.write`);
 * 2. machine B (another fresh checkout, empty Saved and Intermediates) cooks cold, no remote cache:
 *    the baseline;
 * 3. machine C (another fresh checkout) cooks from the warm remote cache;
 * 4. C again: the local no-op.
 * Paks of B and C must be byte-identical (checked; a difference fails the bench).
 *
 * Run alone: `npx tsx bench/remoteBench.ts [assets]` (default 5,000; 20,000 takes ~25 min on 2
 * cores). Needs nginx (`bash .ci/install-system-deps`).
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cookProject } from '../cook/cookProject.js';
import type { CookSummary } from '../cook/Cooker.js';
import { generateProject } from '../samples/index.js';
import { initHash } from '../src/util/hash.js';
import { readPaks, startNginx } from '../test/remote/servers.js';

const sec = (t: number) => `${(t / 1000).toFixed(2)} s`;

async function checkout(from: string, to: string, remoteCache: Record<string, unknown> | null): Promise<string> {
  await fsp.cp(from, to, { recursive: true });
  const file = path.join(to, 'lumina-cook.json');
  const config = JSON.parse(await fsp.readFile(file, 'utf8'));
  if (remoteCache) config.remoteCache = remoteCache;
  await fsp.writeFile(file, JSON.stringify(config, null, 2));
  return to;
}

async function timed(projectDir: string): Promise<{ ms: number; s: CookSummary }> {
  const t0 = performance.now();
  const s = await cookProject({ projectDir });
  const ms = performance.now() - t0;
  if (!s.ok) throw new Error(`the cook of ${projectDir} failed: ${s.problems.filter((p) => p.severity === 'error').map((p) => p.message).slice(0, 3).join('; ')}`);
  return { ms, s };
}

export async function runRemoteBench(opts: { assets?: number } = {}): Promise<{ lines: string[] }> {
  await initHash();
  // 20k would take ~25 min here (two cold basis cooks of ~8 min each): 5k keeps it a bench.
  const assets = opts.assets ?? 5_000;
  const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'lumina-remotebench-'));
  const server = await startNginx();
  const lines: string[] = [];
  try {
    const src = path.join(root, 'src');
    const t0 = performance.now();
    // The default texture encoder (basis): what a real cook pays and the cache saves.
    const gen = await generateProject({ out: src, assets, seed: 7 });
    lines.push(`generated ${gen.assets} assets (${(gen.bytes / 1048576).toFixed(1)} MiB, textures: basis) in ${sec(performance.now() - t0)}; cache: nginx WebDAV on 127.0.0.1`);

    const url = `${server.url}/bench`;
    const a = await checkout(src, path.join(root, 'a'), { url, write: true });
    const publish = await timed(a);
    const r = publish.s.remoteCache!;
    lines.push(`machine A, cold cook + publish: ${sec(publish.ms)}: ${publish.s.cooked} cooked, ${r.published} published, ${r.requests} requests (${(r.bytesUp / 1048576).toFixed(1)} MiB up)`);

    const b = await checkout(src, path.join(root, 'b'), null);
    const cold = await timed(b);
    lines.push(`machine B, cold cook (baseline): ${sec(cold.ms)}: ${cold.s.cooked} cooked`);

    const c = await checkout(src, path.join(root, 'c'), { url });
    const warm = await timed(c);
    const w = warm.s.remoteCache!;
    const failed = Object.values(w.failures).reduce((x, y) => x + y, 0);
    lines.push(
      `machine C, warm remote cache: ${sec(warm.ms)} (${(cold.ms / warm.ms).toFixed(1)}x faster than the cold cook, target >= 5x): ` +
        `${warm.s.fetched} fetched, ${warm.s.cooked} cooked here, ${failed} failed; ${w.requests} requests, ` +
        `${(w.requests / (warm.s.phases.cook / 1000)).toFixed(0)} requests/s over the cook phase, ${(w.bytesDown / 1048576).toFixed(1)} MiB down`,
    );
    const noop = await timed(c);
    lines.push(`machine C, local no-op re-cook: ${sec(noop.ms)}: ${noop.s.cached} cached, ${noop.s.remoteCache?.requests ?? 0} requests`);

    const pb = await readPaks(b);
    const pc = await readPaks(c);
    const same = pb.size === pc.size && [...pb].every(([k, v]) => pc.get(k)?.equals(v));
    if (!same) throw new Error('the paks of the warm-remote cook differ from the cold cook');
    lines.push(`paks of B and C byte-identical: ${[...pc.keys()].join(', ')}`);
  } finally {
    await server.stop();
    await fsp.rm(root, { recursive: true, force: true });
  }
  return { lines };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const n = process.argv[2] ? Number(process.argv[2]) : undefined;
  runRemoteBench({ assets: n }).then(
    ({ lines }) => lines.forEach((l) => process.stdout.write(`${l}\n`)),
    (e) => {
      process.stderr.write(`${e?.stack ?? e}\n`);
      process.exitCode = 1;
    },
  );
}
