/**
 * Watch benchmark: latency from a package save to its updated pak entry being readable, over a
 * series of edits in generated projects of two sizes in the same run (1k as the baseline, 50k by
 * default), printed side by side with their ratio: the daemon's per-save cost must not grow with
 * the project. Targets (issue 15): p50 < 100 ms at 50k, idle RSS < 600 MiB at 50k.
 *
 * The daemon runs in-process with its default debounce (config.watch.debounceMs, 10 ms, on top of the
 * watcher's own ~50 ms coalescing). Each
 * edit rewrites one shipped package the way an editor saves (temp file + rename) with a new
 * property value; the clock starts when the rename returns and stops when a PakReader opened on
 * the dev pak returns the entry whose bytes contain the new value. Edits are spaced (the daemon
 * idles between them), so each is its own batch. At the end every edited path is read once more
 * through MountedPaks over all paks, the way the runtime resolves it.
 *
 * The daemon runs in this process, so the RSS printed is this process's after the edits settle
 * (the daemon idle, its project loaded), minus nothing: an upper bound of a `watch` process.
 *
 * Run alone: `npx tsx bench/watchBench.ts [assets] [edits]` (one size), or through `npm run bench`.
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TEXTURE_CLASS } from '../cook/textureClass.js';
import { MountedPaks } from '../pak/MountedPaks.js';
import { PakReader } from '../pak/PakReader.js';
import { generateProject } from '../samples/index.js';
import { prop } from '../src/format/packageBuilder.js';
import { decodeExport, findAssetExport, parsePackage } from '../src/format/packageReader.js';
import { encodeProperties } from '../src/format/properties.js';
import { toWritable, writePackage } from '../src/format/packageWriter.js';
import type { ProgressEvent } from '../src/log/events.js';
import { initHash } from '../src/util/hash.js';
import { Daemon } from '../watch/Daemon.js';
import { DEV_PAK_NAME } from '../watch/DevPak.js';

const ms = (t: number) => `${t.toFixed(1)} ms`;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** The package bytes with a `BenchEdit` string property set to `marker` on its asset export. */
export function editedPackage(bytes: Uint8Array, file: string, marker: string): Uint8Array {
  const pkg = parsePackage(bytes, file);
  const i = findAssetExport(pkg);
  const props = decodeExport(pkg, i).filter((p) => p.name !== 'BenchEdit');
  props.push(prop.str('BenchEdit', marker));
  const out = toWritable(pkg);
  out.exports[i] = { ...out.exports[i], data: encodeProperties(props) };
  return writePackage(out);
}

/** Poll the dev pak until `entryPath` holds `marker`; resolves with the time it was seen. */
async function waitForEntry(devPak: string, entryPath: string, marker: Buffer, timeoutMs = 30_000): Promise<number> {
  const until = performance.now() + timeoutMs;
  for (;;) {
    let pak: PakReader | undefined;
    try {
      pak = await PakReader.open(devPak);
      if (pak.getEntry(entryPath)?.method !== 2 && pak.getEntry(entryPath)) {
        const raw = Buffer.from(await pak.readEntry(entryPath));
        if (raw.includes(marker)) return performance.now();
      }
    } catch {
      // Not there yet.
    } finally {
      await pak?.close();
    }
    if (performance.now() > until) throw new Error(`${entryPath} never showed ${marker} in ${devPak}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

interface SizeResult {
  assets: number;
  p50: number;
  p95: number;
  batchP50: number;
  startS: number;
  warmStartS: number;
  rssMiB: number;
}

/** Both sizes in one run, with the ratio of the large to the small: cost that grows with the project shows here. */
export async function runWatchBench(opts: { sizes?: number[]; edits?: number } = {}): Promise<{ lines: string[] }> {
  const sizes = opts.sizes ?? [1_000, 50_000];
  const lines: string[] = [];
  const results: SizeResult[] = [];
  for (const assets of sizes) {
    const r = await runWatchSize({ assets, edits: opts.edits });
    lines.push(`-- ${assets} assets`, ...r.lines.map((l) => `  ${l}`));
    results.push(r.result);
  }
  if (results.length >= 2) {
    const base = results[0];
    const big = results[results.length - 1];
    lines.push(
      `${big.assets} vs ${base.assets} assets: save -> readable p50 ${ms(big.p50)} vs ${ms(base.p50)} (${(big.p50 / base.p50).toFixed(2)}x; target < 100 ms at 50k: ${big.p50 < 100 ? 'met' : 'NOT met'}), ` +
        `idle RSS ${big.rssMiB.toFixed(0)} vs ${base.rssMiB.toFixed(0)} MiB (target < 600 MiB at 50k: ${big.rssMiB < 600 ? 'met' : 'NOT met'}), ` +
        `ready ${big.warmStartS.toFixed(1)} s warm, ${big.startS.toFixed(1)} s cold (load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')})`,
    );
  }
  return { lines };
}

export async function runWatchSize(opts: { assets?: number; edits?: number } = {}): Promise<{ lines: string[]; result: SizeResult }> {
  await initHash();
  const assets = opts.assets ?? 10_000;
  const edits = opts.edits ?? 50;
  const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'lumina-watchbench-'));
  const lines: string[] = [];
  let daemon: Daemon | undefined;
  try {
    const g0 = performance.now();
    const gen = await generateProject({ out: root, assets, seed: 11, textureEncoder: 'rgba8' });
    lines.push(`generated ${gen.assets} assets (${gen.files} files) in ${(performance.now() - g0).toFixed(0)} ms`);

    const s0 = performance.now();
    daemon = await Daemon.start({ projectDir: root, consolidateAfterMs: 0 });
    const startS = (performance.now() - s0) / 1000;
    lines.push(`daemon start (watch ready + scan + full cook): ${startS.toFixed(2)} s`);
    const batchMs: number[] = [];
    daemon.bus.on((e: ProgressEvent) => {
      if (e.type === 'BATCH_END') batchMs.push(e.ms);
    });

    // Shipped, non-texture packages, spread evenly over the project (texture cooks are the texture bench's).
    const paksDir = daemon.config.paksDir;
    const mounted = await MountedPaks.mount((await fsp.readdir(paksDir)).filter((n) => n.endsWith('.pak')).map((n) => path.join(paksDir, n)));
    const candidates = daemon.registry
      .all()
      .filter((r) => r.kind === 'package' && r.className !== TEXTURE_CLASS && mounted.pakEntry(r.virtualPath) !== undefined)
      .sort((a, b) => (a.virtualPath < b.virtualPath ? -1 : 1));
    await mounted.close();
    if (candidates.length === 0) throw new Error('no shipped package to edit');
    const picks = Array.from({ length: edits }, (_, i) => candidates[Math.floor((i * candidates.length) / edits)]);

    const devPak = path.join(paksDir, DEV_PAK_NAME);
    const latencies: number[] = [];
    const markers = new Map<string, Buffer>();
    for (let i = 0; i < picks.length; i++) {
      const r = picks[i];
      const marker = `bench-edit-${i}-${Date.now()}`;
      const bytes = editedPackage(await fsp.readFile(r.file), r.file, marker);
      const tmp = `${r.file}.lctmp-bench`;
      await fsp.writeFile(tmp, bytes);
      await fsp.rename(tmp, r.file);
      const t0 = performance.now();
      const seen = await waitForEntry(devPak, r.virtualPath, Buffer.from(marker));
      latencies.push(seen - t0);
      markers.set(r.virtualPath, Buffer.from(marker));
      await daemon.whenIdle();
      await new Promise((res) => setTimeout(res, 20));
    }

    // The runtime's view: every edited path resolves to its last edit through all paks.
    const all = await MountedPaks.mount((await fsp.readdir(paksDir)).filter((n) => n.endsWith('.pak')).map((n) => path.join(paksDir, n)));
    let stale = 0;
    for (const [vp, marker] of markers) if (!Buffer.from(await all.read(vp)).includes(marker)) stale++;
    await all.close();
    if (stale) throw new Error(`${stale} edited paths do not resolve to their last edit through the mounted paks`);

    const sorted = [...latencies].sort((a, b) => a - b);
    const batches = [...batchMs].sort((a, b) => a - b);
    const p50 = percentile(sorted, 50);
    lines.push(`${edits} edits, save -> pak entry readable: p50 ${ms(p50)}, p95 ${ms(percentile(sorted, 95))}, max ${ms(sorted[sorted.length - 1])}`);
    lines.push(`whole batch (registry update, cook, dev pak, cook cache journal): p50 ${ms(percentile(batches, 50))}, p95 ${ms(percentile(batches, 95))}; debounce ${daemon.config.watch.debounceMs} ms`);
    await daemon.whenIdle();
    await new Promise((res) => setTimeout(res, 200));
    globalThis.gc?.();
    const rssMiB = process.memoryUsage().rss / 2 ** 20;
    lines.push(`idle RSS ${rssMiB.toFixed(0)} MiB (heap used ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MiB)`);

    // A second start on the same project: caches warm, paks current (what a developer sees each morning).
    await daemon.stop();
    daemon = undefined;
    const w0 = performance.now();
    daemon = await Daemon.start({ projectDir: root, consolidateAfterMs: 0 });
    const warmStartS = (performance.now() - w0) / 1000;
    lines.push(`daemon start again, caches warm: ${warmStartS.toFixed(2)} s (cold ${startS.toFixed(2)} s)`);
    return { lines, result: { assets, p50, p95: percentile(sorted, 95), batchP50: percentile(batches, 50), startS, warmStartS, rssMiB } };
  } finally {
    await daemon?.stop();
    await fsp.rm(root, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [assets, edits] = process.argv.slice(2).map(Number);
  runWatchSize({ assets: assets || undefined, edits: edits || undefined }).then(
    ({ lines }) => console.log(lines.join('\n')),
    (e) => {
      console.error(e);
      process.exitCode = 1;
    },
  );
}
