/**
 * Running external tools (basisu, shader compilers) so that none can hang the cook or outlive it.
 *
 * - Every run has a timeout. The child is started as the leader of its own process group and the
 *   whole group is SIGKILLed on timeout, on abort, on Ctrl-C (SIGINT/SIGTERM/SIGHUP) of this
 *   process and when this process exits, so a tool that forked helpers leaves none behind.
 * - stdout and stderr are always drained: a child blocked on a full pipe looks exactly like a hung
 *   one. Only a bounded tail (and, when asked for, a bounded stdout) is kept.
 * - Runs share one bounded pool of CPU slots, sized to the cores: a run declares how many threads
 *   it uses and waits until that many slots are free, so the encoders and compilers together
 *   never oversubscribe the machine.
 * - {@link runChildRetrying} retries a failed run once; the caller turns the final failure into a
 *   typed error that names the asset ({@link describeChildFailure} says what happened).
 *
 * Why the process group: a detached child does not get the terminal's Ctrl-C (it is not in the
 * foreground group), so this module forwards it. While children run, a listener for each signal
 * is installed; when it is the only one (nobody else handles the signal) it kills the children
 * and re-raises the signal, so the process dies of it exactly as it would have without this
 * module. When the program handles the signal itself (the cook and the daemon stop gracefully,
 * finishing the work in flight), the children are left to finish that work, bounded by their
 * timeouts, and whatever still runs when the process exits is killed then (a second Ctrl-C
 * exits at once). A kill -9 of this process cannot be intercepted: its children then run until
 * they end by themselves.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { Semaphore } from './semaphore.js';
import { killGroupByPid, runInHelper, type HelperRun } from './spawnHelper.js';

export interface RunChildOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Kill the run (its whole process group) after this many milliseconds. Required: nothing runs unbounded. */
  timeoutMs: number;
  /** Threads the child uses; that many slots of {@link RunChildOptions.slots} are held while it runs. Default 1. */
  threads?: number;
  /** The pool to take slots from: default the shared {@link childSlots}; `null` takes none. */
  slots?: Semaphore | null;
  /** Bytes written to the child's stdin (then closed); otherwise stdin is /dev/null. */
  input?: Uint8Array;
  /** Keep up to this many bytes of stdout in `stdout` (default 0: only the tail in `output`). More is a failure: the run is killed. */
  maxStdoutBytes?: number;
  /** Aborting kills the run. */
  signal?: AbortSignal;
  /**
   * Start the child from a small helper process (src/util/spawnHelper.ts) instead of this one: a
   * fork of a large process costs tens of milliseconds and a copy-on-write fault per page after.
   * Same semantics (group kill, timeout, drained output, killed with this process). POSIX only.
   */
  viaHelper?: boolean;
}

export interface ChildRun {
  /** Exit code; null when the child was killed by a signal. */
  code: number | null;
  /** The signal that ended it, if any (SIGKILL after a timeout). */
  signal: NodeJS.Signals | null;
  /** Killed because it ran past `timeoutMs`. */
  timedOut: boolean;
  /** Killed because `signal` aborted. */
  aborted: boolean;
  /** Killed because stdout passed `maxStdoutBytes`. */
  stdoutOverflow: boolean;
  /** stdout, when `maxStdoutBytes` asked for it. */
  stdout: Buffer;
  /** The last 8 KiB of stdout and stderr as they arrived: tools report errors on either. */
  output: string;
  /** Wall time from spawn to exit. */
  ms: number;
}

const OUTPUT_TAIL = 8192;

/** The pool every child run shares by default: one slot per core. */
export const childSlots = new Semaphore(Math.max(1, os.availableParallelism()));

// ---- every live child, so signals and exit can take them down ----

const live = new Set<ChildProcess>();
/** Runs started by the spawn helper: killed here by group once their pid is known (before that, by the helper). */
const liveHelperRuns = new Set<HelperRun>();
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
let hooked = false;

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    // The negative pid is the whole group the detached child leads.
    if (process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL');
    else child.kill('SIGKILL');
  } catch {
    // Already gone (ESRCH), or the group leader exited and left no one: try the child itself.
    try {
      child.kill('SIGKILL');
    } catch {
      // gone
    }
  }
}

/** SIGKILL every running child's process group (used on exit and on signals). */
export function killAllChildren(): void {
  for (const c of live) killGroup(c);
  for (const r of liveHelperRuns) if (r.pid !== undefined) killGroupByPid(r.pid);
}

function onSignal(sig: NodeJS.Signals): void {
  // The program handles this signal itself (the cook and the daemon finish what is in flight):
  // its children finish too, bounded by their timeouts, and whatever is left dies at exit.
  if (process.listenerCount(sig) > 1) return;
  // Alone, Node would have died of this signal: kill the children, unhook, re-raise.
  killAllChildren();
  unhook();
  process.kill(process.pid, sig);
}

function hook(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', killAllChildren);
  for (const s of SIGNALS) process.on(s, onSignal);
}

function unhook(): void {
  if (!hooked) return;
  hooked = false;
  process.off('exit', killAllChildren);
  for (const s of SIGNALS) process.off(s, onSignal);
}

/**
 * Run `exe args` once. Resolves with how it ended (a non-zero exit, a crash and a timeout all
 * resolve); rejects only when it could not be started at all (ENOENT, EACCES...).
 */
export async function runChild(exe: string, args: readonly string[], opts: RunChildOptions): Promise<ChildRun> {
  const slots = opts.slots === undefined ? childSlots : opts.slots;
  const held = slots ? await slots.acquire(opts.threads ?? 1) : 0;
  try {
    return opts.viaHelper && process.platform !== 'win32' ? await spawnViaHelper(exe, args, opts) : await spawnOnce(exe, args, opts);
  } finally {
    if (slots) slots.release(held);
  }
}

function spawnOnce(exe: string, args: readonly string[], opts: RunChildOptions): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) {
      resolve({ code: null, signal: null, timedOut: false, aborted: true, stdoutOverflow: false, stdout: Buffer.alloc(0), output: '', ms: 0 });
      return;
    }
    const started = performance.now();
    // Hooked before the spawn, not after: the child runs from the moment spawn() forks it, and a
    // Ctrl-C that landed between the fork and a later hook() met Node's default action, so this
    // process died and left the child's group running (the orphaned `sleep 3000` of the SIGINT
    // test under load). Hooked first, the signal waits for this synchronous code to finish, by
    // which time the child is in `live`.
    hook();
    let child: ChildProcess;
    try {
      child = spawn(exe, args, {
        cwd: opts.cwd,
        env: opts.env,
        // Its own process group (POSIX), so one kill reaches everything it started. On Windows
        // `detached` would open a console instead: there it is killed alone.
        detached: process.platform !== 'win32',
        stdio: [opts.input ? 'pipe' : 'ignore', 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (e) {
      if (live.size === 0 && liveHelperRuns.size === 0) unhook();
      reject(e);
      return;
    }
    let output = '';
    const keepStdout = opts.maxStdoutBytes ?? 0;
    const stdoutParts: Buffer[] = [];
    let stdoutBytes = 0;
    let timedOut = false;
    let aborted = false;
    let stdoutOverflow = false;
    let settled = false;
    let killed = false;

    const tail = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-OUTPUT_TAIL);
    };
    const kill = () => {
      killed = true;
      killGroup(child);
    };
    child.stdout!.on('data', (chunk: Buffer) => {
      tail(chunk);
      if (keepStdout > 0 && !stdoutOverflow) {
        stdoutBytes += chunk.byteLength;
        if (stdoutBytes > keepStdout) {
          stdoutOverflow = true;
          stdoutParts.length = 0;
          kill();
        } else stdoutParts.push(chunk);
      }
    });
    child.stderr!.on('data', tail);
    if (opts.input && child.stdin) {
      // A child that exits without reading its input must not crash us with EPIPE.
      child.stdin.on('error', () => {});
      child.stdin.end(opts.input);
    }

    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, opts.timeoutMs);
    const onAbort = () => {
      aborted = true;
      kill();
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });

    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      live.delete(child);
      if (live.size === 0 && liveHelperRuns.size === 0) unhook();
      resolve({ code, signal, timedOut, aborted, stdoutOverflow, stdout: Buffer.concat(stdoutParts), output, ms: performance.now() - started });
    };
    child.on('error', (e) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      live.delete(child);
      if (live.size === 0 && liveHelperRuns.size === 0) unhook();
      reject(e);
    });
    // 'close' waits for the pipes too, so the output is complete. After a kill, something outside
    // the group may still hold them open: then the exit is enough.
    child.on('close', finish);
    child.on('exit', (code, signal) => {
      if (!killed) return;
      child.stdout?.destroy();
      child.stderr?.destroy();
      finish(code, signal);
    });
    if (child.pid !== undefined) live.add(child);
  });
}

/** spawnOnce through the spawn helper: the helper holds the child; this process keeps its pid for the exit and signal kills. */
async function spawnViaHelper(exe: string, args: readonly string[], opts: RunChildOptions): Promise<ChildRun> {
  if (opts.signal?.aborted) return { code: null, signal: null, timedOut: false, aborted: true, stdoutOverflow: false, stdout: Buffer.alloc(0), output: '', ms: 0 };
  const started = performance.now();
  hook();
  let run: HelperRun;
  try {
    run = runInHelper({ exe, args, cwd: opts.cwd ?? process.cwd(), env: { ...(opts.env ?? process.env) }, timeoutMs: opts.timeoutMs, input: opts.input, maxStdoutBytes: opts.maxStdoutBytes ?? 0 });
  } catch (e) {
    if (live.size === 0 && liveHelperRuns.size === 0) unhook();
    throw e;
  }
  liveHelperRuns.add(run);
  const onAbort = () => run.abort();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const r = await run.done;
    return { ...r, ms: performance.now() - started };
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    liveHelperRuns.delete(run);
    if (live.size === 0 && liveHelperRuns.size === 0) unhook();
  }
}

export interface RetryOptions extends RunChildOptions {
  /** Extra attempts after a failed one (default 1: two runs in all). */
  retries?: number;
  /** Whether a finished run failed (default: anything but exit code 0). */
  failed?: (run: ChildRun) => boolean;
}

/**
 * {@link runChild}, run again (up to `retries` more times, default once) while it fails: a
 * timeout, a crash or a non-zero exit. Resolves with the last run and how many were made; an
 * aborted run is never retried. Rejects only when the tool cannot be started.
 */
export async function runChildRetrying(exe: string, args: readonly string[], opts: RetryOptions): Promise<ChildRun & { attempts: number }> {
  const retries = opts.retries ?? 1;
  const failed = opts.failed ?? ((r: ChildRun) => r.code !== 0);
  let attempts = 0;
  for (;;) {
    const run = await runChild(exe, args, opts);
    attempts++;
    if (!failed(run) || run.aborted || attempts > retries) return { ...run, attempts };
  }
}

/**
 * One line for an error message: "basisu timed out after 60 s and was killed", "... was killed
 * by SIGSEGV", "... exited with 1: <its last output line>". `name` defaults to the file name.
 */
export function describeChildFailure(exe: string, run: ChildRun & { attempts?: number }, opts: { timeoutMs?: number; name?: string } = {}): string {
  const name = opts.name ?? path.basename(exe);
  const tries = run.attempts && run.attempts > 1 ? ` (${run.attempts} attempts)` : '';
  if (run.timedOut) {
    const limit = opts.timeoutMs !== undefined ? ` after ${formatMs(opts.timeoutMs)}` : '';
    return `${name} timed out${limit} and was killed${tries}`;
  }
  if (run.aborted) return `${name} was stopped`;
  if (run.stdoutOverflow) return `${name} wrote more output than allowed and was killed${tries}`;
  if (run.signal) return `${name} was killed by ${run.signal}${tries}`;
  const last = run.output.trim().split('\n').map((l) => l.trim()).filter(Boolean).slice(-1)[0];
  return `${name} exited with ${run.code}${tries}${last ? `: ${last}` : ''}`;
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
