/**
 * Cook benchmark: a full cook (scan + plan + cook + paks, cold caches) of a generated project
 * against `tar -cf - Content Plugins | gzip -6 > /dev/null` over the same content in the same run
 * (reading every byte and compressing it once is the floor any cook has to do), interleaved over
 * BENCH_COOK_ROUNDS rounds (default 3, medians). Target: <= 2.0x on 2 cores this round, 1.0x in
 * the end. Then the same cook with the default settings (textures through basisu; skip it with
 * BENCH_COOK_DEFAULT=0) beside its own tar|gzip. Then a no-op re-cook (registry and cook cache
 * warm, nothing changed): target < 0.5 s for 20k assets (< 2 s for 100k: `npx tsx
 * bench/cookBench.ts 100000`), and a one-package change, whose target is the no-op plus that
 * asset: its chunk pak is rebuilt from the previous pak's blocks. No-ops and changes are
 * interleaved (A B A B ...), medians, in this process and without the report; with the report,
 * the first no-op after a change (builds the report's body whole: the change's cook wrote no
 * report, so the last report does not name the asset it cooked) and the next (finds it written);
 * then the whole `lumina-cook cook` process on a no-op (bin/, so `npm run build` first), and the
 * one-package change as a user meets it: an edit, then a whole `lumina-cook cook` process (with
 * the report), each against the no-op process just before it. With the default line on, all of
 * this runs for the default settings first, then for rgba8.
 *
 * The fast line uses the 'rgba8' texture encoder: the KTX2 block encoder is measured by the
 * texture bench, and would turn a cook benchmark into a basisu one.
 *
 * The cook runs from the build in dist/ (plain JavaScript, what the CLI runs), not from the
 * TypeScript sources through tsx: there each cook worker would first spend ~0.3 s of CPU loading
 * its modules through tsx's loader, which no user pays. `npm run bench` builds dist/ first; run
 * alone: `npm run build && npx tsx bench/cookBench.ts [assets]` (a dist/ older than the sources
 * is refused).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { generateProject } from '../samples/index.js';
import { initHash } from '../src/util/hash.js';
import { procCpuMs } from './procCpu.js';
import { editedPackage } from './watchBench.js';

const ms = (t: number) => `${(t / 1000).toFixed(2)} s`;

/** The installed CLI (bin/ runs dist/: `npm run build` first). */
const CLI = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'lumina-cook.js');

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * The measured cook from the build: dist/ beside the sources (this file run through tsx), or the
 * build this file is part of (dist/bench/cookBench.js). A build older than any source it is made
 * from would measure other code than the checkout's: refused.
 */
async function builtCook(): Promise<{ cookProject: typeof import('../cook/cookProject.js').cookProject; ProgressBus: typeof import('../src/log/events.js').ProgressBus }> {
  const fromBuild = import.meta.url.endsWith('.js');
  const built = fromBuild ? path.join(here, '..') : path.join(here, '..', 'dist');
  const entry = path.join(built, 'cook', 'cookProject.js');
  if (!fromBuild) {
    let builtAt: number;
    try {
      builtAt = fs.statSync(entry).mtimeMs;
    } catch {
      throw new Error(`${entry} is missing: run \`npm run build\` first (\`npm run bench\` does)`);
    }
    const sources = path.join(here, '..');
    for (const dir of ['cook', 'src', 'config', 'pak']) {
      for (const f of fs.readdirSync(path.join(sources, dir), { recursive: true, encoding: 'utf8' })) {
        if (f.endsWith('.ts') && fs.statSync(path.join(sources, dir, f)).mtimeMs > builtAt) {
          throw new Error(`dist/ is older than ${dir}/${f}: run \`npm run build\` first (\`npm run bench\` does)`);
        }
      }
    }
  }
  const { cookProject } = (await import(pathToFileURL(entry).href)) as typeof import('../cook/cookProject.js');
  const { ProgressBus } = (await import(pathToFileURL(path.join(built, 'src', 'log', 'events.js')).href)) as typeof import('../src/log/events.js');
  return { cookProject, ProgressBus };
}

/** CPU ms of this process's finished child processes (0 where there is no /proc). */
function childCpuMs(): number {
  return procCpuMs()?.children ?? 0;
}

export async function runCookBench(opts: { assets?: number } = {}): Promise<{ lines: string[] }> {
  await initHash();
  const { cookProject, ProgressBus } = await builtCook();
  const assets = opts.assets ?? 20_000;
  const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'lumina-cookbench-'));
  const lines: string[] = [];
  try {
    const t0 = performance.now();
    const gen = await generateProject({ out: root, assets, seed: 7, textureEncoder: 'rgba8' });
    lines.push(`generated ${gen.assets} assets, ${gen.files} files, ${(gen.bytes / 1048576).toFixed(1)} MiB in ${ms(performance.now() - t0)}`);

    const dirs = (await fsp.readdir(root)).filter((n) => n !== 'lumina-cook.json').sort();
    /** tar | gzip's wall time, and its CPU (user + system of both processes, from the shell's `times`). */
    const tarCpu: number[] = [];
    const tarGzip = (): number => {
      const t = performance.now();
      const tar = spawnSync('bash', ['-c', `tar -cf - ${dirs.join(' ')} | gzip -6 > /dev/null; times`], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
      const wall = performance.now() - t;
      if (tar.status !== 0) throw new Error(`tar | gzip exited with ${tar.status}`);
      // `times` prints the shell's own user/system, then its children's: "0m0.637s 0m0.265s".
      const child = tar.stdout.trim().split('\n')[1] ?? '';
      tarCpu.push(child.split(' ').reduce((sum, t) => sum + (Number(/(\d+)m/.exec(t)?.[1] ?? 0) * 60 + Number(/m([\d.]+)s/.exec(t)?.[1] ?? 0)) * 1000, 0));
      return wall;
    };
    const configFile = path.join(root, 'lumina-cook.json');
    const fastConfig = await fsp.readFile(configFile, 'utf8');
    /**
     * A cold full cook (no Saved, no Intermediates): wall time, CPU of every thread, phase times.
     * The previous round's folders are moved aside (renamed within the project folder) and deleted
     * with it at the end of the bench, never before a timed cook: on an ext4 mounted with
     * `discard`, creating thousands of files right after deleting thousands stalls in open()
     * (6,000 creates: 0.25 s normally, 3.6 s right after an rm of 12k files), and tar | gzip is
     * not charged a delete before it either, so the ratio measures the cook.
     */
    let aside = 0;
    const coldCook = async (config: string) => {
      for (const d of ['Saved', 'Intermediates']) {
        try {
          await fsp.rename(path.join(root, d), path.join(root, `.old-${d}-${aside++}`));
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        }
      }
      await fsp.writeFile(configFile, config);
      // Phase times say where a regression is: the registry scan, the per-asset cook, or the paks.
      const bus = new ProgressBus();
      const phases: string[] = [];
      bus.on((e) => {
        if (e.type === 'END') phases.push(`${e.phase} ${ms(e.ms)}`);
      });
      const cpu0 = process.cpuUsage();
      const children0 = childCpuMs();
      const t = performance.now();
      const summary = await cookProject({ projectDir: root, bus });
      const wall = performance.now() - t;
      const cpu = process.cpuUsage(cpu0);
      // Every thread of this process (main and cook workers) plus the compilers and encoders it ran.
      const cpuMs = (cpu.user + cpu.system) / 1000 + childCpuMs() - children0;
      return { wall, cpuMs, cpuPerWall: (cpu.user + cpu.system) / 1000 / wall, phases, summary };
    };
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

    // Interleaved (baseline, cook, baseline, cook, ...) so a load change on the machine hits both.
    const rounds = Number(process.env.BENCH_COOK_ROUNDS ?? 3);
    const tars: number[] = [];
    const fulls: Awaited<ReturnType<typeof coldCook>>[] = [];
    for (let i = 0; i < rounds; i++) {
      tars.push(tarGzip());
      fulls.push(await coldCook(fastConfig));
    }
    const tarMs = median(tars);
    const fullMs = median(fulls.map((f) => f.wall));
    const ratios = fulls.map((f, i) => f.wall / tars[i]);
    const full = fulls.find((f) => f.wall === fullMs)!;
    if (!full.summary.ok) lines.push(`WARNING: the cook reported ${full.summary.problems.filter((p) => p.severity === 'error').length} errors`);
    const paks = full.summary.paks.map((p) => `${p.chunk} ${(p.bytes / 1048576).toFixed(1)} MiB`).join(', ');
    lines.push(`tar | gzip -6: ${ms(tarMs)} (median of ${rounds}), load average ${os.loadavg()[0].toFixed(1)}`);
    // CPU time says what the work costs whatever else loads the machine (wall time on a loaded
    // machine is mostly waiting for a core); on an idle 2-core machine the cook's wall is about
    // its CPU / 2 and tar|gzip's about gzip's CPU.
    const tarCpuMs = median(tarCpu.slice(0, rounds));
    const cookCpuMs = median(fulls.map((f) => f.cpuMs));
    lines.push(`CPU time: full cook rgba8 ${ms(cookCpuMs)} (all threads and child processes), tar | gzip -6 ${ms(tarCpuMs)}: ${(cookCpuMs / tarCpuMs).toFixed(2)}x; per core on 2 cores ${(cookCpuMs / 2 / tarCpuMs).toFixed(2)}x`);
    lines.push(
      `full cook, textures rgba8: ${ms(fullMs)} (${(fullMs / tarMs).toFixed(2)}x tar|gzip, each round ${ratios.map((r) => r.toFixed(2)).join(' / ')}; target <= 2.0x this round, 1.0x in the end; ` +
        `CPU/wall ${full.cpuPerWall.toFixed(2)}; ${full.phases.join(', ')}): ${full.summary.cooked} cooked, ` +
        `${full.summary.strippedExports} stripped objects, ${(full.summary.bytesIn / 1048576).toFixed(1)} -> ${(full.summary.bytesOut / 1048576).toFixed(1)} MiB; paks ${paks}`,
    );
    // The settings a user gets: textures through basisu (the texture bench measures basisu itself).
    // A shipped mesh, edited the way an editor saves (a new string property), once per round.
    const reports = full.summary.assetReports;
    const edited = reports.find((a) => a.path.startsWith('/Game/Meshes/') && a.status === 'cooked') ?? reports.find((a) => a.path.endsWith('.lasset'))!;
    let edits = 0;
    const timedCook = async (report: boolean) => {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const s = await cookProject({ projectDir: root, report });
      const c = process.cpuUsage(c0);
      return { s, ms: performance.now() - t0, cpuMs: (c.user + c.system) / 1000 };
    };
    /**
     * No-op and one-change cooks of the project as it is cooked now, interleaved (no-op, change,
     * the first no-op with the report after that change, a second one), 3 rounds, medians; then
     * the whole `lumina-cook cook` process on a no-op (start-up, module loading), 3 times.
     */
    const noopRounds = async (label: string) => {
      // The first no-op after a full cook also folds the cache journal: not compared.
      const first = await cookProject({ projectDir: root, report: false });
      lines.push(`${label}first re-cook: ${first.cooked} cooked, ${first.cached} cached, paks rewritten: ${first.paks.filter((p) => p.written).length}`);
      const t = { noop: [] as number[], change: [] as number[], report: [] as number[], again: [] as number[] };
      const cpu = { noop: [] as number[], change: [] as number[] };
      let change: Awaited<ReturnType<typeof cookProject>> | undefined;
      let noopPhases = '';
      let reused = 0;
      for (let round = 0; round < 3; round++) {
        const noop = await timedCook(false);
        t.noop.push(noop.ms);
        cpu.noop.push(noop.cpuMs);
        noopPhases = Object.entries(noop.s.phases).map(([k, v]) => `${k} ${v}`).join(', ');
        await fsp.writeFile(edited.file, editedPackage(await fsp.readFile(edited.file), edited.file, `bench-${edits++}`));
        const changed = await timedCook(false);
        change = changed.s;
        t.change.push(changed.ms);
        cpu.change.push(changed.cpuMs);
        t.report.push((await timedCook(true)).ms);
        const again = await timedCook(true);
        t.again.push(again.ms);
        if (again.s.report?.reused) reused++;
      }
      const noopMs = median(t.noop);
      const target = assets <= 20_000 ? 0.5 : 2;
      lines.push(`${label}no-op re-cook: ${ms(noopMs)} (CPU ${ms(median(cpu.noop))}; target < ${target} s at ${assets <= 20_000 ? '20k' : '100k'}; ms: ${noopPhases}), load ${os.loadavg()[0].toFixed(1)}`);
      const main = change?.paks.find((p) => p.written);
      lines.push(
        `${label}one package changed: ${ms(median(t.change))} (CPU ${ms(median(cpu.change))}), ${(median(t.change) / noopMs).toFixed(2)}x the no-op: ${change?.cooked} cooked, ` +
          `${main ? `${main.chunk}.pak rebuilt with ${main.reused} of ${main.entries} entries copied from the previous pak` : 'no pak rewritten'}`,
      );
      lines.push(
        `${label}no-op re-cook with the report: first after a change ${ms(median(t.report))} (${(median(t.report) / noopMs).toFixed(2)}x the no-op), ` +
          `the next ${ms(median(t.again))} (${(median(t.again) / noopMs).toFixed(2)}x; report body reused ${reused} of 3)`,
      );
      // What a user waits for: a new process, its modules, then the same no-op (with the report).
      const proc: number[] = [];
      const procCpu: number[] = [];
      for (let i = 0; i < 3; i++) {
        const c0 = childCpuMs();
        const t0 = performance.now();
        const r = spawnSync(process.execPath, [CLI, 'cook', '--project', root, '--quiet'], { stdio: 'ignore' });
        proc.push(performance.now() - t0);
        procCpu.push(childCpuMs() - c0);
        if (r.status !== 0) lines.push(`WARNING: lumina-cook cook exited with ${r.status}`);
      }
      lines.push(`${label}\`lumina-cook cook\` no-op as a process: ${ms(median(proc))} (CPU ${ms(median(procCpu))}; ${(median(proc) / median(t.again)).toFixed(2)}x the in-process no-op with the report), load ${os.loadavg()[0].toFixed(1)}`);
      // The one-file change as a user makes it: an edit, then a whole `lumina-cook cook` (its
      // modules, the cook, the report), against the no-op process just before it, interleaved.
      // The in-process rows above leave out the report and the process; this one does not.
      const pairs = { noop: [] as number[], change: [] as number[], noopCpu: [] as number[], changeCpu: [] as number[] };
      const procCook = (wall: number[], cpuList: number[]) => {
        const c0 = childCpuMs();
        const t0 = performance.now();
        const r = spawnSync(process.execPath, [CLI, 'cook', '--project', root, '--quiet'], { stdio: 'ignore' });
        wall.push(performance.now() - t0);
        cpuList.push(childCpuMs() - c0);
        if (r.status !== 0) lines.push(`WARNING: lumina-cook cook exited with ${r.status}`);
      };
      for (let i = 0; i < 3; i++) {
        procCook(pairs.noop, pairs.noopCpu);
        await fsp.writeFile(edited.file, editedPackage(await fsp.readFile(edited.file), edited.file, `bench-${edits++}`));
        procCook(pairs.change, pairs.changeCpu);
      }
      const diffs = pairs.change.map((c, i) => c - pairs.noop[i]);
      lines.push(
        `${label}one package changed, \`lumina-cook cook\` as a process (with the report): ${ms(median(pairs.change))} (CPU ${ms(median(pairs.changeCpu))}), ` +
          `${(median(pairs.change) / median(pairs.noop)).toFixed(2)}x the no-op process before it (${ms(median(pairs.noop))}, CPU ${ms(median(pairs.noopCpu))}; each pair's difference ${diffs.map((d) => `${Math.round(d)} ms`).join(' / ')}), load ${os.loadavg()[0].toFixed(1)}`,
      );
    };

    // The settings a user gets: textures through basisu (the texture bench measures basisu itself).
    if (process.env.BENCH_COOK_DEFAULT !== '0') {
      const { textures: _, ...defaults } = JSON.parse(fastConfig) as Record<string, unknown>;
      const tarD = tarGzip();
      const def = await coldCook(JSON.stringify(defaults, null, 2));
      lines.push(
        `full cook, default settings (textures basis): ${ms(def.wall)} (${(def.wall / tarD).toFixed(2)}x tar|gzip of ${ms(tarD)} just before; CPU/wall ${def.cpuPerWall.toFixed(2)}; ${def.phases.join(', ')}): ` +
          `${def.summary.cooked} cooked${def.summary.ok ? '' : `, ${def.summary.problems.filter((p) => p.severity === 'error').length} errors`}`,
      );
      await noopRounds('default settings: ');
      // Back to rgba8 and its outputs for the no-op cooks below.
      await coldCook(fastConfig);
    }
    await noopRounds(process.env.BENCH_COOK_DEFAULT !== '0' ? 'rgba8: ' : '');
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
