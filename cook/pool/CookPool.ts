/**
 * The cook's worker pool: package cooks (read, hash, parse, strip, textures, DEFLATE) run on
 * worker threads across the cores, so the main thread only plans, writes and journals.
 *
 * Callers ask for one file at a time (`cook(file)`); the pool gathers the requests into batches
 * (one message each way per batch, the LCKD bytes transferred, not copied), because a message per
 * asset cost more than the work it moved. A batch goes out as soon as a worker has room (each
 * holds at most two, so it never waits for the main thread) or when it is full, so the daemon's
 * single edits do not wait either. Workers start on the first request (a no-op cook starts none)
 * and keep the process alive only while they have work.
 *
 * A worker that dies (an uncaught error, a crash, running out of memory) is replaced: the batch it
 * was cooking is retried one file per batch, so the file that kills a worker again fails alone
 * with COOK_FAILED naming it, and the batches queued behind it are sent again as they were. A
 * worker never leaves a request unanswered.
 *
 * A first cook's registry scan reads on these workers too (`readBatch`, the registry's
 * `ScanReaders`): they are started when the cook opens, before the scan, and would sit idle
 * while the main thread alone read, hashed and parsed every source. A scan batch goes before any
 * cook batch; one a dying worker held is handed back (rejected) and the scan reads it itself.
 */
import os from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { errors } from '../../src/errors.js';
import type { BatchAnswer, ReadJob, ScanReaders } from '../../src/registry/readPool.js';
import type { PackageCookOutcome } from '../cookPackageSource.js';
import type { FromWorker, JobResult, ToWorker, WorkerInit, WorkerJob, WorkerSettings } from './messages.js';

export type { JobResult, WorkerSettings } from './messages.js';

/** Most files in one batch. Small enough that both workers get work early in a cook. */
const BATCH_FILES = 32;
/** Most source bytes in one batch (a few large packages make a batch of their own). */
const BATCH_BYTES = 4 << 20;
/** Batches a worker holds at once: one cooking, one waiting, so it never idles on a round trip. */
const PER_WORKER = 2;

export interface CookPoolOptions {
  /** Worker threads; 0: one per core (os.availableParallelism()). */
  workers: number;
  settings: WorkerSettings;
  /** Tests only: a worker exits when it starts cooking a file whose path ends with this. */
  exitOn?: string;
}

/**
 * Where the results of `submit`ted jobs go: called once per answered batch with the tokens of its
 * jobs that named this sink and their results, in the same order (and once per job when a job ends
 * without a batch answer: a worker that died on it, the pool closing).
 */
export type JobSink = (tokens: readonly number[], results: readonly JobResult[]) => void;

/** Every job has every field (one object shape for the hot paths); `resolve` or `sink` says where its result goes. */
interface Job {
  file: string;
  output: string;
  packagePath: string | undefined;
  size: number;
  /** The file's bytes when the caller has them (a cold scan read them): transferred, not read again. */
  source: Uint8Array | undefined;
  /** `cook`'s promise. */
  resolve: ((r: JobResult) => void) | undefined;
  /** `submit`'s sink and the caller's token for this job. */
  sink: JobSink | undefined;
  token: number;
  /** Already retried alone after a worker died in its batch. */
  alone: boolean;
  /** A text asset, copied as it is (WorkerJob.text). */
  text: boolean;
}

/** A batch of a registry scan's reads. */
interface ScanRequest {
  jobs: ReadJob[];
  keep: boolean;
  resolve: (a: BatchAnswer) => void;
  reject: (e: Error) => void;
}

interface Batch {
  id: number;
  jobs: Job[];
  /** A scan batch (then `jobs` is empty). */
  scan?: ScanRequest;
}

interface Slot {
  worker: Worker;
  /** Batches sent and not answered, oldest (the one cooking) first. */
  batches: Batch[];
  /** The uncaught error that is ending it, for the message of the files it takes down. */
  error?: Error;
  dead: boolean;
  /** It has loaded and said so. */
  ready: boolean;
}

/** The worker count `cook.workers` asks for (0: one per core). */
export function poolSize(configured: number): number {
  return configured > 0 ? configured : Math.max(1, os.availableParallelism());
}

export class CookPool implements ScanReaders {
  readonly size: number;
  private settings: WorkerSettings;
  private readonly exitOn: string | undefined;
  private readonly slots: Slot[] = [];
  private queue: Job[] = [];
  /** Scan batches waiting for room on a worker; they go before cook batches. */
  private scanQueue: ScanRequest[] = [];
  private nextId = 0;
  private flushScheduled = false;
  private closed = false;
  /** Workers started over the pool's life (replacements too), for tests and logs. */
  started = 0;
  /** Scan batches the workers answered, for tests and logs. */
  scanBatches = 0;
  /** Workers alive now. */
  get running(): number {
    return this.slots.filter((s) => !s.dead).length;
  }
  /** ScanReaders: the threads a scan reads on. */
  get threads(): number {
    return this.size;
  }
  /** ScanReaders: workers that have loaded. */
  get ready(): number {
    return this.slots.filter((s) => s.ready && !s.dead).length;
  }

  constructor(opts: CookPoolOptions) {
    this.size = poolSize(opts.workers);
    this.settings = opts.settings;
    this.exitOn = opts.exitOn;
  }

  /**
   * Cook one package file on a worker, which writes its LCKD to `output` (see writeOutput); never
   * rejects (a failure is an outcome). With `packagePath`, the outcome carries the package's
   * shader materials. With `source` (the file's whole content), the worker cooks those bytes
   * instead of reading the file (they are copied into the batch's one transferred buffer).
   */
  cook(file: string, output: string, sizeHint = 0, packagePath?: string, source?: Uint8Array): Promise<JobResult> {
    if (this.closed) return Promise.resolve({ outcome: stopped(file, 'the cook pool is closed') });
    return new Promise<JobResult>((resolve) => {
      this.queue.push({ file, output, packagePath, size: sizeHint, source, resolve, sink: undefined, token: 0, alone: false, text: false });
      this.schedule();
    });
  }

  /**
   * `cook` without a promise per file: the result goes to `sink` with `token`, together with those
   * of the other jobs of its batch that name the same sink (a full cook's loop handles a batch's
   * results in one go). Never fails: a failure is an outcome, a closed pool answers at once.
   * `text`: a text asset, copied to `output` as it is (its result is `copied`, or a failed outcome).
   */
  submit(file: string, output: string, sizeHint: number, packagePath: string | undefined, source: Uint8Array | undefined, sink: JobSink, token: number, text = false): void {
    if (this.closed) {
      sink([token], [{ outcome: stopped(file, 'the cook pool is closed') }]);
      return;
    }
    this.queue.push({ file, output, packagePath, size: sizeHint, source, resolve: undefined, sink, token, alone: false, text });
    this.schedule();
  }

  /**
   * Start every worker now, before any request: a cold cook calls this before its registry scan,
   * so the workers load their modules while this thread scans instead of after the plan.
   */
  start(): void {
    while (!this.closed && this.slots.length < this.size) this.spawn();
  }

  /**
   * ScanReaders: read a batch of a registry scan on a worker (src/registry/readPool.ts). Rejects
   * when the pool is closed or the worker holding it dies (the scan then reads it itself).
   */
  readBatch(jobs: ReadJob[], keep: boolean): Promise<BatchAnswer> {
    if (this.closed) return Promise.reject(new Error('the cook pool is closed'));
    return new Promise<BatchAnswer>((resolve, reject) => {
      this.scanQueue.push({ jobs, keep, resolve, reject });
      this.dispatch();
    });
  }

  /** New settings (a daemon's full cook re-read the schemas): every worker takes them before its next batch. */
  updateSettings(settings: WorkerSettings): void {
    this.settings = settings;
    const msg: ToWorker = { type: 'settings', settings };
    for (const s of this.slots) s.worker.postMessage(msg);
  }

  /** Stop every worker; requests still waiting end as failed. */
  async close(): Promise<void> {
    this.closed = true;
    const slots = this.slots.splice(0);
    const closed = new Error('the cook pool is closed');
    for (const s of slots) {
      s.dead = true;
      for (const b of s.batches) {
        b.scan?.reject(closed);
        for (const j of b.jobs) answer(j, { outcome: stopped(j.file, 'the cook stopped') });
      }
    }
    for (const j of this.queue.splice(0)) answer(j, { outcome: stopped(j.file, 'the cook stopped') });
    for (const r of this.scanQueue.splice(0)) r.reject(closed);
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private schedule(): void {
    // A full batch goes at once; a partial one after the current turn, when its peers have joined.
    if (this.queue.length >= BATCH_FILES) this.dispatch();
    if (this.flushScheduled || this.queue.length === 0) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.scanQueue.length > 0 && !this.closed) {
      const slot = this.freeSlot();
      if (!slot) return;
      const scan = this.scanQueue.shift()!;
      const batch: Batch = { id: this.nextId++, jobs: [], scan };
      slot.batches.push(batch);
      if (slot.batches.length === 1) slot.worker.ref();
      const msg: ToWorker = { type: 'scan', id: batch.id, jobs: scan.jobs, keep: scan.keep };
      slot.worker.postMessage(msg);
    }
    while (this.queue.length > 0 && !this.closed) {
      const slot = this.freeSlot();
      if (!slot) return;
      const jobs: Job[] = [];
      let bytes = 0;
      // A file retried alone after a crash goes in a batch of its own.
      if (this.queue[0].alone) jobs.push(this.queue.shift()!);
      else {
        while (this.queue.length > 0 && !this.queue[0].alone && jobs.length < BATCH_FILES && (jobs.length === 0 || bytes + this.queue[0].size <= BATCH_BYTES)) {
          const j = this.queue.shift()!;
          bytes += j.size;
          jobs.push(j);
        }
      }
      const batch: Batch = { id: this.nextId++, jobs };
      slot.batches.push(batch);
      if (slot.batches.length === 1) slot.worker.ref();
      // The batch's source bytes travel in one buffer, transferred: one allocation and one
      // transfer per batch, each job's bytes a view into it.
      let sourceBytes = 0;
      for (const j of jobs) if (j.source !== undefined) sourceBytes += j.source.byteLength;
      const carrier = sourceBytes > 0 ? new Uint8Array(sourceBytes) : undefined;
      let at = 0;
      const msg: ToWorker = {
        type: 'batch',
        id: batch.id,
        jobs: jobs.map((j) => {
          const w: WorkerJob = { file: j.file, output: j.output };
          if (j.packagePath !== undefined) w.packagePath = j.packagePath;
          if (j.text) w.text = true;
          if (j.source !== undefined) {
            carrier!.set(j.source, at);
            w.source = carrier!.subarray(at, at + j.source.byteLength);
            at += j.source.byteLength;
            // Gone from this thread once sent: a retry after a worker died reads the file.
            j.source = undefined;
          }
          return w;
        }),
      };
      slot.worker.postMessage(msg, carrier ? [carrier.buffer] : []);
    }
  }

  /** The least busy worker with room, starting one while the pool is below its size. */
  private freeSlot(): Slot | undefined {
    let best: Slot | undefined;
    for (const s of this.slots) if (s.batches.length < PER_WORKER && (!best || s.batches.length < best.batches.length)) best = s;
    if (best && best.batches.length === 0) return best;
    if (this.slots.length < this.size) return this.spawn();
    return best;
  }

  private spawn(): Slot {
    const init: WorkerInit = { settings: this.settings, ...(this.exitOn !== undefined ? { exitOn: this.exitOn } : {}) };
    const worker = startWorker(init);
    this.started++;
    const slot: Slot = { worker, batches: [], dead: false, ready: false };
    worker.unref();
    worker.on('message', (m: FromWorker) => this.onMessage(slot, m));
    worker.on('error', (e) => {
      slot.error = e;
    });
    worker.on('exit', (code) => this.onExit(slot, code));
    this.slots.push(slot);
    return slot;
  }

  private onMessage(slot: Slot, m: FromWorker): void {
    if (m.type === 'ready') {
      slot.ready = true;
      return;
    }
    const i = slot.batches.findIndex((b) => b.id === m.id);
    if (i < 0) return;
    const [batch] = slot.batches.splice(i, 1);
    if (slot.batches.length === 0) slot.worker.unref();
    if (m.type === 'scan') {
      this.scanBatches++;
      batch.scan?.resolve(m.answer);
    }
    else deliver(batch.jobs, m.results);
    this.dispatch();
  }

  private onExit(slot: Slot, code: number): void {
    if (slot.dead) return;
    slot.dead = true;
    const at = this.slots.indexOf(slot);
    if (at >= 0) this.slots.splice(at, 1);
    const why = slot.error ? `${slot.error.message}` : `exit code ${code}`;
    // Scan batches go back to the scan, which reads them itself.
    for (const b of slot.batches) b.scan?.reject(new Error(`the cook worker stopped (${why})`));
    const cookBatches = slot.batches.filter((b) => b.scan === undefined);
    // The batch it was on is the oldest one, when that is a cook batch.
    const onCook = slot.batches.length > 0 && slot.batches[0].scan === undefined;
    const cooking = onCook ? cookBatches[0] : undefined;
    const waiting = onCook ? cookBatches.slice(1) : cookBatches;
    slot.batches = [];
    const retry: Job[] = [];
    for (const j of cooking?.jobs ?? []) {
      if (j.alone) answer(j, { outcome: stopped(j.file, `the cook worker stopped while cooking this file (${why})`) });
      else retry.push({ ...j, alone: true });
    }
    // Retried first, in order: the batch that was cooking file by file, then the ones queued behind it.
    this.queue = [...retry, ...waiting.flatMap((b) => b.jobs), ...this.queue];
    this.schedule();
    if (this.scanQueue.length > 0) this.dispatch();
  }
}

/** One job's result, to its promise or its sink. */
function answer(j: Job, r: JobResult): void {
  if (j.sink !== undefined) j.sink([j.token], [r]);
  else j.resolve!(r);
}

/** A batch's results: each `cook` job's to its promise, the `submit` jobs' to their sink in one call per run of the same sink. */
function deliver(jobs: readonly Job[], results: readonly JobResult[]): void {
  let sink: JobSink | undefined;
  let tokens: number[] = [];
  let outs: JobResult[] = [];
  for (let k = 0; k < jobs.length; k++) {
    const j = jobs[k];
    if (j.sink === undefined) {
      j.resolve!(results[k]);
      continue;
    }
    if (j.sink !== sink) {
      if (sink !== undefined) sink(tokens, outs);
      sink = j.sink;
      tokens = [];
      outs = [];
    }
    tokens.push(j.token);
    outs.push(results[k]);
  }
  if (sink !== undefined) sink(tokens, outs);
}

function stopped(file: string, why: string): PackageCookOutcome {
  return { status: 'failed', contentHash: '', sourceSize: 0, rawSize: 0, strippedExports: 0, nulledRefs: 0, texture: false, warnings: [], fallbacks: [], error: errors.cookFailed(file, why).toLog() };
}

/**
 * Start a worker on cookWorker (.js in the build; from the TypeScript sources, the worker loads
 * tsx's ESM hooks first, because a worker does not inherit the loader of a tsx or vitest parent).
 */
function startWorker(init: WorkerInit): Worker {
  const here = new URL(import.meta.url);
  if (here.pathname.endsWith('.js')) return new Worker(new URL('./cookWorker.js', here), { workerData: init });
  const tsx = pathToFileURL(path.join(path.dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/esm/api/index.mjs')).href;
  const entry = new URL('./cookWorker.ts', here).href;
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { eval: true, workerData: init });
}
