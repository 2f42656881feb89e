/**
 * Where a full cook's memory goes, phase by phase: `tsx bench/memPhases.ts <project> [--release r]`
 * (or `node --expose-gc --import tsx ...` for the live heap after a collection at each phase end).
 * Cooks the project in this process, like `lumina-cook cook`, and prints per phase its peak RSS
 * (exact when the process's high-water mark rose during the phase: VmHWM read at each boundary,
 * else the highest of samples taken every 50 ms) and heap used at its end.
 *
 * Phases: open (registry scan, cook cache load), plan, cook (the per-asset loop), shaders,
 * outputs (AssetRegistry.bin, sweep, marker), paks, after (release, report, cache save).
 * `MEM_SNAPSHOT=<phase>` writes a heap snapshot (after gc) when that phase ends, into the cwd;
 * `MEM_SNAPSHOT=<phase>@<s>` writes it <s> seconds into that phase instead (a cook loop's middle).
 * `MEM_TRACE=<s>` prints RSS, heap and external memory every <s> seconds (a long cook's shape).
 */
import fs from 'node:fs';
import v8 from 'node:v8';
import { Cooker } from '../cook/Cooker.js';
import { ProgressBus } from '../src/log/events.js';

/** A bus that receives the phase events but says nobody listens, so the cook does not build per-asset events for it. */
class QuietBus extends ProgressBus {
  override get listening(): boolean {
    return false;
  }
}

const MiB = 2 ** 20;
const hwm = (): number => {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : process.memoryUsage().rss;
};
const gc = (globalThis as { gc?: () => void }).gc;

interface PhaseRow {
  name: string;
  ms: number;
  peak: number;
  heapEnd: number;
  /** Memory outside the JS heap (Buffers...) at the phase's end. */
  external: number;
  liveEnd?: number;
}

async function main(): Promise<void> {
  const project = process.argv[2];
  if (!project) throw new Error('usage: memPhases.ts <project> [--release name]');
  const ri = process.argv.indexOf('--release');
  const release = ri > 0 ? process.argv[ri + 1] : undefined;
  const rows: PhaseRow[] = [];
  let phase = 'open';
  let phaseStart = performance.now();
  let hwmAtStart = hwm();
  let sampled = process.memoryUsage().rss;
  const timer = setInterval(() => {
    sampled = Math.max(sampled, process.memoryUsage().rss);
  }, 50);
  const enter = (next: string): void => {
    if (next === phase) return;
    const h = hwm();
    const peak = h > hwmAtStart ? h : Math.max(sampled, process.memoryUsage().rss);
    const mu = process.memoryUsage();
    const row: PhaseRow = { name: phase, ms: performance.now() - phaseStart, peak, heapEnd: mu.heapUsed, external: mu.external };
    if (gc) {
      gc();
      row.liveEnd = process.memoryUsage().heapUsed;
    }
    if (snapPhase === phase && snapAt === undefined) process.stderr.write(`snapshot: ${v8.writeHeapSnapshot()}\n`);
    rows.push(row);
    process.stderr.write(`phase ${phase}: ${(row.ms / 1000).toFixed(1)} s, peak RSS ${(peak / MiB).toFixed(0)} MiB, heap ${(row.heapEnd / MiB).toFixed(0)} MiB, external ${(row.external / MiB).toFixed(0)} MiB${row.liveEnd !== undefined ? `, live ${(row.liveEnd / MiB).toFixed(0)} MiB` : ''}\n`);
    phase = next;
    phaseStart = performance.now();
    clearTimeout(snapTimer);
    if (snapPhase === next && snapAt !== undefined) {
      snapTimer = setTimeout(() => {
        gc?.();
        process.stderr.write(`snapshot ${snapAt} s into ${next}: ${v8.writeHeapSnapshot()}\n`);
      }, Number(snapAt) * 1000);
    }
    hwmAtStart = hwm();
    sampled = process.memoryUsage().rss;
  };
  const [snapPhase, snapAt] = (process.env.MEM_SNAPSHOT ?? '').split('@');
  let snapTimer: NodeJS.Timeout | undefined;
  const traceEvery = Number(process.env.MEM_TRACE ?? 0);
  const t0 = performance.now();
  const trace = traceEvery > 0
    ? setInterval(() => {
        const mu = process.memoryUsage();
        process.stderr.write(`  ${((performance.now() - t0) / 1000).toFixed(0)} s ${phase}: RSS ${(mu.rss / MiB).toFixed(0)} MiB, heap ${(mu.heapUsed / MiB).toFixed(0)} MiB, external ${(mu.external / MiB).toFixed(0)} MiB, peak ${(hwm() / MiB).toFixed(0)} MiB\n`);
      }, traceEvery * 1000)
    : undefined;
  const bus = new QuietBus();
  bus.on((e) => {
    if (e.type === 'START' && e.phase === 'cook') enter('cook');
    else if (e.type === 'START' && e.phase === 'pak') enter('paks');
    else if (e.type === 'END' && e.phase === 'pak') enter('after');
  });
  // Phases the bus does not announce: taken where the Cooker calls its own methods.
  const proto = Cooker.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
  const plan = proto.plan;
  proto.plan = function (this: unknown, ...a: unknown[]) {
    if (phase === 'open') enter('plan');
    return plan.apply(this, a);
  };
  const shaders = proto.cookShaders;
  proto.cookShaders = async function (this: unknown, ...a: unknown[]) {
    enter('shaders');
    const r = await shaders.apply(this, a);
    enter('outputs');
    return r;
  };
  const cooker = await Cooker.open({ projectDir: project, bus });
  let ok = false;
  try {
    const s = await cooker.cook({ release });
    ok = s.ok;
    enter('end');
    process.stderr.write(`cook ${s.ok ? 'ok' : 'FAILED'}: ${s.assets} assets, ${s.cooked} cooked, ${s.cached} cached; paks ${s.paks.map((p) => `${p.chunk}${p.written ? ' written' : ' kept'}`).join(', ')}\n`);
  } finally {
    cooker.close();
    clearInterval(timer);
    clearInterval(trace);
    clearTimeout(snapTimer);
  }
  process.stdout.write(`${JSON.stringify({ peakMiB: Math.round(hwm() / MiB), phases: rows.map((r) => ({ ...r, ms: Math.round(r.ms), peak: Math.round(r.peak / MiB), heapEnd: Math.round(r.heapEnd / MiB), external: Math.round(r.external / MiB), liveEnd: r.liveEnd && Math.round(r.liveEnd / MiB) })) })}\n`);
  if (!ok) process.exitCode = 1;
}

main().catch((e) => {
  process.stderr.write(`${(e as Error)?.stack ?? e}\n`);
  process.exitCode = 1;
});
