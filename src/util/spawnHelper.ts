/**
 * Child processes started by a small helper process instead of this one (runChild's `viaHelper`).
 *
 * Why: Node starts a child with fork() + exec() (libuv on Linux uses neither vfork nor
 * posix_spawn), and fork() copies the page tables of the whole process and write-protects every
 * page it maps, so each spawn from a large cook (hundreds of MiB) costs the main thread tens of
 * milliseconds (~22 ms each on a quiet machine, ~65 ms at load 8: 20 shader-tool runs took 0.44-
 * 1.3 s of a 20k cook's main thread) and every thread then takes a copy-on-write fault on the
 * next write to each page. The helper is a bare Node process (~40 MiB): it is forked once, and
 * its own forks are cheap.
 *
 * What stays the same as a direct run (src/util/runChild.ts): each child leads its own process
 * group and the whole group is SIGKILLed on timeout, on abort and when stdout passes its limit
 * (all done in the helper, which holds the child); stdout and stderr are drained with a bounded
 * tail; 'close' ends a run, or 'exit' after a kill. The helper reports each child's pid as soon as
 * it runs, so this process kills the groups itself on exit and on signals, exactly as it kills its
 * own children. A child whose pid has not come back yet, and every child when this process dies
 * without running its exit hooks (kill -9), is killed by the helper: it leaves with its parent
 * (the IPC channel closes) and takes its children's groups with it.
 *
 * The helper runs in its own process group (a terminal's Ctrl-C reaches this process, which
 * decides), holds the event loop only while runs are in flight, and is let go after a short idle.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { ChildRun } from './runChild.js';

/** What a run asks of the helper (RunChildOptions, resolved). */
export interface HelperRunRequest {
  exe: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  input?: Uint8Array;
  maxStdoutBytes: number;
}

/** How a run ended, as the helper saw it (runChild's ChildRun without the wall time). */
export type HelperRunResult = Omit<ChildRun, 'ms'>;

/** A run in flight: `pid` once the helper has started it, `kill` asks the helper to kill its group (abort). */
export interface HelperRun {
  pid: number | undefined;
  done: Promise<HelperRunResult>;
  abort(): void;
}

/** The helper, as plain CommonJS for `node -e` (it loads no module of this project, so no loader is needed). */
const HELPER_SOURCE = String.raw`
'use strict';
const { spawn } = require('node:child_process');
const TAIL = 8192;
const runs = new Map();
// With a callback: a send that fails later (EPIPE, the parent just exited) is emitted as 'error' on
// process without one, which nothing handles, so the helper died before 'disconnect' killed its runs.
const send = (m) => { try { process.send(m, () => {}); } catch {} };
function killGroup(c) {
  if (c.pid === undefined || c.exitCode !== null || c.signalCode !== null) return;
  try { process.kill(-c.pid, 'SIGKILL'); } catch { try { c.kill('SIGKILL'); } catch {} }
}
process.on('disconnect', () => { for (const r of runs.values()) killGroup(r.child); process.exit(0); });
process.on('message', (m) => {
  if (m.t === 'abort') { const r = runs.get(m.id); if (r) r.kill(true); return; }
  if (m.t !== 'run') return;
  let child;
  try {
    child = spawn(m.exe, m.args, { cwd: m.cwd, env: m.env, detached: true, stdio: [m.input ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
  } catch (e) {
    send({ t: 'error', id: m.id, message: e.message, code: e.code, errno: e.errno, syscall: e.syscall, path: e.path });
    return;
  }
  let output = '';
  const parts = [];
  let kept = 0, timedOut = false, aborted = false, overflow = false, settled = false, killed = false;
  const r = { child, kill(byAbort) { if (byAbort) aborted = true; killed = true; killGroup(child); } };
  const tail = (chunk) => { output = (output + chunk.toString('utf8')).slice(-TAIL); };
  child.stdout.on('data', (chunk) => {
    tail(chunk);
    if (m.maxStdoutBytes > 0 && !overflow) {
      kept += chunk.byteLength;
      if (kept > m.maxStdoutBytes) { overflow = true; parts.length = 0; r.kill(false); } else parts.push(chunk);
    }
  });
  child.stderr.on('data', tail);
  if (m.input && child.stdin) { child.stdin.on('error', () => {}); child.stdin.end(Buffer.from(m.input.buffer, m.input.byteOffset, m.input.byteLength)); }
  const timer = setTimeout(() => { timedOut = true; r.kill(false); }, m.timeoutMs);
  const finish = (code, signal) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    runs.delete(m.id);
    send({ t: 'done', id: m.id, code, signal, timedOut, aborted, stdoutOverflow: overflow, stdout: Buffer.concat(parts), output });
  };
  child.on('error', (e) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    runs.delete(m.id);
    send({ t: 'error', id: m.id, message: e.message, code: e.code, errno: e.errno, syscall: e.syscall, path: e.path });
  });
  child.on('close', finish);
  child.on('exit', (code, signal) => {
    if (!killed) return;
    if (child.stdout) child.stdout.destroy();
    if (child.stderr) child.stderr.destroy();
    finish(code, signal);
  });
  if (child.pid !== undefined) { runs.set(m.id, r); send({ t: 'pid', id: m.id, pid: child.pid }); }
});
`;

/** How long an idle helper is kept for the next run before it is let go. */
const IDLE_MS = 2000;

interface Pending {
  run: HelperRun;
  resolve: (r: HelperRunResult) => void;
  reject: (e: Error) => void;
}

let helper: ChildProcess | undefined;
let nextId = 1;
const pending = new Map<number, Pending>();
let idleTimer: NodeJS.Timeout | undefined;

function channel(c: ChildProcess): { ref(): void; unref(): void } | undefined {
  return (c as unknown as { channel?: { ref(): void; unref(): void } }).channel ?? undefined;
}

function startHelper(): ChildProcess {
  // The helper needs no loader (tsx) and no inherited flags: plain node on its own source.
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const c = spawn(process.execPath, ['-e', HELPER_SOURCE], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'], serialization: 'advanced', detached: true, env });
  c.unref();
  c.on('message', (m: { t: string; id: number; pid?: number } & Partial<HelperRunResult> & { message?: string; code?: unknown; errno?: number; syscall?: string; path?: string }) => {
    const p = pending.get(m.id);
    if (!p) return;
    if (m.t === 'pid') {
      p.run.pid = m.pid;
      return;
    }
    pending.delete(m.id);
    idleCheck();
    if (m.t === 'error') {
      p.reject(Object.assign(new Error(m.message), { code: m.code, errno: m.errno, syscall: m.syscall, path: m.path }));
      return;
    }
    const out = m.stdout as Uint8Array | undefined;
    p.resolve({
      code: m.code as number | null,
      signal: m.signal ?? null,
      timedOut: !!m.timedOut,
      aborted: !!m.aborted,
      stdoutOverflow: !!m.stdoutOverflow,
      stdout: out ? Buffer.from(out.buffer, out.byteOffset, out.byteLength) : Buffer.alloc(0),
      output: m.output ?? '',
    });
  });
  const gone = () => {
    if (helper !== c) return;
    helper = undefined;
    // The helper died (killed from outside): its children went with it, or are killed here by
    // group; each run in flight ends as killed, which a caller treats as a crashed tool.
    for (const [id, p] of pending) {
      pending.delete(id);
      if (p.run.pid !== undefined) killGroupByPid(p.run.pid);
      p.resolve({ code: null, signal: 'SIGKILL', timedOut: false, aborted: false, stdoutOverflow: false, stdout: Buffer.alloc(0), output: 'the spawn helper process ended' });
    }
  };
  c.on('exit', gone);
  c.on('error', gone);
  return c;
}

/** SIGKILL the process group `pid` leads (a helper run's child), if it is still there. */
export function killGroupByPid(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

/** While runs are in flight the helper's channel holds the event loop (nothing else waits for them here); idle, it is let go after IDLE_MS. */
function idleCheck(): void {
  const c = helper;
  if (!c) return;
  const ch = channel(c);
  if (pending.size > 0) {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = undefined;
    ch?.ref();
    return;
  }
  ch?.unref();
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = setTimeout(() => {
    idleTimer = undefined;
    if (pending.size === 0 && helper === c) {
      helper = undefined;
      if (c.connected) c.disconnect();
    }
  }, IDLE_MS);
  idleTimer.unref();
}

/** Start `req` in the helper (started on first use). Rejects `done` when the program cannot be started (ENOENT...), as spawn would. */
export function runInHelper(req: HelperRunRequest): HelperRun {
  if (!helper || !helper.connected) helper = startHelper();
  const c = helper;
  const id = nextId++;
  let resolve!: (r: HelperRunResult) => void;
  let reject!: (e: Error) => void;
  const done = new Promise<HelperRunResult>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  const run: HelperRun = {
    pid: undefined,
    done,
    abort: () => {
      if (c.connected) c.send({ t: 'abort', id });
    },
  };
  pending.set(id, { run, resolve, reject });
  idleCheck();
  c.send({ t: 'run', id, exe: req.exe, args: [...req.args], cwd: req.cwd, env: req.env, timeoutMs: req.timeoutMs, input: req.input, maxStdoutBytes: req.maxStdoutBytes });
  return run;
}
