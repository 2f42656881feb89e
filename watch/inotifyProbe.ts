/**
 * Whether this process can get a new inotify instance, asked where a refusal cannot hang.
 *
 * @parcel/watcher 2.6.0 starts its inotify thread from the JavaScript thread that calls subscribe()
 * and waits there until the thread says it started (Backend::run). When inotify_init1 fails (the
 * inotify instance limit, fs.inotify.max_user_instances, or the open file limit), that thread
 * throws before it says so, and subscribe() blocks the event loop for good: no promise settles, no
 * timer fires, no signal handler runs (seen by hand with max_user_instances=0 in a user namespace).
 * It does so only when it has no inotify thread yet, that is while the process holds no
 * subscription. So before such a subscribe, a worker thread (its own event loop, so its own inotify
 * instance, closed when the worker ends) opens one with fs.watch, which fails at once instead.
 * What is left is a race: another process taking the last instance between this probe and the
 * subscribe, a few milliseconds later.
 */
import { Worker } from 'node:worker_threads';

/** CommonJS run by the worker: watch `dir` and stop, reporting only why it could not. */
const PROBE = `
const { parentPort, workerData } = require('node:worker_threads');
try {
  require('node:fs').watch(workerData, { persistent: false }).close();
  parentPort.postMessage(null);
} catch (e) {
  parentPort.postMessage({ code: e.code, message: e.message });
}`;

/** The error a new inotify instance fails with here (EMFILE, ENFILE), or undefined when one can be had. */
export function inotifyRefusal(dir: string): Promise<NodeJS.ErrnoException | undefined> {
  if (process.platform !== 'linux') return Promise.resolve(undefined);
  return new Promise((resolve) => {
    let answer: { code?: string; message: string } | null = null;
    const w = new Worker(PROBE, { eval: true, workerData: dir, stdout: true, stderr: true });
    w.on('message', (m: typeof answer) => (answer = m));
    // A worker that cannot start says nothing about inotify: the subscribe then goes ahead as before.
    w.on('error', () => {});
    w.on('exit', () => {
      const a = answer as { code?: string; message: string } | null;
      if (!a || (a.code !== 'EMFILE' && a.code !== 'ENFILE')) return resolve(undefined);
      resolve(Object.assign(new Error(a.message), { code: a.code }));
    });
  });
}
