/**
 * A subscribe that does not answer. The real stall used here: every thread of libuv's pool (which
 * runs @parcel/watcher's subscribe, its walk of the folder) is blocked in open() of a FIFO with no
 * writer, so the subscribe cannot even start until the test opens the writers; then it settles,
 * late. No timing decides the outcome: the subscribe is queued behind the FIFOs and cannot run
 * before they are released, whatever the load. (The inotify instance limit, where @parcel/watcher
 * would block the event loop itself, is watchLimit.test.ts.)
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.js';
import { ChangeBatcher } from '../../watch/ChangeBatcher.js';
import { Daemon } from '../../watch/Daemon.js';
import { watchMounts, type MountWatcher } from '../../watch/watcher.js';
import { tempDir, waitFor } from './helpers.js';
import { makeProject } from './project.js';

/**
 * Block every thread of libuv's pool in open() of a FIFO under `dir`; the returned function opens
 * their writers (non-blocking: it waits for each reader to be in open()) and so frees the pool.
 */
function blockThreadPool(dir: string): () => Promise<void> {
  const threads = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  const fifos = Array.from({ length: threads }, (_, i) => path.join(dir, `pool-${i}.fifo`));
  for (const f of fifos) execFileSync('mkfifo', [f]);
  const readers = fifos.map((f) => fsp.open(f, 'r'));
  return async () => {
    for (const f of fifos) {
      await waitFor(() => {
        try {
          fs.closeSync(fs.openSync(f, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
          return true;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENXIO') return false; // its reader is not in open() yet
          throw e;
        }
      }, `the reader of ${f}`);
    }
    for (const r of await Promise.all(readers)) await r.close();
  };
}

/** How many inotify watches this process holds on `dir` (every inotify instance it has, from /proc). */
function inotifyWatchesOn(dir: string): number {
  const ino = ` ino:${fs.statSync(dir).ino.toString(16)} `;
  let n = 0;
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    let link: string;
    try {
      link = fs.readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue; // closed meanwhile (the readdir's own fd)
    }
    if (link !== 'anon_inode:inotify') continue;
    n += fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8').split('\n').filter((l) => l.startsWith('inotify ') && l.includes(ino)).length;
  }
  return n;
}

describe.skipIf(process.platform !== 'linux')('a subscribe that does not answer', () => {
  let daemon: Daemon | undefined;
  let watchers: MountWatcher[] = [];
  let unblock: (() => Promise<void>) | undefined;
  let root: string | undefined;
  afterEach(async () => {
    await unblock?.();
    unblock = undefined;
    await daemon?.stop();
    daemon = undefined;
    for (const w of watchers) await w.close();
    watchers = [];
    if (root) await fsp.rm(root, { recursive: true, force: true });
    root = undefined;
  });

  it('fails `ready` with WATCH_FAILED, and a subscription that settles after close is unsubscribed', async () => {
    root = await tempDir();
    const other = path.join(root, 'Other');
    const content = path.join(root, 'Content');
    await fsp.mkdir(other);
    await fsp.mkdir(content);
    const batcher = new ChangeBatcher({ debounceMs: 10, handler: async () => {} });
    // A subscription already held: @parcel/watcher's inotify thread runs, so the next subscribe
    // goes straight to the thread pool (no probe of the instance limit first).
    const first = watchMounts({ roots: [other], batcher });
    watchers.push(first);
    await first.ready;
    expect(inotifyWatchesOn(other)).toBe(1);

    const lines: string[] = [];
    const log = createLogger({ json: true, level: 'info', destination: new Writable({ write: (c, _e, done) => (lines.push(String(c)), done()) }) });
    unblock = blockThreadPool(root);
    const stalled = watchMounts({ roots: [content], batcher, log, subscribeTimeoutMs: 200 });
    await expect(stalled.ready).rejects.toMatchObject({
      code: 'WATCH_FAILED',
      file: content,
      message: expect.stringContaining('the watcher did not answer within 200 ms'),
      hint: expect.stringContaining('fs.inotify.max_user_instances'),
    });
    await stalled.close(); // does not wait for a subscribe that may never settle
    const release = unblock;
    unblock = undefined;
    await release();
    await waitFor(() => lines.some((l) => l.includes('unsubscribed it') && l.includes(content)), 'the late subscription unsubscribed');
    expect(inotifyWatchesOn(content)).toBe(0);
    await batcher.close(0);
  });

  it('after start shows the folder on the error board until the late subscribe settles, then re-walks it', async () => {
    root = await tempDir();
    const p = await makeProject(path.join(root, 'P'));
    // The mount is missing at start, so no subscribe runs under the test's short bound but the stalled one.
    const kept = path.join(root, 'Content.kept');
    await fsp.rename(p.content, kept);
    daemon = await Daemon.start({ projectDir: p.dir, debounceMs: 20, consolidateAfterMs: 0, subscribeTimeoutMs: 300 });
    const d = daemon;
    await d.whenIdle();
    unblock = blockThreadPool(root);
    // The mount appears; its subscribe (after start) cannot run.
    fs.renameSync(kept, p.content);
    const shown = await waitFor(() => d.status().errors.find((e) => e.code === 'WATCH_FAILED'), 'WATCH_FAILED on the board');
    expect(shown.file).toBe(p.content);
    expect(shown.message).toContain('the watcher did not answer within 300 ms');
    expect(shown.hint).toContain('fs.inotify.max_user_instances');
    // Saved while the folder is not watched: found by the re-walk once it is.
    fs.writeFileSync(path.join(p.content, 'Early.rml'), '<rml>early</rml>');
    const release = unblock;
    unblock = undefined;
    await release();
    await waitFor(() => !d.status().errors.some((e) => e.code === 'WATCH_FAILED'), 'WATCH_FAILED resolved');
    await waitFor(() => d.registry.byFile(path.join(p.content, 'Early.rml')), 'the file saved while unwatched found');
    expect(inotifyWatchesOn(p.content)).toBe(1);
    await fsp.writeFile(path.join(p.content, 'Late.rml'), '<rml>late</rml>');
    await waitFor(() => d.registry.byFile(path.join(p.content, 'Late.rml')), 'a save in the folder seen');
  });
});
