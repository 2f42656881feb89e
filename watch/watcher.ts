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
 * - An error from the native side (its inotify thread failed) re-walks every mount (the registry
 *   finds what changed by stat, so nothing lost stays lost) and subscribes that folder again.
 *
 * The daemon never runs blind. A mount root that exists at start and cannot be subscribed (the
 * inotify watch limit: ENOSPC from inotify_add_watch; a root that is not a folder) rejects `ready`
 * with WATCH_FAILED, so the daemon does not start. Later (a root that appears, a folder created or
 * moved in, a re-subscribe after an error) there is no start to fail: the folder is reported through
 * `onWatchError`, retried with backoff, and `onWatchRestored` plus a re-walk follow once it is
 * watched, so edits made meanwhile are found. @parcel/watcher 2.6.0 rejects with a bare message
 * (no errno code), so the reason is read from its text.
 *
 * A subscribe that does not answer counts as a failure too. At the inotify instance limit
 * @parcel/watcher 2.6.0 would block the event loop for good, so that case is asked first, where it
 * cannot hang (inotifyProbe.ts). Any other subscribe that has not settled after
 * `subscribeTimeoutMs` (its native walk of the tree is stuck: a mount that does not answer, or the
 * thread pool is busy) fails like a rejection; it is not started twice, and if it settles later
 * the folder is watched from then on (and re-walked), or unsubscribed when nobody wants it anymore.
 */
import fs from 'node:fs';
import path from 'node:path';
import watcher, { type AsyncSubscription, type Event } from '@parcel/watcher';
import { errors, type LuminaError } from '../src/errors.js';
import type { Logger } from '../src/log/logger.js';
import { silentLogger } from '../src/log/logger.js';
import { TEMP_MARKER } from '../src/util/atomicWrite.js';
import { isIgnoredFileName, type ChangeBatcher } from './ChangeBatcher.js';
import { inotifyRefusal } from './inotifyProbe.js';

/** How often a missing mount folder is looked for. */
const MISSING_ROOT_POLL_MS = 500;
/**
 * A folder that could not be subscribed is tried again after 1 s, then 2, 4, ... up to 30 s: soon
 * enough that watching resumes right after the user raises the limit, rare enough that re-walking a
 * big tree (the native subscribe walks it) costs nothing that matters while the limit stays hit.
 */
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 30_000;
/**
 * How long a subscribe may take before its folder counts as not watched. @parcel/watcher walks the
 * whole tree under the folder before it answers: the 1M-file scale project's Content took 12-20 s
 * wall (6-7.5 s CPU) at load ~9 on the 2-core test machine, so a bound of a few seconds would
 * refuse a healthy big project. 120 s is 6x the slowest of those; a stuck subscribe is reported
 * after that, not never.
 */
export const SUBSCRIBE_TIMEOUT_MS = 120_000;

const INSTANCE_LIMIT_HINT = 'raise it: sudo sysctl fs.inotify.max_user_instances=1024 (to keep it, add it to /etc/sysctl.d/90-inotify.conf), or the open file limit (ulimit -n)';

/**
 * Subscriptions this process holds (every MountWatcher's): while there is one, @parcel/watcher's
 * inotify thread runs, and a subscribe cannot hang on starting it (inotifyProbe.ts).
 */
const live = new Set<AsyncSubscription>();
/** The probe under way: subscribes that need one meanwhile share it. */
let probing: Promise<NodeJS.ErrnoException | undefined> | undefined;

/** Unsubscribe, once and quietly (a subscription the native side dropped may fail to). */
function release(sub: AsyncSubscription | undefined): Promise<void> {
  if (!sub) return Promise.resolve();
  live.delete(sub);
  return sub.unsubscribe().catch(() => {});
}

/** WATCH_FAILED for a subscribe that did not settle within `ms`. */
export function watchStalled(folder: string, ms: number): LuminaError {
  return errors.watchFailed(
    folder,
    `the watcher did not answer within ${ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`}`,
    'check that the folder can be listed (a network or FUSE mount that hangs stops the watcher); at the inotify instance limit the watcher may not answer either: sudo sysctl fs.inotify.max_user_instances=1024',
  );
}

/** The typed error for a folder @parcel/watcher would not subscribe, with the fix when it is a known limit. */
export function watchError(folder: string, cause: unknown): LuminaError {
  const why = String((cause as Error)?.message ?? cause);
  const code = (cause as NodeJS.ErrnoException)?.code;
  if (code === 'EMFILE' || code === 'ENFILE')
    // inotifyRefusal's answer: @parcel/watcher itself would have hung instead of failing.
    return errors.watchFailed(
      folder,
      `the watcher could not start: no inotify instance (${why}): the inotify instance limit (fs.inotify.max_user_instances) or the open file limit is reached`,
      INSTANCE_LIMIT_HINT,
      cause,
    );
  if (/inotify_add_watch/.test(why) && /No space left on device/.test(why))
    return errors.watchFailed(
      folder,
      `${why} (the inotify watch limit, one watch per folder, is reached; the disk is not full)`,
      'raise it: sudo sysctl fs.inotify.max_user_watches=524288 (to keep it, add fs.inotify.max_user_watches=524288 to /etc/sysctl.d/90-inotify.conf)',
      cause,
    );
  if (/Too many open files|initialize inotify/.test(why))
    return errors.watchFailed(
      folder,
      `${why} (the inotify instance limit or the open file limit is reached)`,
      INSTANCE_LIMIT_HINT,
      cause,
    );
  if (/Not a directory/.test(why)) return errors.watchFailed(folder, `${why}: a content mount must be a folder`, undefined, cause);
  if (/Permission denied/.test(why)) return errors.watchFailed(folder, why, 'give the user running the daemon read access to this folder', cause);
  return errors.watchFailed(folder, why, undefined, cause);
}

export interface MountWatcherOptions {
  /** Folders to watch (mount roots); missing ones are watched once they appear. */
  roots: readonly string[];
  batcher: ChangeBatcher;
  log?: Logger;
  /** After start: a folder is not watched (WATCH_FAILED); it is retried until watched or gone. */
  onWatchError?: (err: LuminaError) => void;
  /** A folder reported by onWatchError is watched again, or is gone and needs no watching. */
  onWatchRestored?: (folder: string) => void;
  /** A subscribe not settled after this long fails its folder (WATCH_FAILED). Default SUBSCRIBE_TIMEOUT_MS. */
  subscribeTimeoutMs?: number;
}

export interface MountWatcher {
  /**
   * Resolves when every existing root is subscribed and events are live; rejects with WATCH_FAILED
   * (naming the first root that failed) when one cannot be subscribed.
   */
  ready: Promise<void>;
  close(): Promise<void>;
}

/** Start watching. Existing files are not reported (the daemon's initial scan covers them). */
export function watchMounts(opts: MountWatcherOptions): MountWatcher {
  const log = opts.log ?? silentLogger;
  const roots = [...new Set(opts.roots.map((r) => path.resolve(r)))];
  const timeoutMs = opts.subscribeTimeoutMs ?? SUBSCRIBE_TIMEOUT_MS;
  /**
   * One native subscribe per folder: `outcome` rejects with WATCH_FAILED, `quiet` never rejects
   * (what close() and unsubscribe() wait for), `settled` once either has.
   */
  interface Sub {
    outcome: Promise<AsyncSubscription | undefined>;
    quiet: Promise<AsyncSubscription | undefined>;
    settled: boolean;
  }
  const subs = new Map<string, Sub>();
  const polls = new Set<NodeJS.Timeout>();
  let closed = false;

  /** A dot folder or file anywhere below its root (.git, .vscode, editor swap files) or a temp file. */
  const hidden = (root: string, p: string): boolean => {
    const rel = p.slice(root.length + 1);
    return rel.startsWith('.') || rel.includes(`${path.sep}.`) || rel.includes(TEMP_MARKER);
  };

  const onEvents = (dir: string, root: string) => (err: Error | null, events: Event[]) => {
    if (closed) return;
    if (err) {
      // The native side dropped this subscription's callbacks: without a new one the folder is blind.
      log.error({ err, dir }, 'watcher error; re-checking every mount and watching the folder again');
      for (const r of roots) opts.batcher.push('addDir', r);
      void resubscribe(dir);
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
        const dir = e.path;
        subscribe(dir).catch((err: LuminaError) => failed(dir, err));
      }
    }
  };

  /**
   * Subscribe `dir` (once; a second call joins the first, without a watchdog of its own). Rejects
   * with WATCH_FAILED when the folder exists and cannot be watched, or when the subscribe has not
   * settled within timeoutMs; resolves undefined when it went before it could be watched.
   */
  const subscribe = (dir: string): Promise<AsyncSubscription | undefined> => {
    const known = subs.get(dir);
    if (known) return known.outcome;
    const root = roots.find((r) => dir === r || dir.startsWith(r + path.sep)) ?? dir;
    const entry = { settled: false } as Sub;
    const native = (async () => {
      if (live.size === 0) {
        const refusal = await (probing ??= inotifyRefusal(dir).finally(() => (probing = undefined)));
        if (refusal) throw refusal;
        if (closed) return undefined;
      }
      return watcher.subscribe(dir, onEvents(dir, root));
    })();
    entry.outcome = native.then(
      (s) => {
        entry.settled = true;
        if (s) live.add(s);
        return s;
      },
      (e: unknown) => {
        entry.settled = true;
        if (subs.get(dir) === entry) subs.delete(dir);
        if (!fs.existsSync(dir)) return undefined; // gone before it could be watched
        throw watchError(dir, e);
      },
    );
    entry.quiet = entry.outcome.catch(() => undefined);
    subs.set(dir, entry);
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(watchStalled(dir, timeoutMs)), timeoutMs);
      timer.unref();
    });
    return Promise.race([entry.outcome, stalled]).finally(() => clearTimeout(timer));
  };

  /** Folders not watched after start, with their retry timers (cleared by close()). */
  const failing = new Map<string, { timer: NodeJS.Timeout; delay: number; message: string }>();

  /**
   * After start `dir` could not be watched: say so and try again later (said again only when the
   * reason changes, e.g. a subscribe that did not answer and then failed).
   */
  const failed = (dir: string, err: LuminaError) => {
    if (closed) return;
    const prev = failing.get(dir);
    if (prev) clearTimeout(prev.timer);
    if (prev?.message !== err.message) {
      log.error({ code: err.code, file: dir, hint: err.hint }, `${err.message}; not watching it, retrying`);
      opts.onWatchError?.(err);
    }
    const delay = prev ? Math.min(prev.delay * 2, RETRY_MAX_MS) : RETRY_FIRST_MS;
    const timer = setTimeout(() => void retry(dir), delay);
    timer.unref();
    failing.set(dir, { timer, delay, message: err.message });
  };

  const retry = async (dir: string) => {
    if (closed) return;
    let sub: AsyncSubscription | undefined;
    try {
      // A subscribe that did not answer is joined, not started again: this waits for it to settle.
      sub = await subscribe(dir);
    } catch (e) {
      return failed(dir, e as LuminaError);
    }
    if (closed) return;
    failing.delete(dir);
    if (sub) log.info({ file: dir }, 'watching folder again');
    opts.onWatchRestored?.(dir);
    // Whatever changed while it was not watched is found by re-walking it (a gone folder drops its assets).
    opts.batcher.push('addDir', dir);
  };

  /** A subscription the native side gave up on: drop it and subscribe again (or retry until it works). */
  const resubscribe = async (dir: string) => {
    const old = subs.get(dir);
    subs.delete(dir);
    await release(await old?.quiet);
    if (closed) return;
    try {
      await subscribe(dir);
    } catch (e) {
      failed(dir, e as LuminaError);
    }
  };

  const unsubscribe = async (dir: string): Promise<void> => {
    for (const [d, sub] of [...subs]) {
      if (roots.includes(d) || !(d === dir || d.startsWith(dir + path.sep))) continue;
      subs.delete(d);
      await release(await sub.quiet);
    }
    for (const [d, f] of [...failing]) {
      if (roots.includes(d) || !(d === dir || d.startsWith(dir + path.sep))) continue;
      clearTimeout(f.timer);
      failing.delete(d);
      opts.onWatchRestored?.(d); // gone: nothing left to watch there
    }
  };

  const waitForRoot = (root: string) => {
    if (closed) return; // a subscribe the close overtook
    const t = setInterval(() => {
      if (closed || !fs.existsSync(root)) return;
      clearInterval(t);
      polls.delete(t);
      subscribe(root).then(
        () => opts.batcher.push('addDir', root),
        (e: LuminaError) => {
          opts.batcher.push('addDir', root); // its files are still found by the registry walk
          failed(root, e);
        },
      );
    }, MISSING_ROOT_POLL_MS);
    t.unref();
    polls.add(t);
  };

  // A root that went between the check and the subscribe is waited for like one that never was.
  const ready = Promise.all(
    roots.map(async (r) => {
      if (!fs.existsSync(r) || !(await subscribe(r))) waitForRoot(r);
    }),
  ).then(() => undefined);
  let closing: Promise<void> | undefined;
  return {
    ready,
    close: () =>
      (closing ??= (async () => {
        closed = true;
        for (const t of polls) clearInterval(t);
        polls.clear();
        for (const f of failing.values()) clearTimeout(f.timer);
        failing.clear();
        const all = [...subs];
        subs.clear();
        // One that has not settled is not waited for (it may never settle); it is unsubscribed if it does.
        for (const [dir, s] of all) {
          if (s.settled) continue;
          void s.quiet.then(async (sub) => {
            await release(sub);
            if (sub) log.info({ file: dir }, 'the watcher answered after the folder was given up; unsubscribed it');
          });
        }
        await Promise.all(all.filter(([, s]) => s.settled).map(async ([, s]) => release(await s.quiet)));
      })()),
  };
}
