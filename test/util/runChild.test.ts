/**
 * The child runner on real processes: shells that fork helpers and hang, a Node process that is
 * sent SIGINT or exits while its children run, pipes filled past their buffers.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeChildFailure, runChild, runChildRetrying } from '../../src/util/runChild.js';
import { Semaphore } from '../../src/util/semaphore.js';
import { processGone, readPids, waitFor } from '../helpers/processes.js';
import { REPO, TSX_LOADER } from '../helpers/runCli.js';

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lumina-runchild-'));
});
afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A shell that records its pid and a background helper's pid in `pidfile`, then waits forever. */
function forkAndHang(pidfile: string): string[] {
  return ['-c', `echo $$ >> '${pidfile}'; sleep 3000 & echo $! >> '${pidfile}'; wait`];
}

describe.each([
  ['direct', false],
  ['through the spawn helper', true],
] as const)('runChild (%s)', (_, viaHelper) => {
  it('a run past its timeout is killed with its whole process group, and says so', async () => {
    const run = await runChild('/bin/sh', ['-c', 'sleep 3000'], { viaHelper, timeoutMs: 300 });
    expect({ timedOut: run.timedOut, code: run.code, signal: run.signal }).toEqual({ timedOut: true, code: null, signal: 'SIGKILL' });
    expect(describeChildFailure('/bin/sh', { ...run, attempts: 2 }, { timeoutMs: 300, name: 'sh' })).toBe('sh timed out after 300 ms and was killed (2 attempts)');
  });

  it('kills the helpers a child forked, not only the child (abort takes the same path as a timeout)', async () => {
    const pidfile = path.join(tmp, `group-${viaHelper}.pids`);
    const ac = new AbortController();
    const done = runChild('/bin/sh', forkAndHang(pidfile), { viaHelper, timeoutMs: 600_000, signal: ac.signal });
    await waitFor(() => readPids(pidfile).length === 2, 'the shell and its helper to start');
    ac.abort();
    const run = await done;
    expect(run.aborted).toBe(true);
    const pids = readPids(pidfile);
    await waitFor(() => pids.every(processGone), 'the killed group to be gone', 10_000);
    expect(pids.map(processGone)).toEqual([true, true]);
  });

  it('drains stdout and stderr: a child writing megabytes to both does not block', async () => {
    const run = await runChild(process.execPath, ['-e', "const b = 'x'.repeat(1 << 20); for (let i = 0; i < 8; i++) { process.stdout.write(b); process.stderr.write(b); }"], {
      viaHelper,
      timeoutMs: 600_000,
    });
    expect({ code: run.code, timedOut: run.timedOut, tail: run.output.length, kept: run.stdout.byteLength }).toEqual({ code: 0, timedOut: false, tail: 8192, kept: 0 });
  });

  it('keeps stdout when asked, and kills a child that writes more than allowed', async () => {
    const ok = await runChild(process.execPath, ['-e', "process.stdout.write('hello')"], { viaHelper, timeoutMs: 600_000, maxStdoutBytes: 1024 });
    expect(ok.stdout.toString()).toBe('hello');
    const big = await runChild(process.execPath, ['-e', "setInterval(() => process.stdout.write('y'.repeat(65536)), 1)"], { viaHelper, timeoutMs: 600_000, maxStdoutBytes: 100_000 });
    expect({ overflow: big.stdoutOverflow, signal: big.signal, kept: big.stdout.byteLength }).toEqual({ overflow: true, signal: 'SIGKILL', kept: 0 });
  });

  it('feeds stdin', async () => {
    const run = await runChild('/bin/cat', [], { viaHelper, timeoutMs: 600_000, input: new TextEncoder().encode('piped in'), maxStdoutBytes: 100 });
    expect(run.stdout.toString()).toBe('piped in');
  });

  it('rejects when the program cannot be started', async () => {
    await expect(runChild(path.join(tmp, 'no-such-tool'), [], { viaHelper, timeoutMs: 1000 })).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('runs share slots: with one slot two runs never overlap', async () => {
    const log = path.join(tmp, `slots-${viaHelper}.log`);
    const slots = new Semaphore(1);
    const script = `echo start >> '${log}'; sleep 0.2; echo end >> '${log}'`;
    await Promise.all([0, 1, 2].map(() => runChild('/bin/sh', ['-c', script], { viaHelper, timeoutMs: 600_000, slots })));
    expect(fs.readFileSync(log, 'utf8').trim().split('\n')).toEqual(['start', 'end', 'start', 'end', 'start', 'end']);
  });
});

describe('runChildRetrying', () => {
  it('retries a failed run once and returns the second', async () => {
    const marker = path.join(tmp, 'retry-marker');
    const script = `if [ -e '${marker}' ]; then echo second; exit 0; fi; touch '${marker}'; echo first failure; exit 3`;
    const run = await runChildRetrying('/bin/sh', ['-c', script], { timeoutMs: 600_000 });
    expect({ code: run.code, attempts: run.attempts, out: run.output.trim() }).toEqual({ code: 0, attempts: 2, out: 'second' });
  });

  it('gives up after the retry, with the last failure', async () => {
    const run = await runChildRetrying('/bin/sh', ['-c', 'echo nope; exit 4'], { timeoutMs: 600_000 });
    expect({ code: run.code, attempts: run.attempts }).toEqual({ code: 4, attempts: 2 });
    expect(describeChildFailure('/bin/sh', run)).toBe('sh exited with 4 (2 attempts): nope');
  });
});

/**
 * A Node process that starts a forking, hanging child through runChild, then does `mode`.
 * 'sigint-at-spawn' sends itself SIGINT inside child_process.spawn, once the child has started
 * its helper: the moment a loaded machine can deschedule the holder between the fork and the
 * rest of runChild's set-up, when a Ctrl-C once left the group running.
 */
function startHolder(pidfile: string, mode: 'wait' | 'exit' | 'own-handler' | 'sigint-at-spawn', viaHelper = false) {
  const script = path.join(tmp, `holder-${mode}-${viaHelper}.mjs`);
  fs.writeFileSync(
    script,
    `import cp from 'node:child_process';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
const [pidfile, mode] = process.argv.slice(2);
const started = () => (fs.existsSync(pidfile) ? fs.readFileSync(pidfile, 'utf8').trim().split('\\n').length : 0) === 2;
if (mode === 'sigint-at-spawn') {
  const spawn = cp.spawn;
  cp.spawn = (...args) => {
    const child = spawn(...args);
    while (!started());
    process.kill(process.pid, 'SIGINT');
    return child;
  };
  syncBuiltinESMExports();
}
const { runChild } = await import(${JSON.stringify(pathToFileURL(path.join(REPO, 'src/util/runChild.ts')).href)});
if (mode === 'own-handler') process.on('SIGINT', () => { console.log('handled'); setTimeout(() => process.exit(0), 100); });
void runChild('/bin/sh', ${JSON.stringify(forkAndHang('PIDFILE'))}.map((a) => a.replaceAll('PIDFILE', pidfile)), { timeoutMs: 600000, viaHelper: ${viaHelper} });
if (mode === 'exit') {
  const t = setInterval(() => {
    if (started()) { clearInterval(t); process.exit(3); }
  }, 10);
}
`,
  );
  const child = spawn(process.execPath, ['--import', TSX_LOADER, script, pidfile, mode], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout })),
  );
  holders.push(child);
  pidfiles.push(pidfile);
  return { child, exited };
}

const holders: ReturnType<typeof spawn>[] = [];
const pidfiles: string[] = [];
afterAll(() => {
  // A failed test must not leave its holder, nor the children it started, running.
  for (const h of holders) if (h.exitCode === null && h.signalCode === null) h.kill('SIGKILL');
  for (const f of pidfiles) {
    for (const pid of readPids(f)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone, as it should be
      }
    }
  }
});

describe('children die with the process that started them', () => {
  it('Ctrl-C (SIGINT): the children are killed and the process still dies of the signal', { timeout: 180_000 }, async () => {
    const pidfile = path.join(tmp, 'sigint.pids');
    const { child, exited } = startHolder(pidfile, 'wait');
    await waitFor(() => readPids(pidfile).length === 2, 'the holder to start its child', 120_000);
    child.kill('SIGINT');
    const end = await exited;
    expect({ code: end.code, signal: end.signal }).toEqual({ code: null, signal: 'SIGINT' });
    const pids = readPids(pidfile);
    await waitFor(() => pids.every(processGone), 'the children to be gone', 10_000);
  });

  it('Ctrl-C that lands while runChild is still setting up the child just spawned: the children are killed too', { timeout: 180_000 }, async () => {
    const pidfile = path.join(tmp, 'sigint-at-spawn.pids');
    const { exited } = startHolder(pidfile, 'sigint-at-spawn');
    const end = await exited;
    expect({ code: end.code, signal: end.signal }).toEqual({ code: null, signal: 'SIGINT' });
    const pids = readPids(pidfile);
    expect(pids).toHaveLength(2);
    await waitFor(() => pids.every(processGone), 'the children to be gone', 10_000);
  });

  it('SIGINT with a handler of the program: it stops on its own terms, the children die when it exits', { timeout: 180_000 }, async () => {
    const pidfile = path.join(tmp, 'handler.pids');
    const { child, exited } = startHolder(pidfile, 'own-handler');
    await waitFor(() => readPids(pidfile).length === 2, 'the holder to start its child', 120_000);
    child.kill('SIGINT');
    const end = await exited;
    expect({ code: end.code, out: end.stdout.trim() }).toEqual({ code: 0, out: 'handled' });
    const pids = readPids(pidfile);
    await waitFor(() => pids.every(processGone), 'the children to be gone', 10_000);
  });

  it('process.exit while a child runs: the child is killed on exit', { timeout: 180_000 }, async () => {
    const pidfile = path.join(tmp, 'exit.pids');
    const { exited } = startHolder(pidfile, 'exit');
    const end = await exited;
    expect(end.code).toBe(3);
    const pids = readPids(pidfile);
    expect(pids).toHaveLength(2);
    await waitFor(() => pids.every(processGone), 'the children to be gone', 10_000);
  });

  // Through the spawn helper the same four ways end the same, and one more: this process cannot
  // catch a kill -9, but the helper leaves when its channel closes and takes the children along.
  it.each(['wait', 'own-handler', 'exit', 'kill -9'] as const)('through the spawn helper: %s', { timeout: 180_000 }, async (how) => {
    const pidfile = path.join(tmp, `helper-${how.replace(/\W/g, '')}.pids`);
    const { child, exited } = startHolder(pidfile, how === 'kill -9' ? 'wait' : how, true);
    await waitFor(() => readPids(pidfile).length === 2, 'the holder to start its child', 120_000);
    if (how === 'wait' || how === 'own-handler') child.kill('SIGINT');
    if (how === 'kill -9') child.kill('SIGKILL');
    const end = await exited;
    const want = { wait: { code: null, signal: 'SIGINT' }, 'own-handler': { code: 0, signal: null }, exit: { code: 3, signal: null }, 'kill -9': { code: null, signal: 'SIGKILL' } }[how];
    expect({ code: end.code, signal: end.signal }).toEqual(want);
    const pids = readPids(pidfile);
    expect(pids).toHaveLength(2);
    await waitFor(() => pids.every(processGone), 'the children to be gone', 10_000);
  });
});
