/**
 * Reading packages for a scan on worker threads, so a cold scan uses more than one core.
 *
 * Why: a cold scan reads every package whole (the xxh64 of the file is the registry's content
 * key) and parses its tables; on the main thread alone that was ~2.0 s for 50k packages, with the
 * second core idle. Workers run the very function the main thread runs (`runReadJob`), so a
 * record is the record the main thread would have read; a failure comes back as its typed
 * error's fields and is rebuilt as the LuminaError naming the file.
 *
 * Where they read is a `ScanReaders`: threads that are already running (a first cook's workers,
 * started when it opens: cook/pool/CookPool.ts), or the registry's own (`ReadThreads`, the
 * `readThreads` option; starting threads just for the scan cost more than they saved, because
 * each loads its modules and warms up first).
 *
 * What comes back is cheap for the main thread to take in, since it is the bottleneck: a batch's
 * records as one registry cache image (registryCache.ts, the format the cache is saved in), which
 * the main thread decodes into cache entries whose full records are built on first use, the same
 * as a warm load's. Records as objects through postMessage cost the main thread more (structured
 * clone of ~15 objects per record, all kept) than the whole read saved. With `keep` (a first cook:
 * keptSources.ts) the batch's small packages also come back whole, in one transferred buffer.
 *
 * Jobs go out BATCH at a time, a few batches per thread in flight. Until a thread is ready
 * (tens of ms; a cook worker under tsx, hundreds) the main thread reads batches itself, one per
 * event-loop turn. A batch a thread could not answer (it died) is read on the main thread.
 */
import os from 'node:os';
import type { Worker } from 'node:worker_threads';
import { isLuminaError, LuminaError, type LuminaLog } from '../errors.js';
import { startWorker } from '../util/startWorker.js';
import type { KeptSources } from './keptSources.js';
import { hashWholeFile, readPackageRecord, type SourceSink } from './readAsset.js';
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

/**
 * A worker's answer to a batch: the records as one cache image; per job, null (its record is in
 * the image) or its hash or failure. `kept` (asked for with `keep`): the packages read whole in
 * one piece, back to back in one buffer (transferred); per job its offset and length there
 * (`spans[2i]`, `spans[2i + 1]`; length -1: none).
 */
export interface BatchAnswer {
  image: Uint8Array | null;
  rest: Array<{ hash: string } | Failure | null>;
  kept?: { bytes: Uint8Array; spans: number[] };
}

/**
 * Threads a scan hands batches of packages to. The registry's own (`ReadThreads`), or a pool the
 * caller runs anyway (a first cook's workers): the registry does not know which.
 */
export interface ScanReaders {
  /** Threads that read; the scan keeps a few batches per thread in flight. */
  readonly threads: number;
  /** Threads started and ready now. While none is, the scan's own thread reads too. */
  readonly ready: number;
  /**
   * Read a batch on a thread (each job as `runReadJob` does; answer with `answerBatch`). Rejects
   * when no thread could answer it (one died, the pool closed): the scan reads it itself.
   * `keep`: send back the bytes of the packages read whole (BatchAnswer.kept).
   */
  readBatch(jobs: ReadJob[], keep: boolean): Promise<BatchAnswer>;
}

/** Files per message. */
const BATCH = 64;
/** Batches in flight per thread: the next one is there when a thread finishes one. */
const AHEAD = 2;

/** Run one job where the caller is (main thread or worker). Never throws. `keep` gets the bytes of a package read whole. */
export async function runReadJob(job: ReadJob, keep?: SourceSink): Promise<ReadOutcome> {
  try {
    if (job.hashOnly) return { hash: await hashWholeFile(job.file, job.size) };
    return { record: await readPackageRecord(job, job, keep) };
  } catch (e) {
    if (isLuminaError(e)) return { error: e.toLog() };
    const x = e as NodeJS.ErrnoException;
    return { failure: { message: x?.message ?? String(e), code: x?.code } };
  }
}

/** The largest package whose bytes a read hands on (readAsset.ts reads up to this in one piece). */
const KEEP_MAX = 256 * 1024;

/** A worker's whole answer to a batch (see BatchAnswer). */
export async function answerBatch(jobs: ReadJob[], keep = false): Promise<BatchAnswer> {
  let sink: (SourceSink & { bytes: Uint8Array; spans: number[] }) | undefined;
  if (keep) {
    // Room for every package that can be read in one piece: a batch's bytes go back in one buffer.
    let room = 0;
    const index = new Map<string, number>();
    jobs.forEach((j, i) => {
      if (!j.hashOnly && j.size <= KEEP_MAX) {
        room += j.size;
        index.set(j.file, i);
      }
    });
    const bytes = new Uint8Array(room);
    const spans = new Array<number>(jobs.length * 2).fill(-1);
    let at = 0;
    sink = {
      bytes,
      spans,
      offer(file, whole) {
        const i = index.get(file);
        if (i === undefined || at + whole.byteLength > bytes.byteLength) return;
        bytes.set(whole, at);
        spans[2 * i] = at;
        spans[2 * i + 1] = whole.byteLength;
        at += whole.byteLength;
      },
    };
  }
  const outcomes: ReadOutcome[] = [];
  // One after another: a small package is read synchronously anyway, and one pooled buffer serves all.
  for (const j of jobs) outcomes.push(await runReadJob(j, sink));
  const records: Array<{ record: AssetRecord }> = [];
  const rest = outcomes.map((o) => {
    if (!('record' in o)) return o;
    records.push({ record: o.record });
    return null;
  });
  // Unsealed: it goes to the main thread, never to disk (no SHA-1 on either side).
  const a: BatchAnswer = { image: records.length > 0 ? encodeRegistryCache(records, false) : null, rest };
  if (sink) a.kept = { bytes: sink.bytes, spans: sink.spans };
  return a;
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

interface Pending {
  resolve: (a: BatchAnswer) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  /** Batches sent and not answered, oldest first (a worker answers in order). */
  inFlight: Pending[];
  dead: boolean;
}

/**
 * The registry's own read threads (readWorker.ts), for a scan with no running pool to read on
 * (`AssetRegistry`'s `readThreads`). Stop them with `close`.
 */
export class ReadThreads implements ScanReaders {
  private readonly slots: Slot[] = [];

  constructor(readonly threads: number) {
    for (let i = 0; i < threads; i++) {
      const slot: Slot = { worker: startWorker(import.meta.url, 'readWorker'), ready: false, inFlight: [], dead: false };
      slot.worker.on('message', (m: 'ready' | BatchAnswer) => {
        if (slot.dead) return;
        if (m === 'ready') slot.ready = true;
        else slot.inFlight.shift()?.resolve(m);
      });
      const lost = (e?: unknown) => this.lose(slot, e instanceof Error ? e : new Error('the read worker stopped'));
      slot.worker.on('error', lost);
      slot.worker.on('exit', () => lost());
      this.slots.push(slot);
    }
  }

  get ready(): number {
    return this.slots.filter((s) => s.ready && !s.dead).length;
  }

  readBatch(jobs: ReadJob[], keep: boolean): Promise<BatchAnswer> {
    let best: Slot | undefined;
    for (const s of this.slots) {
      if (s.dead) continue;
      // A ready thread first, then the least loaded.
      if (!best || (s.ready && !best.ready) || (s.ready === best.ready && s.inFlight.length < best.inFlight.length)) best = s;
    }
    if (!best) return Promise.reject(new Error('no read worker is running'));
    const slot = best;
    return new Promise<BatchAnswer>((resolve, reject) => {
      slot.inFlight.push({ resolve, reject });
      slot.worker.postMessage({ jobs, keep });
    });
  }

  /** Stop every thread; batches not answered reject. */
  close(): void {
    for (const s of this.slots) {
      this.lose(s, new Error('the read threads were stopped'));
      void s.worker.terminate();
    }
  }

  private lose(slot: Slot, e: Error): void {
    if (slot.dead) return;
    slot.dead = true;
    for (const p of slot.inFlight.splice(0)) p.reject(e);
  }
}

/** Where a scan's batches were read. */
export interface PoolStats {
  workerBatches: number;
  mainBatches: number;
}

interface Batch<T> {
  items: T[];
  jobs: ReadJob[];
}

/**
 * Read `items` on `readers` (and on the main thread while none is ready, unless
 * `mainThreadReads` is false), calling `onOutcome` once per item, in no particular order.
 * `toJob` makes an item's job when its batch goes out (so a million-file scan holds no second
 * object per file). With `keep` (while it is accepting bytes), the packages read whole go there,
 * wherever they were read. Resolves when every item has its outcome; rejects only if `onOutcome`
 * throws.
 */
export function readOnPool<T>(
  items: readonly T[],
  toJob: (item: T) => ReadJob,
  readers: ScanReaders,
  onOutcome: (item: T, o: PoolOutcome) => void,
  opts: { mainThreadReads?: boolean; keep?: KeptSources } = {},
): Promise<PoolStats> {
  const stats: PoolStats = { workerBatches: 0, mainBatches: 0 };
  const mainThreadReads = opts.mainThreadReads ?? true;
  const keep = opts.keep;
  const keepOn = keep?.accepting ?? false;
  const most = Math.max(1, readers.threads) * AHEAD;
  return new Promise((resolve, reject) => {
    let next = 0;
    let left = items.length;
    let sent = 0;
    let localTurn = false;
    let over = false;
    /** Batches no thread could answer: read on the main thread. */
    const orphans: Batch<T>[] = [];
    const end = (error?: unknown) => {
      if (over) return;
      over = true;
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
      const entries = a.image ? decodeRegistryCache(Buffer.from(a.image.buffer, a.image.byteOffset, a.image.byteLength), batch.jobs[0].file, undefined, false) : [];
      const byFile = new Map<string, CacheEntry>();
      for (const e of entries) byFile.set(e.file, e);
      const kept = keep && a.kept;
      for (let i = 0; i < batch.items.length; i++) {
        if (kept && kept.spans[2 * i + 1] >= 0) {
          const at = kept.spans[2 * i];
          keep.adopt(batch.jobs[i].file, kept.bytes.subarray(at, at + kept.spans[2 * i + 1]));
        }
        const r = a.rest[i];
        if (r !== null) settle(batch.items[i], r);
        else {
          const e = byFile.get(batch.jobs[i].file);
          // Never expected: the image is encoded from this batch's records.
          settle(batch.items[i], e === undefined ? { failure: { message: 'the read worker lost the record' } } : { entry: e });
        }
      }
    };
    const readHere = (b: Batch<T>) => {
      stats.mainBatches++;
      void (async () => {
        const outcomes: ReadOutcome[] = [];
        for (const job of b.jobs) outcomes.push(await runReadJob(job, keepOn ? keep : undefined));
        for (let i = 0; i < b.items.length; i++) settle(b.items[i], outcomes[i]);
        pump();
      })();
    };
    const takeBatch = (): Batch<T> | undefined => {
      if (next >= items.length) return undefined;
      const b = items.slice(next, next + BATCH);
      next += b.length;
      return { items: b, jobs: b.map(toJob) };
    };
    const pump = () => {
      if (over) return;
      // What no thread could answer is read here, one batch per turn.
      if (orphans.length > 0) {
        if (!localTurn) {
          localTurn = true;
          setImmediate(() => {
            localTurn = false;
            if (!over && orphans.length > 0) readHere(orphans.pop()!);
          });
        }
        return;
      }
      if (readers.ready > 0 || !mainThreadReads) {
        while (sent < most) {
          const b = takeBatch();
          if (b === undefined) break;
          sent++;
          stats.workerBatches++;
          readers.readBatch(b.jobs, keepOn).then(
            (a) => {
              sent--;
              if (over) return;
              takeAnswer(b, a);
              pump();
            },
            () => {
              sent--;
              orphans.push(b);
              pump();
            },
          );
        }
        return;
      }
      if (localTurn || next >= items.length) return;
      // No thread ready yet: read a batch here, then look again.
      localTurn = true;
      setImmediate(() => {
        localTurn = false;
        if (over) return;
        const b = takeBatch();
        if (b === undefined) pump();
        else readHere(b);
      });
    };
    if (left === 0) end();
    else pump();
  });
}
