/**
 * One chokidar watcher over every mounted content folder, feeding a ChangeBatcher.
 *
 * Latency choice: `awaitWriteFinish` is off. It holds every event until the file size has been
 * stable for its stabilityThreshold (2 s by default, still tens of ms when tuned), which alone
 * would eat the 150 ms write-to-pak budget. Editors and our own tools save with temp + rename, so
 * the final name appears complete in one step; a tool that writes in place is covered by the
 * debounce (bursts of 'change' merge into one update) and, if a batch still reads a torn file, the
 * registry reports it as a problem and the write's last 'change' event re-runs it. `atomic` stays
 * on (chokidar's default with fs.watch): an unlink followed by an add within 100 ms is reported
 * as one 'change', which is how temp + rename saves look on some platforms.
 *
 * chokidar throttles 'change' per path to one per 50 ms and DROPS the rest (leading edge only,
 * no trailing event): a second save within 50 ms of the first would never be seen, and the paks
 * would keep the first save's content. So every add/change schedules one re-stat of the file a
 * little after that window; if the file is not what the event saw, a 'change' is pushed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { Stats } from 'node:fs';
import type { Logger } from '../src/log/logger.js';
import { silentLogger } from '../src/log/logger.js';
import { TEMP_MARKER } from '../src/util/atomicWrite.js';
import { isIgnoredFileName, type ChangeBatcher, type RawEventName } from './ChangeBatcher.js';

/** A little past chokidar's 50 ms per-path 'change' throttle. */
const RECHECK_MS = 70;

export interface MountWatcherOptions {
  /** Folders to watch (mount roots); missing ones are skipped by chokidar until they appear. */
  roots: readonly string[];
  batcher: ChangeBatcher;
  log?: Logger;
}

export interface MountWatcher {
  /** Resolves when the initial walk is done and events are live. */
  ready: Promise<void>;
  close(): Promise<void>;
}

/** Start watching. Existing files are not reported (the daemon's initial scan covers them). */
export function watchMounts(opts: MountWatcherOptions): MountWatcher {
  const log = opts.log ?? silentLogger;
  const roots = new Set(opts.roots.map((r) => path.resolve(r)));
  const ignored = (p: string, stats?: Stats): boolean => {
    if (roots.has(path.resolve(p))) return false;
    const name = path.basename(p);
    // Dot folders (.git, .vscode) and temp files are never walked; other names are judged once
    // chokidar knows they are files, since folders have no extension.
    if (name.startsWith('.') || name.includes(TEMP_MARKER)) return true;
    return stats?.isFile() === true && isIgnoredFileName(name);
  };
  const fsw: FSWatcher = watch([...roots], { ignoreInitial: true, ignored, persistent: true, awaitWriteFinish: false, alwaysStat: true });
  let closed = false;
  // A pending re-stat holds the batcher: idle() must not resolve while it may still push a change.
  const rechecks = new Map<string, { timer: NodeJS.Timeout; release: () => void }>();
  const identity = (st: Pick<Stats, 'mtimeMs' | 'size' | 'ino'>) => `${st.mtimeMs}:${st.size}:${st.ino}`;
  const recheckLater = (file: string, seen: string) => {
    const prev = rechecks.get(file);
    if (prev) clearTimeout(prev.timer);
    const release = prev?.release ?? opts.batcher.hold();
    const timer = setTimeout(() => {
      if (closed) return release();
      fs.stat(file, (err, st) => {
        if (rechecks.get(file)?.timer !== timer) return; // a newer event re-armed it
        rechecks.delete(file);
        if (!closed && !err) {
          // err: gone; the watcher reports the unlink itself.
          const now = identity(st);
          if (now !== seen) {
            opts.batcher.push('change', file);
            recheckLater(file, now);
          }
        }
        release();
      });
    }, RECHECK_MS);
    timer.unref();
    rechecks.set(file, { timer, release });
  };
  const onWrite = (event: 'add' | 'change') => (file: string, stats?: Stats) => {
    opts.batcher.push(event, file);
    recheckLater(file, stats ? identity(stats) : '');
  };
  fsw.on('add', onWrite('add'));
  fsw.on('change', onWrite('change'));
  fsw.on('unlink', (file: string) => opts.batcher.push('unlink', file));
  fsw.on('unlinkDir', (dir: string) => opts.batcher.push('unlinkDir', dir));
  fsw.on('error', (e) => log.warn({ err: e }, 'watcher error'));
  const ready = new Promise<void>((resolve) => fsw.once('ready', () => resolve()));
  let closing: Promise<void> | undefined;
  return {
    ready,
    close: () =>
      (closing ??= (async () => {
        closed = true;
        for (const r of rechecks.values()) {
          clearTimeout(r.timer);
          r.release();
        }
        rechecks.clear();
        await fsw.close();
      })()),
  };
}
