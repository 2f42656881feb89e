/**
 * Reading packages for a scan on worker threads, so a cold scan uses more than one core.
 *
 * Why: a cold scan reads every package whole (the xxh64 of the file is the registry's content
 * key) and parses its tables; on the main thread alone that was ~2.0 s for 50k packages, with the
 * second core idle. Workers run the very function the main thread runs (`runReadJob`), so a
 * record is the record the main thread would have read; a failure comes back as its typed
 * error's fields and is rebuilt as the LuminaError naming the file.
 *
 * What comes back is cheap for the main thread to take in, since it is the bottleneck: a batch's
 * records as one registry cache image (registryCache.ts, the format the cache is saved in), which
 * the main thread decodes into cache entries whose full records are built on first use, the same
 * as a warm load's. Records as objects through postMessage cost the main thread more (structured
 * clone of ~15 objects per record, all kept) than the whole read saved.
 *
 * Jobs go out BATCH at a time, a few batches per worker in flight. Until a worker has started
 * (tens of ms) the main thread reads batches itself, one per event-loop turn so a worker's "ready"
 * is heard. A worker that dies has its batch read on the main thread.
 */
import os from 'node:os';
import type { Worker } from 'node:worker_threads';
import { isLuminaError, LuminaError, type LuminaLog } from '../errors.js';
import { startWorker } from '../util/startWorker.js';
import { hashWholeFile, readPackageRecord } from './readAsset.js';
import { decodeRegistryCache, encodeRegistryCache, type CacheEntry } from './registryCache.js';
import type { AssetRecord } from './types.js';

/** One package to read: its record, or (hashOnly) just its xxh64. */
export interface ReadJob {
  file: string;
  virtualPath: string;
  mount: string;
  mtimeMs: number;
  size: number;
  hashOnly: boolean;
}

type Failure = { error: LuminaLog } | { failure: { message: string; code?: string } };

/** A job's outcome where it ran. */
export type ReadOutcome = { record: AssetRecord } | { hash: string } | Failure;

/** A job's outcome as the pool hands it over: a record read on a worker arrives as a cache entry. */
export type PoolOutcome = ReadOutcome | { entry: CacheEntry };

/** A worker's answer to a batch: the records as one cache image; per job, null (its record is in the image) or its hash or failure. */
export interface BatchAnswer {
  image: Uint8Array | null;
  rest: Array<{ hash: string } | Failure | null>;
}

/** Files per message. */
const BATCH = 64;
/** Batches in flight per worker: the next one is there when a worker finishes one. */
const AHEAD = 2;

/** Run one job where the caller is (main thread or worker). Never throws. */
export async function runReadJob(job: ReadJob): Promise<ReadOutcome> {
  try {
    if (job.hashOnly) return { hash: await hashWholeFile(job.file, job.size) };
    return { record: await readPackageRecord(job, job) };
  } catch (e) {
    if (isLuminaError(e)) return { error: e.toLog() };
    const x = e as NodeJS.ErrnoException;
    return { failure: { message: x?.message ?? String(e), code: x?.code } };
  }
}

/** A worker's whole answer to a batch (see BatchAnswer). */
export async function answerBatch(jobs: ReadJob[]): Promise<BatchAnswer> {
  const outcomes = await Promise.all(jobs.map(runReadJob));
  const records: Array<{ record: AssetRecord }> = [];
  const rest = outcomes.map((o) => {
    if (!('record' in o)) return o;
    records.push({ record: o.record });
    return null;
  });
  return { image: records.length > 0 ? encodeRegistryCache(records) : null, rest };
}

/** The error a failed outcome stands for (what the main thread's own read would have thrown), or undefined. */
export function outcomeError(o: PoolOutcome): unknown {
  if ('error' in o) return new LuminaError(o.error);
  if ('failure' in o) return Object.assign(new Error(o.failure.message), o.failure.code === undefined ? {} : { code: o.failure.code });
  return undefined;
}

function cores(): number {
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
}

/** Worker threads a cold scan reads on when a core is free: one per core, at most 4. */
export function defaultReadThreads(): number {
  return Math.min(4, cores());
}

interface Batch<T> {
  items: T[];
  jobs: ReadJob[];
}

interface Slot {
  worker: Worker;
  ready: boolean;
  /** Batches sent and not answered, oldest first (a worker answers in order). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  inFlight: Batch<any>[];
  dead: boolean;
}

/** Where a pool's batches were read. */
export interface PoolStats {
  workerBatches: number;
  mainBatches: number;
}

/**
 * Read `items` on `threads` workers (and on the main thread while none has started, unless
 * `mainThreadReads` is false), calling `onOutcome` once per item, in no particular order.
 * `toJob` makes an item's job when its batch goes out (so a million-file scan holds no second
 * object per file). Resolves when every item has its outcome; rejects only if `onOutcome` throws
 * (the workers are stopped either way).
 */
export function readOnPool<T>(
  items: readonly T[],
  toJob: (item: T) => ReadJob,
  threads: number,
  onOutcome: (item: T, o: PoolOutcome) => void,
  opts: { mainThreadReads?: boolean } = {},
): Promise<PoolStats> {
  const stats: PoolStats = { workerBatches: 0, mainBatches: 0 };
  const mainThreadReads = opts.mainThreadReads ?? true;
  return new Promise((resolve, reject) => {
    const slots: Slot[] = [];
    let next = 0;
    let left = items.length;
    let localTurn = false;
    let over = false;
    /** Batches a dead worker left, read on the main thread (or by another worker). */
    const orphans: Batch<T>[] = [];
    const end = (error?: unknown) => {
      if (over) return;
      over = true;
      for (const s of slots) {
        s.dead = true;
        void s.worker.terminate();
      }
      if (error === undefined) resolve(stats);
      else reject(error);
    };
    const settle = (item: T, o: PoolOutcome) => {
      if (over) return;
      try {
        onOutcome(item, o);
      } catch (e) {
        end(e);
        return;
      }
      if (--left === 0) end();
    };
    const takeAnswer = (batch: Batch<T>, a: BatchAnswer) => {
      const entries = a.image ? decodeRegistryCache(Buffer.from(a.image.buffer, a.image.byteOffset, a.image.byteLength), batch.jobs[0].file) : [];
      const byFile = new Map<string, CacheEntry>();
      for (const e of entries) byFile.set(e.file, e);
      for (let i = 0; i < batch.items.length; i++) {
        const r = a.rest[i];
        if (r !== null) settle(batch.items[i], r);
        else {
          const e = byFile.get(batch.jobs[i].file);
          // Never expected: the image is encoded from this batch's records.
          settle(batch.items[i], e === undefined ? { failure: { message: 'the read worker lost the record' } } : { entry: e });
        }
      }
    };
    const takeBatch = (): Batch<T> | undefined => {
      if (orphans.length > 0) return orphans.pop();
      if (next >= items.length) return undefined;
      const b = items.slice(next, next + BATCH);
      next += b.length;
      return { items: b, jobs: b.map(toJob) };
    };
    const pump = () => {
      if (over) return;
      let anyReady = false;
      for (const s of slots) {
        if (s.dead || !s.ready) continue;
        anyReady = true;
        while (s.inFlight.length < AHEAD) {
          const b = takeBatch();
          if (b === undefined) break;
          s.inFlight.push(b);
          stats.workerBatches++;
          s.worker.postMessage(b.jobs);
        }
      }
      if (anyReady || localTurn || (next >= items.length && orphans.length === 0)) return;
      if (!mainThreadReads && slots.some((s) => !s.dead)) return;
      // No worker ready yet (or none left): read a batch here, then look again.
      localTurn = true;
      setImmediate(() => {
        localTurn = false;
        if (over) return;
        const b = takeBatch();
        if (b === undefined) return;
        stats.mainBatches++;
        void Promise.all(b.jobs.map(runReadJob)).then((outcomes) => {
          for (let i = 0; i < b.items.length; i++) settle(b.items[i], outcomes[i]);
          pump();
        });
      });
    };
    for (let i = 0; i < threads; i++) {
      const slot: Slot = { worker: startWorker(import.meta.url, 'readWorker'), ready: false, inFlight: [], dead: false };
      slot.worker.on('message', (m: 'ready' | BatchAnswer) => {
        if (slot.dead) return;
        if (m === 'ready') slot.ready = true;
        else takeAnswer(slot.inFlight.shift()!, m);
        pump();
      });
      const lost = () => {
        if (slot.dead) return;
        slot.dead = true;
        orphans.push(...slot.inFlight);
        slot.inFlight = [];
        pump();
      };
      slot.worker.on('error', lost);
      slot.worker.on('exit', lost);
      slots.push(slot);
    }
    if (left === 0) end();
    else pump();
  });
}
