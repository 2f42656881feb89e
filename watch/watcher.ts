/**
 * One @parcel/watcher subscription per mounted content folder, feeding a ChangeBatcher.
 *
 * Why @parcel/watcher and not chokidar: on a 50k-file project chokidar kept ~320 MiB of per-file
 * state (+137 MiB of JS heap) and took seconds to be ready, because it stats and remembers every
 * file in JavaScript; @parcel/watcher keeps its tree in native code (+20 MiB) and is ready in a
 * fraction of that time (measured side by side in one process; see the README's performance table).
 *
 * What it reports and how that maps to the batcher:
 * - Events arrive in batches, coalesced per path over a short native window (~50 ms of quiet):
 *   an editor's temp + rename save arrives as one `create` or `update` of the final name, and a
 *   file created and deleted inside the window is never reported. So the batcher's own debounce
 *   can be short: the watcher already waits for a burst to end.
 * - `delete` does not say whether a file or a folder went. A name with a watched extension is a
 *   file; any other name may have been a folder and is handed over as a folder to re-check
 *   (`unlinkDir`): the registry drops whatever it had under that path.
 * - A folder that appears whole (moved in from outside the mount) is reported as one `create` of
 *   the folder, without its files, and the native watcher does not watch the folders nested in it.
 *   So a created folder is re-walked by the registry (`addDir`) and gets its own subscription,
 *   which watches everything under it.
 * - A root that does not exist yet is polled for and subscribed when it appears (and re-walked).
 * - An error from the native side (an inotify queue overflow: events were lost) re-walks every
 *   mount: the registry finds what changed by stat, so nothing lost stays lost.
 */
import fs from 'node:fs';
import path from 'node:path';
import watcher, { type AsyncSubscription, type Event } from '@parcel/watcher';
import type { Logger } from '../src/log/logger.js';
import { silentLogger } from '../src/log/logger.js';
import { TEMP_MARKER } from '../src/util/atomicWrite.js';
import { isIgnoredFileName, type ChangeBatcher } from './ChangeBatcher.js';

/** How often a missing mount folder is looked for. */
const MISSING_ROOT_POLL_MS = 500;

export interface MountWatcherOptions {
  /** Folders to watch (mount roots); missing ones are watched once they appear. */
  roots: readonly string[];
  batcher: ChangeBatcher;
  log?: Logger;
}

export interface MountWatcher {
  /** Resolves when every existing root is subscribed and events are live. */
  ready: Promise<void>;
  close(): Promise<void>;
}

/** Start watching. Existing files are not reported (the daemon's initial scan covers them). */
export function watchMounts(opts: MountWatcherOptions): MountWatcher {
  const log = opts.log ?? silentLogger;
  const roots = [...new Set(opts.roots.map((r) => path.resolve(r)))];
  const subs = new Map<string, Promise<AsyncSubscription | undefined>>();
  const polls = new Set<NodeJS.Timeout>();
  let closed = false;

  /** A dot folder or file anywhere below its root (.git, .vscode, editor swap files) or a temp file. */
  const hidden = (root: string, p: string): boolean => {
    const rel = p.slice(root.length + 1);
    return rel.startsWith('.') || rel.includes(`${path.sep}.`) || rel.includes(TEMP_MARKER);
  };

  const onEvents = (root: string) => (err: Error | null, events: Event[]) => {
    if (closed) return;
    if (err) {
      log.warn({ err, root }, 'watcher error; re-checking every mount');
      for (const r of roots) opts.batcher.push('addDir', r);
      return;
    }
    for (const e of events) {
      if (hidden(root, e.path)) continue;
      const name = path.basename(e.path);
      if (e.type === 'update') opts.batcher.push('change', e.path);
      else if (e.type === 'delete') {
        if (!isIgnoredFileName(name)) opts.batcher.push('unlink', e.path);
        else {
          // Maybe a folder: re-check the path (and drop a subscription a moved-in folder had).
          opts.batcher.push('unlinkDir', e.path);
          void unsubscribe(e.path);
        }
      } else if (!isIgnoredFileName(name)) opts.batcher.push('add', e.path);
      else if (fs.lstatSync(e.path, { throwIfNoEntry: false })?.isDirectory()) {
        opts.batcher.push('addDir', e.path);
        subscribe(e.path);
      }
    }
  };

  const subscribe = (dir: string): Promise<AsyncSubscription | undefined> => {
    let sub = subs.get(dir);
    if (sub) return sub;
    sub = watcher.subscribe(dir, onEvents(roots.find((r) => dir === r || dir.startsWith(r + path.sep)) ?? dir)).then(
      (s) => s,
      (e: unknown) => {
        subs.delete(dir);
        if (!fs.existsSync(dir)) return undefined; // gone before it could be watched
        log.warn({ err: e, dir }, 'cannot watch folder');
        return undefined;
      },
    );
    subs.set(dir, sub);
    return sub;
  };

  const unsubscribe = async (dir: string): Promise<void> => {
    for (const [d, sub] of [...subs]) {
      if (roots.includes(d) || !(d === dir || d.startsWith(dir + path.sep))) continue;
      subs.delete(d);
      await (await sub)?.unsubscribe().catch(() => {});
    }
  };

  const waitForRoot = (root: string) => {
    const t = setInterval(() => {
      if (closed || !fs.existsSync(root)) return;
      clearInterval(t);
      polls.delete(t);
      void subscribe(root).then(() => opts.batcher.push('addDir', root));
    }, MISSING_ROOT_POLL_MS);
    t.unref();
    polls.add(t);
  };

  const ready = Promise.all(roots.map((r) => (fs.existsSync(r) ? subscribe(r) : (waitForRoot(r), undefined)))).then(() => undefined);
  let closing: Promise<void> | undefined;
  return {
    ready,
    close: () =>
      (closing ??= (async () => {
        closed = true;
        for (const t of polls) clearInterval(t);
        polls.clear();
        const all = [...subs.values()];
        subs.clear();
        await Promise.all(all.map(async (s) => (await s)?.unsubscribe().catch(() => {})));
      })()),
  };
}
