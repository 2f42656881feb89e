/**
 * WATCH_FAILED on the real inotify limits: `watch` in a child process inside its own user
 * namespace, whose inotify limits are set there (per-namespace limits: no machine-wide sysctl
 * changes). At a watch limit of 1, @parcel/watcher's subscribe rejects with ENOSPC from
 * inotify_add_watch. At an instance limit of 0 it would block the child's event loop for good (it
 * waits for an inotify thread that failed to start), so the daemon asks first (inotifyProbe.ts).
 * Either way the command must exit 1 with the folder, the reason and the sysctl to raise, and leave
 * nothing held. (watchFailed.test.ts covers the same path in process with a mount that is a file.)
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LOCK_FILE_NAME } from '../../cook/projectLock.js';
import { REPO, TSX_LOADER } from '../helpers/runCli.js';
import { tempDir } from './helpers.js';
import { makeProject, type TestProject } from './project.js';

/** Whether this machine lets a user namespace lower its own inotify limit `limit` to `value` (why not, else). */
function namespaceLimits(limit: string, value: number): string | undefined {
  const r = spawnSync('unshare', ['--user', '--map-root-user', 'sh', '-c', `echo ${value} > /proc/sys/user/${limit} && cat /proc/sys/user/${limit}`], { encoding: 'utf8' });
  if (r.error) return `unshare cannot run: ${r.error.message}`;
  if (r.status !== 0 || r.stdout.trim() !== String(value)) return `a user namespace cannot set its ${limit} here: ${r.stderr.trim() || r.stdout.trim()}`;
  return undefined;
}
const noWatchLimit = namespaceLimits('max_inotify_watches', 1);
const noInstanceLimit = namespaceLimits('max_inotify_instances', 0);

/** `watch` on `p` in a user namespace whose inotify `limit` is `value`; its exit code and output. */
async function watchInNamespace(p: TestProject, limit: string, value: number): Promise<{ code: number | null; out: string }> {
  const cli = `exec '${process.execPath}' --import '${TSX_LOADER}' '${path.join(REPO, 'cli/main.ts')}' watch --project '${p.dir}' --port 0`;
  const child = spawn('unshare', ['--user', '--map-root-user', 'sh', '-c', `echo ${value} > /proc/sys/user/${limit} && ${cli}`], {
    env: { ...process.env, NO_COLOR: '1', CI: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((r) => child.on('close', r));
  clearTimeout(timer);
  return { code, out };
}

/** A failed start: exit 1, WATCH_FAILED with `says` and no stack trace, nothing held (no daemon.json, no project lock). */
function expectFailedStart(p: TestProject, { code, out }: { code: number | null; out: string }, says: readonly string[]): void {
  expect(code, out).toBe(1);
  expect(out).toContain('WATCH_FAILED');
  for (const text of says) expect(out).toContain(text);
  expect(out).not.toMatch(/\n\s+at /);
  expect(fs.existsSync(path.join(p.dir, 'Intermediates', 'daemon.json'))).toBe(false);
  expect(fs.existsSync(path.join(p.dir, 'Intermediates', LOCK_FILE_NAME))).toBe(false);
}

describe('watch daemon at the inotify watch limit', () => {
  let root: string | undefined;
  afterEach(async () => {
    if (root) await fsp.rm(root, { recursive: true, force: true });
    root = undefined;
  });

  it.skipIf(noWatchLimit !== undefined)(`\`watch\` exits 1 naming the inotify watch limit and its sysctl${noWatchLimit ? ` (skipped: ${noWatchLimit})` : ''}`, async () => {
    root = await tempDir();
    const p = await makeProject(path.join(root, 'P'));
    // One watch: Content's own; its first subfolder is past the limit.
    expectFailedStart(p, await watchInNamespace(p, 'max_inotify_watches', 1), ['No space left on device', 'fs.inotify.max_user_watches']);
  });

  // On the code before inotifyProbe.ts the child hung at "starting" until the 60 s kill (code null).
  it.skipIf(noInstanceLimit !== undefined)(`\`watch\` exits 1 naming the inotify instance limit and its sysctl${noInstanceLimit ? ` (skipped: ${noInstanceLimit})` : ''}`, async () => {
    root = await tempDir();
    const p = await makeProject(path.join(root, 'P'));
    expectFailedStart(p, await watchInNamespace(p, 'max_inotify_instances', 0), [p.content, 'no inotify instance', 'fs.inotify.max_user_instances']);
  });
});
