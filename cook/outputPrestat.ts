/**
 * The cook cache's output stats, taken on another thread while the registry scans.
 *
 * Why: a no-op checks every cached output's size and mtime (an lstat each, ~half of the pass over
 * cache hits: 56k outputs at 100k assets), and that pass waits for the scan and the plan, which
 * do not need those stats. So a full cook that scans starts one thread right after loading the
 * cache: it lstats every entry's output and sets a bit per record that matched its recorded size
 * and mtime, into shared memory, while this thread scans. The pass then takes a set bit instead of
 * its own lstat; a bit not (yet) set costs the lstat it always did, so a slow thread only means
 * less help. A bit says what the pass's lstat would have said at a moment during this cook (the
 * same race as a file changed right after the pass's own stat); it is used by one pass only.
 *
 * This thread hands over only the records' offsets: the thread reads the records (cookCacheCodec's
 * recordOutput) from the snapshot's own memory, which CookCache.load reads into shared memory
 * (records are never changed in place, only appended), so nothing is copied or built per record
 * here. (An attempt at 20k assets that built the path list on this thread gained nothing.)
 */
import { Worker } from 'node:worker_threads';
import { startWorker } from '../src/util/startWorker.js';

/** Records are far more than 32 bytes apart, so `offset >>> 5` names one record. */
export const PRESTAT_SHIFT = 5;

/** What the thread is given (outputPrestatWorker.ts). */
export interface PrestatJob {
  /** The cache's records: offsets below are into this. */
  arena: Uint8Array;
  offsets: Int32Array;
  cookedDir: string;
  /** One bit per `offset >>> PRESTAT_SHIFT`: set when that record's output matched. */
  bits: SharedArrayBuffer;
}

/** Output stats in flight (or done) for one pass; see the module comment. */
export class OutputPrestat {
  private readonly flags: Uint8Array;
  private worker: Worker | undefined;
  /** Settles when the thread is done (or failed, or was stopped). */
  readonly done: Promise<void>;

  private constructor(flags: Uint8Array, worker: Worker) {
    this.flags = flags;
    this.worker = worker;
    // Nothing to report: a thread that fails only leaves its bits unset.
    worker.on('error', () => {});
    this.done = new Promise((resolve) => worker.once('exit', () => resolve()));
    worker.unref();
  }

  /** Start statting the outputs of the records at `offsets` (below `used`) in `arena`, relative to `cookedDir`. */
  static start(arena: Buffer, used: number, offsets: Iterable<number>, cookedDir: string): OutputPrestat {
    const list = Int32Array.from(offsets);
    // Shared with the thread when the snapshot was read into shared memory, else a copy.
    const records = arena.buffer instanceof SharedArrayBuffer ? arena.subarray(0, used) : Uint8Array.prototype.slice.call(arena, 0, used);
    const bits = new SharedArrayBuffer(((used >>> PRESTAT_SHIFT) >>> 3) + 1);
    const job: PrestatJob = { arena: records, offsets: list, cookedDir, bits };
    const transferList = [list.buffer as ArrayBuffer, ...(records.buffer instanceof SharedArrayBuffer ? [] : [records.buffer as ArrayBuffer])];
    return new OutputPrestat(new Uint8Array(bits), startWorker(import.meta.url, 'outputPrestatWorker', { workerData: job, transferList }));
  }

  /** The record at `offset` had its recorded size and mtime when the thread statted it. */
  matched(offset: number): boolean {
    const k = offset >>> PRESTAT_SHIFT;
    const i = k >>> 3;
    return i < this.flags.length && (Atomics.load(this.flags, i) & (1 << (k & 7))) !== 0;
  }

  /** Stop the thread (the pass is over, or the cache changed shape). */
  stop(): void {
    void this.worker?.terminate();
    this.worker = undefined;
  }
}
