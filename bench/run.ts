/**
 * `npm run bench`: every benchmark prints ratios against a baseline measured in the same run
 * (find, tar, gzip, the decoder alone), so numbers compare across machines.
 *   npm run bench                 all of them
 *   npm run bench -- registry pak only these
 *   BENCH_QUICK=1 npm run bench   smaller inputs, for a smoke run
 */
import { initHash } from '../src/util/hash.js';

interface Bench {
  name: string;
  run: (quick: boolean) => Promise<{ lines: string[] }>;
}

const benches: Bench[] = [
  { name: 'registry', run: async (q) => (await import('./registryBench.js')).runRegistryBench(q ? { assets: 5_000 } : undefined) },
  { name: 'cook', run: async (q) => (await import('./cookBench.js')).runCookBench(q ? { assets: 2_000 } : undefined) },
  { name: 'texture', run: async (q) => (await import('./textureBench.js')).runTextureBench(q ? { count: 1, quick: true } : undefined) },
  { name: 'texture-levels', run: async (q) => (await import('./textureBench.js')).runTextureLevelsBench({ quick: q }) },
  { name: 'pak', run: async (q) => (await import('./pakBench.js')).runPakBench(q ? { cookedMiB: 32, bigMiB: 32, reads: 50, engineMiB: 16 } : undefined) },
  { name: 'shader', run: async (q) => (await import('./shaderBench.js')).runShaderBench(q ? { materials: 10 } : undefined) },
  { name: 'watch', run: async (q) => (await import('./watchBench.js')).runWatchBench(q ? { sizes: [500, 2_000], edits: 10 } : undefined) },
  { name: 'remote', run: async (q) => (await import('./remoteBench.js')).runRemoteBench(q ? { assets: 500 } : undefined) },
];

async function main(): Promise<void> {
  await initHash();
  const only = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const quick = Boolean(process.env.BENCH_QUICK);
  const unknown = only.filter((o) => !benches.some((b) => b.name === o));
  if (unknown.length) {
    process.stderr.write(`unknown benchmark ${unknown.join(', ')}; have ${benches.map((b) => b.name).join(', ')}\n`);
    process.exitCode = 2;
    return;
  }
  for (const b of benches) {
    if (only.length && !only.includes(b.name)) continue;
    process.stdout.write(`\n== ${b.name}\n`);
    const t0 = performance.now();
    const { lines } = await b.run(quick);
    for (const l of lines) process.stdout.write(`  ${l}\n`);
    // maxRSS only grows: it is the peak of this bench and the ones before it.
    const peak = process.resourceUsage().maxRSS / 1024;
    process.stdout.write(`  (${((performance.now() - t0) / 1000).toFixed(1)} s, peak RSS so far ${peak.toFixed(0)} MiB)\n`);
  }
}

main().catch((e) => {
  process.stderr.write(`${e?.stack ?? e}\n`);
  process.exitCode = 1;
});
