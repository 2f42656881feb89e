/**
 * Registry benchmark: cold scan (no cache) and warm no-op scan (cache present, nothing changed) of
 * a generated project, each as a ratio against `find <root> -type f -printf '%T@ %s\n'`, which does
 * the minimum any scan must do (list every folder, stat every file). Target (issue 15): warm
 * <= 2x find. The `registry scan` command as a whole (a new process: Node start-up, module loading,
 * cache load, scan, output) is timed the same way, interleaved with find (A B A B, medians), since
 * that is what a user waits for.
 *
 * The generator builds one template package with buildPackage and patches the GUIDs and the
 * fixed-width asset name per file, so 50k packages are written in seconds.
 *
 * Run alone: `npx tsx bench/registryBench.ts [assets]`.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildPackage, hard, soft } from '../src/format/packageBuilder.js';
import { PACKAGE_HEADER_SIZE, IMPORT_ENTRY_SIZE } from '../src/format/packageTypes.js';
import PQueue from 'p-queue';
import { loadConfig } from '../config/index.js';
import { readPackageTables } from '../src/format/packageReader.js';
import { AssetRegistry } from '../src/registry/AssetRegistry.js';
import { defaultReadThreads } from '../src/registry/readPool.js';
import { procCpuMs } from './procCpu.js';

const FOLDERS = 500;
const IMPORTS = 3;
const NAME_DIGITS = 7;

/** GUID of generated asset i: unique, 32 hex digits. */
export function benchGuid(i: number): string {
  return `b${i.toString(16).padStart(31, '0')}`;
}

/**
 * Write a project with `assets` packages spread over ~500 folders under `root`, each importing
 * up to three earlier assets (two Hard, one Soft). Asset 0 is flagged Primary.
 */
export async function generateBenchProject(root: string, assets: number): Promise<void> {
  const nameOf = (i: number) => `A${String(i).padStart(NAME_DIGITS, '0')}`;
  const template = buildPackage({
    imports: [hard(benchGuid(0)), hard(benchGuid(0)), soft(benchGuid(0))],
    exports: [{ guid: benchGuid(0), name: nameOf(0), className: '/Script/Engine.CStaticMesh', assetFlags: 0 }],
  });
  const exportAt = PACKAGE_HEADER_SIZE + IMPORTS * IMPORT_ENTRY_SIZE;
  const nameAt = exportAt + 16 + 4;
  // assetFlags is the export entry's last field, right before the object data.
  const flagsAt = readObjectDataOffset(template) - 4;
  const content = path.join(root, 'Content');
  await fsp.mkdir(content, { recursive: true });
  await fsp.writeFile(path.join(root, 'lumina-cook.json'), JSON.stringify({ name: 'Bench', cookRoots: [] }, null, 2));
  const dirs: string[] = [];
  for (let d = 0; d < Math.min(FOLDERS, assets); d++) {
    const dir = path.join(content, `Set${String(Math.floor(d / 25)).padStart(2, '0')}`, `F${String(d).padStart(3, '0')}`);
    fs.mkdirSync(dir, { recursive: true });
    dirs.push(dir);
  }
  const buf = Buffer.from(template);
  for (let i = 0; i < assets; i++) {
    for (let k = 0; k < IMPORTS; k++) {
      const dep = i === 0 ? 0 : Math.floor((i * (k + 7) * 2654435761) % i);
      Buffer.from(benchGuid(dep), 'hex').copy(buf, PACKAGE_HEADER_SIZE + k * IMPORT_ENTRY_SIZE);
    }
    Buffer.from(benchGuid(i), 'hex').copy(buf, exportAt);
    buf.write(nameOf(i), nameAt, 'latin1');
    buf.writeUInt32LE(i === 0 ? 1 : 0, flagsAt);
    fs.writeFileSync(path.join(dirs[i % dirs.length], `${nameOf(i)}.lasset`), buf);
  }
}

function readObjectDataOffset(pkg: Uint8Array): number {
  return Number(Buffer.from(pkg).readBigInt64LE(32));
}

const CLI = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'lumina-cook.js');

/** `lumina-cook registry scan` as a user runs it: the compiled CLI in a new process. */
function timeScanCommand(root: string): number {
  const t = performance.now();
  const r = spawnSync(process.execPath, [CLI, 'registry', 'scan', '--project', root, '--quiet']);
  if (r.status !== 0) throw new Error(`registry scan failed (${r.status}): ${r.stderr}`);
  return performance.now() - t;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function timeFind(root: string): number {
  return timeFindCpu(root).ms;
}

/** CPU time of the children this process has waited for (in 10 ms ticks), or null without /proc. */
function childrenCpuMs(): number | null {
  return procCpuMs()?.children ?? null;
}

/** find's wall time, and its CPU time (the shell's and find's) when /proc tells it. */
function timeFindCpu(root: string): { ms: number; cpuMs: number | null } {
  const c = childrenCpuMs();
  const t = performance.now();
  const r = spawnSync('sh', ['-c', `find "${root}" -type f -printf '%T@ %s\\n' > /dev/null`]);
  if (r.status !== 0) throw new Error(`find failed: ${r.stderr}`);
  const ms = performance.now() - t;
  const after = childrenCpuMs();
  return { ms, cpuMs: c === null || after === null ? null : after - c };
}

const fmt = (ms: number) => `${ms.toFixed(0)} ms`;

/** Generate, then time find, a cold scan and a warm no-op scan (fresh registry loaded from the cache). */
export async function runRegistryBench(opts: { assets?: number; keep?: boolean } = {}): Promise<{ lines: string[]; coldMs: number; warmMs: number; findMs: number; tablesMs: number }> {
  const assets = opts.assets ?? 50_000;
  const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'lumina-regbench-'));
  const lines: string[] = [];
  try {
    let t = performance.now();
    await generateBenchProject(root, assets);
    lines.push(`registry: generated ${assets} packages in ${fmt(performance.now() - t)}`);
    const { config } = loadConfig(root);

    // Warm the OS cache for every measurement alike, then take the best of three finds.
    timeFind(root);
    const findMs = Math.min(timeFind(root), timeFind(root), timeFind(root));

    // The floor for a cold scan: open every package and read its header and tables, nothing else.
    const files = spawnSync('find', [path.join(root, 'Content'), '-type', 'f', '-name', '*.lasset'], { maxBuffer: 1 << 28 })
      .stdout.toString()
      .split('\n')
      .filter(Boolean);
    t = performance.now();
    const q = new PQueue({ concurrency: 32 });
    for (const f of files) void q.add(() => readPackageTables(f));
    await q.onIdle();
    const tablesMs = performance.now() - t;

    // The cold scan on the main thread alone (readThreads 0), then with one read thread per core
    // (readPool.ts), each from no cache; the second one's cache stays for the warm scans.
    const coldOnce = async (readThreads?: number) => {
      fs.rmSync(config.intermediatesDir, { recursive: true, force: true });
      const c = process.cpuUsage();
      const t0 = performance.now();
      const reg = await AssetRegistry.open({ config, ...(readThreads === undefined ? {} : { readThreads }) });
      const r = await reg.scan();
      const ms = performance.now() - t0;
      const u = process.cpuUsage(c);
      reg.close();
      if (r.assets !== assets || r.problems.length > 0) throw new Error(`cold scan found ${r.assets} assets and ${r.problems.length} problems`);
      return { ms, cpuMs: (u.user + u.system) / 1000 };
    };
    const coldMain = await coldOnce(0);
    // Chosen explicitly: by default a scan starts no read threads while the machine has no idle core.
    const coldThreads = await coldOnce(defaultReadThreads());
    const coldMs = coldThreads.ms;

    // Interleaved with find (A B A B), medians of 5; the first run also pays for JIT warm-up of
    // the warm path, so it is shown too. CPU time is taken for both as well: on a loaded machine
    // wall times mostly measure the load, while CPU (both are single-threaded) stays close to
    // what a quiet machine's wall ratio would be.
    const warmRuns: number[] = [];
    const warmFinds: number[] = [];
    const warmCpu: number[] = [];
    const findCpu: number[] = [];
    for (let run = 0; run < 5; run++) {
      const f = timeFindCpu(root);
      warmFinds.push(f.ms);
      if (f.cpuMs !== null) findCpu.push(f.cpuMs);
      const c = process.cpuUsage();
      t = performance.now();
      const warm = await AssetRegistry.open({ config });
      const r = await warm.scan();
      warmRuns.push(performance.now() - t);
      const u = process.cpuUsage(c);
      warmCpu.push((u.user + u.system) / 1000);
      warm.close();
      if (r.cached !== assets || r.read !== 0) throw new Error(`warm scan read ${r.read} files, cached ${r.cached}`);
    }
    const firstWarmMs = warmRuns[0];
    const warmMs = median(warmRuns);
    const warmFindMs = median(warmFinds);

    // A registry that is already open (the daemon's case) re-scans without loading the cache.
    const open = await AssetRegistry.open({ config });
    await open.scan();
    let rescanMs = Infinity;
    for (let run = 0; run < 3; run++) {
      t = performance.now();
      await open.scan();
      rescanMs = Math.min(rescanMs, performance.now() - t);
    }

    // The whole command against find, interleaved so both see the same machine load.
    const finds: number[] = [];
    const commands: number[] = [];
    for (let run = 0; run < 5; run++) {
      finds.push(timeFind(root));
      commands.push(timeScanCommand(root));
    }
    const cmdMs = median(commands);
    const cmdFindMs = median(finds);

    lines.push(`registry: find -printf over ${assets} files: ${fmt(findMs)}`);
    lines.push(`registry: readPackageTables alone over every file: ${fmt(tablesMs)}`);
    lines.push(
      `registry: cold scan ${fmt(coldMs)} with ${defaultReadThreads()} read threads (${(coldMs / findMs).toFixed(1)}x find, ${(coldMs / tablesMs).toFixed(2)}x reading the tables; CPU ${fmt(coldThreads.cpuMs)}), main thread only ${fmt(coldMain.ms)} (CPU ${fmt(coldMain.cpuMs)}): ${(coldMs / coldMain.ms).toFixed(2)}x`,
    );
    lines.push(
      `registry: warm no-op scan incl. cache load ${fmt(warmMs)} median of 5, first ${fmt(firstWarmMs)}, against find ${fmt(warmFindMs)} interleaved (${(warmMs / warmFindMs).toFixed(2)}x find; target <= 2x: ${warmMs <= 2 * warmFindMs ? 'met' : 'MISSED'})`,
    );
    if (findCpu.length === warmCpu.length) {
      const sc = median(warmCpu);
      const fc = median(findCpu);
      lines.push(`registry: warm no-op scan CPU ${fmt(sc)} against find's ${fmt(fc)} (${(sc / fc).toFixed(2)}x; medians of 5, same runs; find's in 10 ms ticks)`);
    }
    lines.push(`registry: warm re-scan of an open registry ${fmt(rescanMs)} best of 3 (${(rescanMs / findMs).toFixed(2)}x find)`);
    lines.push(
      `registry: \`registry scan\` command, warm, whole process: ${fmt(cmdMs)} median of 5 against find ${fmt(cmdFindMs)} interleaved (${(cmdMs / cmdFindMs).toFixed(1)}x find; load average ${os.loadavg()[0].toFixed(1)})`,
    );
    return { lines, coldMs, warmMs, findMs, tablesMs };
  } finally {
    if (!opts.keep) await fsp.rm(root, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const n = process.argv[2] ? Number(process.argv[2]) : undefined;
  runRegistryBench({ assets: n }).then(
    (r) => console.log(r.lines.join('\n')),
    (e) => {
      console.error(e);
      process.exitCode = 1;
    },
  );
}
