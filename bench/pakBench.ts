/**
 * Pak benchmarks, all measured in the same run so the numbers compare on the same machine state:
 * 1. DEFLATE engines (node:zlib async on the thread pool vs fflate sync) on one mixed buffer,
 *    which is what picks DEFAULT_ENGINE in src/format/deflateBlocks.ts.
 * 2. Pak build throughput from ~200 MiB of cooked LCKD files vs `tar -cf` of the same files
 *    (plus an fsync of the tar, since the pak writer fsyncs before its rename): with each file
 *    checked against the xxh64 its cook recorded (what a cook does), with every block inflated
 *    and hashed (a cooked folder of unknown files: `pak` from Saved/Cooked, the daemon), and the
 *    rebuild after one file changed, which copies every other entry from the previous pak.
 *    Interleaved rounds, medians.
 * 3. Random-access latency of 4 KiB reads from a 256 MiB DEFLATE entry (seeded offsets).
 *
 * Run: `npx tsx bench/pakBench.ts` (or call runPakBench from the bench runner).
 */
import { spawn } from 'node:child_process';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { initHash, xxh64 } from '../src/util/hash.js';
import { deflateEachBlock, totalLength, type DeflateEngine } from '../src/format/deflateBlocks.js';
import { encodeCooked } from '../src/format/cookedPackage.js';
import { writePak, type PakSource } from '../pak/writePak.js';
import { collectSources } from '../pak/collectSources.js';
import { PakReader } from '../pak/PakReader.js';
import { Random } from '../samples/generate/random.js';

export interface PakBenchOptions {
  /** Total raw MiB of cooked files for the build comparison (default 200). */
  cookedMiB?: number;
  /** Size of the random-access entry in MiB (default 256). */
  bigMiB?: number;
  /** Random 4 KiB reads (default 200). */
  reads?: number;
  /** MiB for the engine comparison (default 64). */
  engineMiB?: number;
  seed?: number;
  /** Called with each result line as it is ready. */
  log?: (line: string) => void;
}

const MiB = 1 << 20;

/** A seeded u32 stream: the same seed gives the same benchmark input on every run. */
function seeded(seed: number): () => number {
  const rnd = new Random(seed);
  return () => rnd.nextU32();
}

/**
 * Deterministic data shaped like cooked content: property-stream-like text and repeated floats
 * (compress well) interleaved with noise runs standing in for already-compressed image data.
 */
function cookedLikeBytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  const next = seeded(seed);
  const words = ['/Script/Engine.CTexture', 'SourceData', 'ArrayProperty', 'RelativeLocation', 'None', '/Game/Maps/', 'StructProperty'];
  let i = 0;
  while (i < n) {
    const r = next();
    const kind = r % 10;
    if (kind < 3) {
      const len = Math.min(n - i, 16 + ((r >>> 8) % 112));
      for (let k = 0; k < len; k += 4) {
        const v = next();
        for (let j = 0; j < 4 && i < n; j++) out[i++] = (v >>> (8 * j)) & 0xff;
      }
    } else if (kind < 7) {
      const w = words[(r >>> 4) % words.length];
      for (let k = 0; k < w.length && i < n; k++) out[i++] = w.charCodeAt(k);
    } else {
      const f = new Float32Array([((r >>> 12) % 1000) / 8]);
      const b = new Uint8Array(f.buffer);
      for (let k = 0; k < 4 && i < n; k++) out[i++] = b[k];
      for (let k = 0; k < 4 && i < n; k++) out[i++] = 0;
    }
  }
  return out;
}

async function timed<T>(f: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t = performance.now();
  const value = await f();
  return { ms: performance.now() - t, value };
}

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d) => (err += d));
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited ${code}: ${err}`))));
  });
}

async function fsyncFile(file: string): Promise<void> {
  const fh = await fsp.open(file, 'r+');
  await fh.sync();
  await fh.close();
}

const mbps = (bytes: number, ms: number) => (bytes / MiB / (ms / 1000)).toFixed(1);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Run the pak benchmarks; resolves with the printed lines. Temp files are removed. */
export async function runPakBench(opts: PakBenchOptions = {}): Promise<{ lines: string[] }> {
  await initHash();
  const cookedMiB = opts.cookedMiB ?? 200;
  const bigMiB = opts.bigMiB ?? 256;
  const reads = opts.reads ?? 200;
  const engineMiB = opts.engineMiB ?? 64;
  const seed = opts.seed ?? 1;
  const lines: string[] = [];
  const say = (l: string) => {
    lines.push(l);
    opts.log?.(l);
  };
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'lumina-pakbench-'));
  try {
    say(`pak bench: ${os.cpus().length} cores, node ${process.version}, UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? '4 (default)'}`);

    // 1. Engines.
    const sample = cookedLikeBytes(engineMiB * MiB, seed);
    const engineMs: Record<DeflateEngine, number> = { zlib: 0, fflate: 0 };
    for (const engine of ['zlib', 'fflate'] as const) {
      const { ms, value } = await timed(() => deflateEachBlock(sample, { engine, level: 6 }));
      engineMs[engine] = ms;
      say(`deflate engines: ${engine.padEnd(6)} L6 ${mbps(sample.byteLength, ms)} MB/s, ratio ${(totalLength(value) / sample.byteLength).toFixed(3)} (${engineMiB} MiB, 64 KiB blocks)`);
    }
    say(`deflate engines: zlib/fflate speed ratio ${(engineMs.fflate / engineMs.zlib).toFixed(2)}x`);

    // 2. Pak build vs tar over the same cooked files.
    const cooked = path.join(dir, 'Cooked');
    const next = seeded(seed + 1);
    let raw = 0;
    let onDisk = 0;
    let files = 0;
    const gen = await timed(async () => {
      while (raw < cookedMiB * MiB) {
        const size = Math.min(cookedMiB * MiB - raw, 16 * 1024 + (next() % (2 * MiB)));
        const folder = path.join(cooked, 'Game', `Folder${files % 20}`);
        await fsp.mkdir(folder, { recursive: true });
        const lckd = await encodeCooked(cookedLikeBytes(size, seed + 10 + files));
        await fsp.writeFile(path.join(folder, `Asset${files}.lasset`), lckd);
        raw += size;
        onDisk += lckd.byteLength;
        files++;
      }
    });
    say(`cooked input: ${files} LCKD files, ${(raw / MiB).toFixed(0)} MiB raw, ${(onDisk / MiB).toFixed(1)} MiB on disk (generated in ${(gen.ms / 1000).toFixed(1)} s)`);
    const sources = await collectSources(cooked);
    // What a cook knows of its outputs: the xxh64 of each file as it wrote it.
    const hashed: PakSource[] = await Promise.all(
      sources.map(async (src) => (src.kind === 'cooked' ? { ...src, cookedXxh64: xxh64(await fsp.readFile(src.file)) } : src)),
    );
    const pakFile = path.join(dir, 'bench.pak');
    const tarFile = path.join(dir, 'bench.tar');
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
    const t = { hashed: [] as number[], inflated: [] as number[], incremental: [] as number[], tar: [] as number[] };
    // One file changes between rounds: the incremental build copies the others from the last pak.
    const changed = hashed.findIndex((src) => src.kind === 'cooked');
    let version = 0;
    const change = async () => {
      const src = hashed[changed] as Extract<PakSource, { kind: 'cooked' }>;
      const lckd = await encodeCooked(cookedLikeBytes(64 * 1024 + (version % 7), seed + 1000 + version++));
      await fsp.writeFile(src.file, lckd);
      hashed[changed] = { ...src, cookedXxh64: xxh64(lckd) };
    };
    let reused = 0;
    for (let round = 0; round < 3; round++) {
      t.inflated.push((await timed(() => writePak(pakFile, sources))).ms);
      t.tar.push(
        (
          await timed(async () => {
            await run('tar', ['-cf', tarFile, '-C', cooked, '.']);
            await fsyncFile(tarFile);
          })
        ).ms,
      );
      t.hashed.push((await timed(() => writePak(pakFile, hashed))).ms);
      await change();
      const inc = await timed(() => writePak(pakFile, hashed, { previous: pakFile }));
      reused = inc.value.reused;
      t.incremental.push(inc.ms);
      sources.splice(0, sources.length, ...hashed.map((src) => (src.kind === 'cooked' ? { path: src.path, kind: 'cooked' as const, file: src.file } : src)));
    }
    const pakSize = (await fsp.stat(pakFile)).size;
    const tar = median(t.tar);
    const line = (what: string, ms: number) => `${what}: ${mbps(onDisk, ms)} MB/s (${(ms / 1000).toFixed(2)} s, ${(ms / tar).toFixed(2)}x tar -cf + fsync)`;
    say(`tar -cf + fsync: ${mbps(onDisk, tar)} MB/s (${(tar / 1000).toFixed(2)} s); pak ${(pakSize / MiB).toFixed(1)} MiB; medians of 3 interleaved rounds, load ${os.loadavg()[0].toFixed(1)}`);
    say(line('pak build, each cooked file checked against its recorded xxh64 (the cook), target <= 1.0x', median(t.hashed)));
    say(line('pak build, every cooked block inflated and hashed (files of unknown hash)', median(t.inflated)));
    say(line(`pak rebuild after one file changed (${reused} of ${files} entries copied from the previous pak)`, median(t.incremental)));
    await fsp.rm(cooked, { recursive: true, force: true });
    await fsp.rm(pakFile, { force: true });
    await fsp.rm(tarFile, { force: true });

    // 3. Random 4 KiB reads from one 256 MiB entry.
    const bigFile = path.join(dir, 'big.bin');
    await fsp.writeFile(bigFile, cookedLikeBytes(bigMiB * MiB, seed + 2));
    const bigPak = path.join(dir, 'big.pak');
    const build = await timed(() => writePak(bigPak, [{ path: '/Game/Big.bin', kind: 'file', file: bigFile }]));
    say(`big entry: ${bigMiB} MiB file compressed into a pak at ${mbps(bigMiB * MiB, build.ms)} MB/s`);
    await fsp.rm(bigFile, { force: true });
    const pak = await PakReader.open(bigPak);
    try {
      const rnd = seeded(seed + 3);
      const size = bigMiB * MiB;
      const lat: number[] = [];
      for (let i = 0; i < reads + 10; i++) {
        const off = Math.floor((rnd() / 2 ** 32) * (size - 4096));
        const t = performance.now();
        await pak.readRange('/Game/Big.bin', off, 4096);
        if (i >= 10) lat.push(performance.now() - t); // first 10 warm the JIT and the block table
      }
      lat.sort((a, b) => a - b);
      say(`random 4 KiB reads from a ${bigMiB} MiB entry: p50 ${percentile(lat, 50).toFixed(3)} ms, p95 ${percentile(lat, 95).toFixed(3)} ms over ${reads} seeded offsets`);
    } finally {
      await pak.close();
    }
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
  return { lines };
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  runPakBench({ log: (l) => console.log(l) }).catch((e) => {
    console.error(e);
    process.exitCode = 1;
  });
}
