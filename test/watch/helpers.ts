import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import type { Daemon } from '../../watch/Daemon.js';

export async function tempDir(prefix = 'lumina-watch-'): Promise<string> {
  return fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), prefix)));
}

/**
 * Poll `pred` until it returns a truthy value; throws with `what` after `timeoutMs`.
 * The default budget is half the test timeout: a daemon's first batch after a start or a project
 * switch also starts the cook workers, which load the cook's modules from source through tsx, and
 * that took 3.4-7.2 s with 24 busy loops beside the test (a 10 s budget timed out at load ~26).
 */
export async function waitFor<T>(pred: () => T | Promise<T>, what: string, timeoutMs = 30_000, everyMs = 10): Promise<NonNullable<T>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await pred();
    if (v) return v as NonNullable<T>;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * What most daemon tests hold: the daemon a test started and the temp folder it made. Call it in a
 * describe: after each test the daemon is stopped and the folder removed.
 */
export function daemonAndRoot(): { daemon: Daemon | undefined; root: string | undefined } {
  const t: { daemon: Daemon | undefined; root: string | undefined } = { daemon: undefined, root: undefined };
  afterEach(async () => {
    await t.daemon?.stop();
    t.daemon = undefined;
    if (t.root) await fsp.rm(t.root, { recursive: true, force: true });
  });
  return t;
}
