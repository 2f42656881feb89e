/**
 * `npm run bench:scale`: the cook at studio scale. For 10k, 100k and 1M generated assets it runs
 * each step as its own process of the built CLI (dist/, built first) and prints them side by side:
 * wall time per generated asset and the process's peak RSS (`/usr/bin/time`'s maximum resident
 * set size, else the last VmHWM read from /proc while it ran).
 *
 * Steps: `samples generate`, a cold `cook --release base`, a no-op cook, a one-file change (a
 * script gains a line) and its cook, `patch --base base`, and a daemon start (`watch` until it
 * prints its status page, i.e. scanned and cooked, then `daemon stop`).
 *
 *   BENCH_SCALE_MAX=100000     stop after this size (default 1000000)
 *   BENCH_SCALE_SIZES=10000,50000  these sizes instead
 *   BENCH_SCALE_ENCODER=rgba8  textures.encoder in the generated projects (default: none, so the
 *                              user's default, basis)
 *   BENCH_SCALE_DIR=/big/disk  where projects go (default the OS temp folder; a 1M project and
 *                              its cook take ~6 GB); each is deleted after its size unless
 *                              BENCH_SCALE_KEEP=1
 *   BENCH_SCALE_STEPS=generate,cold  only these steps (a later step needs the earlier ones' output;
 *                              without generate, cold moves a kept project's output aside first)
 *
 * The machine's load average is printed beside the table: on a shared machine times move with it.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(REPO, 'bin', 'lumina-cook.js');
const TIME = '/usr/bin/time';
const STEPS = ['generate', 'cold', 'noop', 'one-file', 'patch', 'daemon'] as const;
type Step = (typeof STEPS)[number];

interface Measured {
  ms: number;
  /** Peak resident set size in MiB, or NaN when it could not be read. */
  rssMiB: number;
  /** User + system CPU seconds of the CLI process and its waited-for children (`/usr/bin/time`), or NaN. */
  cpuS: number;
  ok: boolean;
  stdout: string;
  stderr: string;
}

/** Peak RSS of a finished process from /usr/bin/time's `%M` line (KiB), else the polled value. */
function parseTimeRss(stderr: string): number | undefined {
  const m = /^LUMINA_MAXRSS_KB=(\d+)/m.exec(stderr);
  return m ? Number(m[1]) / 1024 : undefined;
}

/** User + system CPU seconds from /usr/bin/time's `%U` and `%S` (same line as the RSS). */
function parseTimeCpu(stderr: string): number {
  const m = /^LUMINA_MAXRSS_KB=\d+ USER_S=([\d.]+) SYS_S=([\d.]+)$/m.exec(stderr);
  return m ? Number(m[1]) + Number(m[2]) : NaN;
}

/**
 * Run the CLI with `args`; `until(stdoutSoFar)` may end it early (the daemon: resolve when it is
 * ready, and `stop` is called). Measures wall time and peak RSS of the CLI process itself.
 */
function runCli(args: string[], opts: { until?: (out: string) => boolean; stop?: () => void; env?: NodeJS.ProcessEnv } = {}): Promise<Measured> {
  const useTime = fs.existsSync(TIME);
  const cmd = useTime ? TIME : process.execPath;
  const argv = useTime ? ['-f', 'LUMINA_MAXRSS_KB=%M USER_S=%U SYS_S=%S', process.execPath, CLI, ...args] : [CLI, ...args];
  const t0 = performance.now();
  const child = spawn(cmd, argv, { env: { ...process.env, LUMINA_LOG_LEVEL: 'warn', ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let polled = NaN;
  let readyMs: number | undefined;
  // Without /usr/bin/time: VmHWM of the CLI process (our child), read until it exits.
  const poll = useTime
    ? undefined
    : setInterval(() => {
        try {
          const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
          if (m) polled = Number(m[1]) / 1024;
        } catch {
          /* gone */
        }
      }, 100);
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    if (readyMs === undefined && opts.until?.(stdout)) {
      readyMs = performance.now() - t0;
      opts.stop?.();
    }
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (stderr.length > 1 << 20) stderr = stderr.slice(-(1 << 19));
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (poll) clearInterval(poll);
      const ms = readyMs ?? performance.now() - t0;
      resolve({ ms, rssMiB: parseTimeRss(stderr) ?? polled, cpuS: parseTimeCpu(stderr), ok: code === 0 || (opts.until !== undefined && readyMs !== undefined), stdout, stderr });
    });
  });
}

/** A script of the project gains a comment line: one changed file for the next cook. */
async function changeOneFile(project: string): Promise<string> {
  const walk = async (dir: string): Promise<string | undefined> => {
    for (const e of await fsp.readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, e.name);
      if (e.isFile() && e.name.endsWith('.luau')) return full;
      if (e.isDirectory()) {
        const hit = await walk(full);
        if (hit) return hit;
      }
    }
    return undefined;
  };
  const file = await walk(path.join(project, 'Content', 'Scripts'));
  if (!file) throw new Error(`no .luau script under ${project}/Content/Scripts to change`);
  await fsp.appendFile(file, `-- edited by bench:scale at ${new Date().toISOString()}\n`);
  return file;
}

const OUTPUT_DIRS = ['Saved', 'Intermediates'];

/** Move a cooked project's `Saved` and `Intermediates` into a sibling folder, for a cold cook. */
async function moveOutputAside(project: string): Promise<string> {
  const aside = `${project}.aside-${process.pid}-${Date.now()}`;
  await fsp.mkdir(aside);
  for (const name of OUTPUT_DIRS) {
    await fsp.rename(path.join(project, name), path.join(aside, name)).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT') throw e;
    });
  }
  return aside;
}

/**
 * Undo moveOutputAside after a cold cook that failed: its partial output goes, the kept one comes
 * back. At 1M the kept output is an hour of cooking; a failed run must not cost it.
 */
async function restoreOutput(project: string, aside: string): Promise<void> {
  for (const name of OUTPUT_DIRS) {
    const kept = path.join(aside, name);
    if (!fs.existsSync(kept)) continue;
    await fsp.rm(path.join(project, name), { recursive: true, force: true });
    await fsp.rename(kept, path.join(project, name));
  }
  await fsp.rm(aside, { recursive: true, force: true });
}

function loadAverage(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
}

export interface ScaleBenchOptions {
  sizes: number[];
  encoder?: 'basis' | 'rgba8';
  dir: string;
  keep: boolean;
  steps: readonly Step[];
  log: (line: string) => void;
}

export type ScaleResults = Map<number, Map<Step, Measured & { note?: string }>>;

/** Run every step for every size; returns the measurements (failed steps have ok false). */
export async function runScaleBench(opts: ScaleBenchOptions): Promise<ScaleResults> {
  const results: ScaleResults = new Map();
  for (const n of opts.sizes) {
    const project = path.join(opts.dir, `scale-${n}`);
    // Without the generate step the later steps run on the project a kept run left there.
    if (opts.steps.includes('generate')) await fsp.rm(project, { recursive: true, force: true });
    const row = new Map<Step, Measured & { note?: string }>();
    results.set(n, row);
    let aside: string | undefined;
    let coldOk = false;
    const step = async (name: Step, run: () => Promise<Measured & { note?: string }>) => {
      if (!opts.steps.includes(name)) return;
      opts.log(`${n} assets: ${name} (load ${loadAverage()})`);
      const m = await run();
      row.set(name, m);
      opts.log(`  ${(m.ms / 1000).toFixed(1)} s, CPU ${m.cpuS.toFixed(1)} s, peak RSS ${m.rssMiB.toFixed(0)} MiB (${(m.rssMiB * 1024).toFixed(0)} KiB), load ${loadAverage()}${m.ok ? '' : `, FAILED: ${lastLines(m.stderr + m.stdout)}`}`);
      if (!m.ok) throw new Error(`${name} failed at ${n} assets`);
    };
    try {
      await step('generate', () => runCli(['samples', 'generate', '--assets', String(n), '--out', project, ...(opts.encoder ? ['--texture-encoder', opts.encoder] : [])]));
      await step('cold', async () => {
        // On a kept project (no generate step) the last run's output is moved aside, not deleted:
        // on a journal-less ext4 a create right after an rm of many files pays for the inode reuse.
        if (!opts.steps.includes('generate')) aside = await moveOutputAside(project);
        const m = await runCli(['cook', '--project', project, '--release', 'base']);
        coldOk = m.ok;
        return m;
      });
      await step('noop', () => runCli(['cook', '--project', project]));
      await step('one-file', async () => {
        const file = await changeOneFile(project);
        return { ...(await runCli(['cook', '--project', project])), note: path.relative(project, file) };
      });
      await step('patch', async () => {
        // A second change, so the patch holds something the base does not.
        await changeOneFile(project);
        return runCli(['patch', '--project', project, '--base', 'base', '--out', path.join(project, 'Saved', 'patch.pak')]);
      });
      await step('daemon', () =>
        runCli(['watch', '--project', project], {
          until: (out) => out.includes('status page:'),
          stop: () => void runCli(['daemon', 'stop', '--project', project]),
        }),
      );
    } catch (e) {
      opts.log(`  ${(e as Error).message}; the later steps of ${n} are skipped`);
    } finally {
      if (aside) await (coldOk ? fsp.rm(aside, { recursive: true, force: true }) : restoreOutput(project, aside));
      if (!opts.keep && opts.steps.includes('generate')) await fsp.rm(project, { recursive: true, force: true });
    }
  }
  return results;
}

function lastLines(s: string): string {
  return s.trim().split('\n').slice(-3).join(' | ').slice(0, 400);
}

/** The side-by-side table: one row per step, per size the time per generated asset and peak RSS. */
export function formatScaleTable(results: ScaleResults, steps: readonly Step[]): string[] {
  const sizes = [...results.keys()];
  const label = (n: number) => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : String(n));
  const lines = [['step'.padEnd(10), ...sizes.map((n) => `${label(n)}: total, us/asset, peak RSS`.padStart(36))].join(' ')];
  for (const s of steps) {
    const cols = sizes.map((n) => {
      const m = results.get(n)!.get(s);
      if (!m) return 'not run'.padStart(36);
      const perAsset = (m.ms * 1000) / n;
      return `${m.ok ? '' : 'FAILED '}${(m.ms / 1000).toFixed(1)} s, ${perAsset.toFixed(1)} us, ${Number.isNaN(m.rssMiB) ? '?' : m.rssMiB.toFixed(0)} MiB`.padStart(36);
    });
    lines.push([s.padEnd(10), ...cols].join(' '));
  }
  return lines;
}

async function main(): Promise<void> {
  const max = Number(process.env.BENCH_SCALE_MAX ?? 1_000_000);
  const sizes = process.env.BENCH_SCALE_SIZES ? process.env.BENCH_SCALE_SIZES.split(',').map(Number) : [10_000, 100_000, 1_000_000].filter((n) => n <= max);
  const encoder = process.env.BENCH_SCALE_ENCODER as 'basis' | 'rgba8' | undefined;
  if (encoder !== undefined && encoder !== 'basis' && encoder !== 'rgba8') throw new Error(`BENCH_SCALE_ENCODER must be basis or rgba8, not ${encoder}`);
  const steps = process.env.BENCH_SCALE_STEPS ? (process.env.BENCH_SCALE_STEPS.split(',') as Step[]) : STEPS;
  const bad = steps.filter((s) => !STEPS.includes(s));
  if (bad.length) throw new Error(`unknown step ${bad.join(', ')}; have ${STEPS.join(', ')}`);
  const dir = process.env.BENCH_SCALE_DIR ?? (await fsp.mkdtemp(path.join(os.tmpdir(), 'lumina-scale-')));
  await fsp.mkdir(dir, { recursive: true });
  const log = (l: string) => process.stderr.write(`${l}\n`);

  // The CLI as users run it: the compiled build, fresh.
  log('building dist/ (tsc -p tsconfig.build.json)');
  const build = spawnSync(process.execPath, [path.join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(REPO, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (build.status !== 0) throw new Error('the build failed');

  const loadBefore = loadAverage();
  const t0 = performance.now();
  const results = await runScaleBench({ sizes, encoder, dir, keep: Boolean(process.env.BENCH_SCALE_KEEP), steps, log });
  const out = [
    `bench:scale, textures.encoder ${encoder ?? 'default (basis)'}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB; load average ${loadBefore} before, ${loadAverage()} after; ${((performance.now() - t0) / 60000).toFixed(1)} min`,
    ...formatScaleTable(results, steps),
  ];
  process.stdout.write(`${out.join('\n')}\n`);
  if (!process.env.BENCH_SCALE_DIR && !process.env.BENCH_SCALE_KEEP) await fsp.rm(dir, { recursive: true, force: true });
  if ([...results.values()].some((r) => [...r.values()].some((m) => !m.ok))) process.exitCode = 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    process.stderr.write(`${(e as Error)?.stack ?? e}\n`);
    process.exitCode = 1;
  });
}
