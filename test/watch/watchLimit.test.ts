/**
 * WATCH_FAILED on the real inotify watch limit: `watch` in a child process inside its own user
 * namespace, whose inotify watch limit is set to 1 there (per-namespace limits: no machine-wide
 * sysctl changes). @parcel/watcher's subscribe rejects with ENOSPC from inotify_add_watch; the
 * command must exit 1 with the folder, the reason and the sysctl to raise, and leave nothing held.
 * (watchFailed.test.ts covers the same path in process with a mount that is a file.)
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LOCK_FILE_NAME } from '../../cook/projectLock.js';
import { REPO, TSX_LOADER } from '../helpers/runCli.js';
import { tempDir } from './helpers.js';
import { makeProject } from './project.js';

/** Whether this machine lets a user namespace lower its own inotify watch limit (why not, else). */
function namespaceLimits(): string | undefined {
  const r = spawnSync('unshare', ['--user', '--map-root-user', 'sh', '-c', 'echo 1 > /proc/sys/user/max_inotify_watches && cat /proc/sys/user/max_inotify_watches'], { encoding: 'utf8' });
  if (r.error) return `unshare cannot run: ${r.error.message}`;
  if (r.status !== 0 || r.stdout.trim() !== '1') return `a user namespace cannot set its inotify watch limit here: ${r.stderr.trim() || r.stdout.trim()}`;
  return undefined;
}
const noNamespace = namespaceLimits();

describe('watch daemon at the inotify watch limit', () => {
  let root: string | undefined;
  afterEach(async () => {
    if (root) await fsp.rm(root, { recursive: true, force: true });
    root = undefined;
  });

  it.skipIf(noNamespace !== undefined)(`\`watch\` exits 1 naming the inotify watch limit and its sysctl${noNamespace ? ` (skipped: ${noNamespace})` : ''}`, async () => {
    root = await tempDir();
    const p = await makeProject(path.join(root, 'P'));
    // One watch: Content's own; its first subfolder is past the limit.
    const cli = `exec '${process.execPath}' --import '${TSX_LOADER}' '${path.join(REPO, 'cli/main.ts')}' watch --project '${p.dir}' --port 0`;
    const child = spawn('unshare', ['--user', '--map-root-user', 'sh', '-c', `echo 1 > /proc/sys/user/max_inotify_watches && ${cli}`], {
      env: { ...process.env, NO_COLOR: '1', CI: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const code = await new Promise<number | null>((r) => child.on('close', r));
    clearTimeout(timer);
    expect(code, out).toBe(1);
    expect(out).toContain('WATCH_FAILED');
    expect(out).toContain('No space left on device');
    expect(out).toContain('fs.inotify.max_user_watches');
    expect(out).not.toMatch(/\n\s+at /);
    expect(fs.existsSync(path.join(p.dir, 'Intermediates', 'daemon.json'))).toBe(false);
    expect(fs.existsSync(path.join(p.dir, 'Intermediates', LOCK_FILE_NAME))).toBe(false);
  });
});
