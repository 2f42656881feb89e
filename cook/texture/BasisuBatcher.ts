/**
 * Feeds many textures to few basisu processes. Starting basisu costs ~30 ms of CPU (its encoder
 * tables) whatever the image, and most textures of a game are small: one process per texture
 * spent most of a cook starting encoders. basisu takes many input files per run with the same
 * flags, so requests with the same flags are queued and handed out in batches, one process per
 * core (each single-threaded: see basisuArgs for why), so the cores are full and never
 * oversubscribed.
 *
 * Scheduling: requests made in the same tick are dispatched together. When no run is going, they
 * start at once (a lone save in the daemon waits for nothing), split evenly over the free runners.
 * While runs are going, requests gather; a free runner takes its share of a group (small textures:
 * pending / free runners, for big batches; large ones: pending / all runners, for balance) once the
 * share is worth a process start (enough pixels or files) or the oldest request has waited
 * LINGER_MS.
 *
 * Keeping the cores busy: each request's input file is written when it is made, into one work
 * folder per batcher, so a batch starts without writing anything; a runner is free again the
 * moment its process exits, and the next batch is spawned before the finished one's outputs are
 * read and its requests resolved. (Writing inputs and reading outputs per batch, and removing a
 * folder per batch, left a core idle at every batch boundary while the main thread did it.)
 *
 * Failure: every run has a timeout that grows with the pixels it encodes, and is killed as a
 * process group past it (src/util/runChild). When a run fails (timeout, crash, non-zero exit, an
 * output missing), each of its requests is retried once in a run of its own, so one bad or unlucky
 * texture cannot fail its batch-mates and a failure names its asset. A second failure rejects with
 * COOK_FAILED naming the asset. When the executable cannot be started at all (ENOENT, EACCES,
 * ENOEXEC) requests reject with {@link EncoderUnavailableError} so the caller can fall back.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { errors } from '../../src/errors.js';
import { makeProcessTempDir } from '../../src/util/processTempDir.js';
import { childSlots, describeChildFailure, runChild, type ChildRun } from '../../src/util/runChild.js';
import type { Semaphore } from '../../src/util/semaphore.js';
import { basisuArgs, basisuEnv, type BasisuSettings, type Ktx2Encoding } from './basisu.js';
import { checkPngWellFormed } from './decodePngWithPngjs.js';
import type { MipLevel } from './mips.js';

/**
 * basisu failed on a PNG it was given to read itself ({@link BasisuBatcher.encodePng}): not
 * retried here, the caller encodes its own decode of the image instead (with the usual retry).
 */
export class PngInputFailedError extends Error {
  /** `ran`: basisu ran on it and failed (so the caller's run is its retry); false: it was never given to basisu. */
  constructor(
    readonly reason: string,
    readonly ran: boolean,
  ) {
    super(reason);
    this.name = 'PngInputFailedError';
  }
}

/** basisu could not be started (no such file, not executable, wrong platform). */
export class EncoderUnavailableError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'EncoderUnavailableError';
  }
}

export interface BasisuBatcherOptions extends BasisuSettings {
  /** A run is killed after this long per megapixel it encodes (mips included), and never sooner than this. */
  timeoutMs: number;
  /** CPU slots shared with every other child process (default: one per core). */
  slots?: Semaphore;
}

interface Job {
  /** Names its input `<id>.<ext>` and output `<id>.ktx2` in the work folder. */
  id: number;
  /** `tga`: our RGBA8 decode; `png`: the source itself, which basisu decodes (no retry on failure). */
  ext: 'tga' | 'png';
  /** A PNG input not checked and written yet (see prepare). */
  png?: Uint8Array;
  /** The input is written (large ones asynchronously); a batch waits for this before it starts. */
  written: Promise<void> | undefined;
  file: string;
  /** Pixels basisu encodes for it, mips included. */
  pixels: number;
  /** 1 in a batch; 2 is the retry, alone. */
  attempt: number;
  since: number;
  resolve: (ktx2: Uint8Array) => void;
  reject: (e: unknown) => void;
}

interface Group {
  args: string[];
  jobs: Job[];
  /** Measured basisu milliseconds per cost unit (see jobCost) for these flags: UASTC costs up to 12x ETC1S per pixel. */
  msPerUnit: number;
}

/** A batch on a runner, for the estimate of the work the runners still have. */
interface Active {
  group: Group;
  units: number;
  started: number;
}

/**
 * How many textures may wait for the encoder at once (the cook's cap on basis texture assets in
 * flight). Batches are at most what waits, and a basisu start (~20 ms of CPU) is worth ~15 small
 * textures, so small textures need many waiting; their memory is bounded by the texture budget.
 */
export const TEXTURES_IN_FLIGHT = 2048;

/** Wait at most this long for a batch to fill while other runs are going. */
const LINGER_MS = 15;
/**
 * While other runs go, a batch is worth a process start from this many estimated milliseconds of
 * basisu work (a start is ~20 ms of CPU: ~6%).
 */
const MIN_BATCH_MS = 300;
/** What starting basisu costs whatever it encodes (its tables): ~20-25 ms of CPU here. */
const START_MS = 25;
/** Until a group's runs have been timed: about ETC1S with mips on this 2-core machine. */
const DEFAULT_MS_PER_UNIT = 0.0004;
/** Keep one run bounded: its temp files, its timeout and the work lost when it fails. */
const MAX_BATCH_PIXELS = 16 * 1024 * 1024;
const MAX_BATCH_FILES = 1024;
/** basisu's cost per file beyond its pixels (~1.4 ms of ETC1S at 16x16, as ~4K pixels of a large one). */
const FILE_COST_PIXELS = 4096;

/** A request's cost in units of one pixel of basisu work. */
function jobUnits(job: Job): number {
  return job.pixels + FILE_COST_PIXELS;
}
/** A group whose oldest request waited this long is served before bigger groups. */
const STARVE_MS = 1000;
/** Inputs and outputs of textures up to this many pixels are written and read synchronously. */
const SYNC_IO_PIXELS = 128 * 128;

export class BasisuBatcher {
  private readonly groups = new Map<string, Group>();
  private running = 0;
  private readonly runners: number;
  private readonly slots: Semaphore;
  private timer: NodeJS.Timeout | undefined;
  private scheduled = false;
  private nextId = 0;
  private readonly active = new Set<Active>();
  /** Batches split off when all runners were idle, handed out in order before anything else (see plan). */
  private planned: Array<{ group: Group; jobs: Job[] }> = [];
  /** A prepareAhead turn is scheduled. */
  private preparing = false;
  /** The work folder of this batcher's inputs and outputs, made on first use. */
  private dir: string | undefined;
  /** basisu's environment: ours with its malloc settings (see basisuEnv). */
  private readonly env = basisuEnv();

  constructor(
    readonly exe: string,
    private readonly opts: BasisuBatcherOptions,
  ) {
    this.slots = opts.slots ?? childSlots;
    this.runners = this.slots.capacity;
  }

  /** Requests waiting for a run. */
  get pending(): number {
    let n = 0;
    for (const g of this.groups.values()) n += g.jobs.length;
    for (const b of this.planned) n += b.jobs.length;
    return n;
  }

  /**
   * Encode one RGBA8 image to KTX2 bytes. Rejects with COOK_FAILED naming `file` when basisu
   * failed twice, or EncoderUnavailableError when it cannot be started. `retry`: a run with this
   * texture failed already (its PNG given to basisu): this is its run alone, and the last.
   */
  encode(image: MipLevel, enc: Ktx2Encoding, file: string, retry = false): Promise<Uint8Array> {
    return this.request({ image }, image.width, image.height, enc, file, retry ? 2 : 1);
  }

  /**
   * Encode a PNG that basisu reads itself, so the request can be made before (or without) our
   * own decode. Only for PNGs basisu reads to the same RGBA8 as decodeImage (the caller checks:
   * see cookTexture); the KTX2 is then byte-identical. A failed run rejects with
   * {@link PngInputFailedError} and is not retried; EncoderUnavailableError as {@link encode}.
   */
  encodePng(png: Uint8Array, width: number, height: number, enc: Ktx2Encoding, file: string): Promise<Uint8Array> {
    return this.request({ png }, width, height, enc, file, 1);
  }

  private request(input: { image: MipLevel } | { png: Uint8Array }, width: number, height: number, enc: Ktx2Encoding, file: string, attempt: number): Promise<Uint8Array> {
    // A group per flag set; the settings are the batcher's, so the encoding alone names it.
    const key = `${enc.format} ${enc.srgb} ${enc.normalMap} ${enc.generateMips}`;
    let group = this.groups.get(key);
    if (!group) {
      group = { args: basisuArgs(enc, this.opts), jobs: [], msPerUnit: DEFAULT_MS_PER_UNIT };
      this.groups.set(key, group);
    }
    const pixels = width * height * (enc.generateMips ? 4 / 3 : 1);
    const ext = 'png' in input ? 'png' : 'tga';
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      let written: Promise<void> | undefined;
      try {
        if (!('png' in input)) written = this.writeInput(id, input.image, pixels);
      } catch (e) {
        reject(errors.ioFailed(this.dir ?? encoderTempRoot(), 'write encoder input', e));
        return;
      }
      const job: Job = { id, ext, written, file, pixels, attempt, since: performance.now(), resolve, reject };
      if ('png' in input) {
        job.png = input.png;
        // While runners run, written now, so the batch it joins starts without writing anything.
        // With all runners idle (a burst), when its batch is handed out: see prepare.
        if (this.running > 0 && !this.prepare(job)) return;
      }
      if (written) {
        // Our own temp file could not be written: not the encoder's fault, not worth a run.
        written.catch((e) => {
          const at = group.jobs.indexOf(job);
          if (at >= 0) group.jobs.splice(at, 1);
          this.cleanUp(job);
          reject(errors.ioFailed(this.dir!, 'write encoder input', e));
        });
      }
      group.jobs.push(job);
      this.schedule();
    });
  }

  /** Write a request's input now; small ones synchronously (the promise API costs more main-thread time than the write). */
  private writeInput(id: number, image: MipLevel, pixels: number): Promise<void> | undefined {
    if (pixels <= SYNC_IO_PIXELS) {
      this.writeWorkFileSync(`${id}.tga`, rgbaToTga(image, true));
      return undefined;
    }
    const tga = rgbaToTga(image);
    const dir = this.workDir(!fs.existsSync(this.workDir()));
    return fsp.writeFile(`${dir}/${id}.tga`, tga);
  }

  /**
   * Check and write a PNG request's input (once; true when it is ready). A PNG that is not
   * well-formed to the last byte is not given to basisu (libpng tolerates some that crash basisu's
   * reader, and a crash fails the whole batch): PngInputFailedError, so the caller decodes it.
   * With all runners idle, requests are not prepared when made but when their batch is handed out
   * and, for the batches planned to follow, in the turns after: a burst of 1,500 small PNGs took
   * ~50 us each to check and write, all before the first basisu could start.
   */
  private prepare(job: Job): boolean {
    const png = job.png;
    if (png === undefined) return true;
    job.png = undefined;
    try {
      checkPngWellFormed(png);
    } catch (e) {
      job.reject(new PngInputFailedError(`not given to basisu: ${(e as Error).message}`, false));
      return false;
    }
    try {
      // Synchronously: a PNG is compressed (a 2048x2048 source is a few MiB at most) and the work
      // folder is on tmpfs, while an asynchronous write would wait in libuv's pool behind the image
      // decodes that run there meanwhile, delaying the first basisu start.
      this.writeWorkFileSync(`${job.id}.png`, png);
    } catch (e) {
      job.reject(errors.ioFailed(this.dir ?? encoderTempRoot(), 'write encoder input', e));
      return false;
    }
    return true;
  }

  /** Prepare the next planned batch whose inputs are not written yet, one batch a turn, until none is left. */
  private prepareAhead(): void {
    if (this.preparing) return;
    const next = this.planned.find((b) => b.jobs.some((j) => j.png !== undefined));
    if (!next) return;
    this.preparing = true;
    setImmediate(() => {
      this.preparing = false;
      next.jobs = next.jobs.filter((j) => this.prepare(j));
      this.prepareAhead();
    });
  }

  /** Write an input file into the work folder now; when the folder was removed under us (a temp cleaner), make a new one, once. */
  private writeWorkFileSync(name: string, data: Uint8Array): void {
    try {
      fs.writeFileSync(`${this.workDir()}/${name}`, data);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      fs.writeFileSync(`${this.workDir(true)}/${name}`, data);
    }
  }

  private workDir(renew = false): string {
    if (this.dir === undefined || renew) {
      this.dir = makeProcessTempDir(encoderTempRoot(), TEMP_PREFIX);
    }
    return this.dir;
  }

  /** Pump once after the current tick, so requests made together are batched together. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    const busy = this.running;
    // One clock reading for the whole pump: the batches it hands out are split as of the same
    // instant. Read per batch, a stall between two of them (a loaded machine, a GC) made the first
    // batch look nearly done, so the second took half its share and a third process followed.
    const now = performance.now();
    if (busy === 0 && this.planned.length === 0) this.plan();
    while (this.running < this.runners) {
      const next = this.planned.shift() ?? this.nextBatch(busy, now);
      if (!next) break;
      next.jobs = next.jobs.filter((j) => this.prepare(j));
      if (!next.jobs.length) continue;
      this.running++;
      const act: Active = { group: next.group, units: next.jobs.reduce((n, j) => n + jobUnits(j), 0), started: now };
      this.active.add(act);
      let freed = false;
      const free = (ms?: number) => {
        if (freed) return;
        freed = true;
        this.active.delete(act);
        // Learn how fast basisu goes with these flags on this machine (a run that failed says nothing).
        // The start is not per texture: counted in, a batch of few textures made the group look slow.
        if (ms !== undefined && act.units > 0) act.group.msPerUnit = 0.5 * act.group.msPerUnit + 0.5 * (Math.max(0, ms - START_MS) / act.units);
        this.running--;
        this.pump();
      };
      void this.run(next.group, next.jobs, free).finally(() => free());
    }
    this.prepareAhead();
    this.armTimer();
  }

  /**
   * All runners idle (a burst of requests, a lone save): split each waiting group evenly over the
   * runners, by its own textures' estimated cost, and queue the parts biggest group first; the
   * runners take them in that order, as basisu's own command line is run over split file lists.
   * Splitting within a group needs no comparison of one group's speed with another's (UASTC vs
   * ETC1S), which the measured speeds got wrong under load: splitting all the work at once by
   * them sent a whole group to one runner and left the other with a tail of small batches
   * (1,500 16x16 in 3 groups: 5-6 processes whose ends were ~8% of the run apart, at load 19).
   * A group worth less than a process start per extra part is split less (or not at all).
   */
  private plan(): void {
    const waiting = [...this.groups.values()].filter((g) => g.jobs.length > 0 && !g.jobs.some((j) => j.attempt > 1));
    const units = (jobs: Job[]) => jobs.reduce((n, j) => n + jobUnits(j), 0);
    waiting.sort((a, b) => units(b.jobs) * b.msPerUnit - units(a.jobs) * a.msPerUnit);
    for (const g of waiting) {
      const total = units(g.jobs);
      const pixels = g.jobs.reduce((n, j) => n + j.pixels, 0);
      let parts = Math.max(1, Math.min(this.runners, g.jobs.length, Math.floor((total * g.msPerUnit) / START_MS)));
      parts = Math.min(g.jobs.length, Math.max(parts, Math.ceil(g.jobs.length / MAX_BATCH_FILES), Math.ceil(pixels / MAX_BATCH_PIXELS)));
      let from = 0;
      let done = 0;
      for (let k = 1; k <= parts; k++) {
        // Up to the job whose middle passes k / parts of the group's cost.
        let to = from;
        while (to < g.jobs.length && (k === parts || done + jobUnits(g.jobs[to]) / 2 <= (total * k) / parts)) done += jobUnits(g.jobs[to++]);
        if (to === from && from < g.jobs.length) done += jobUnits(g.jobs[to++]);
        if (to > from) this.planned.push({ group: g, jobs: g.jobs.slice(from, to) });
        from = to;
      }
      g.jobs = [];
    }
  }

  /**
   * The batch a free runner should take now, or none (nothing pending, or worth waiting for more).
   * `busy`: runners that were running when this pump began; `now`: when it began.
   */
  private nextBatch(busy: number, now: number): { group: Group; jobs: Job[] } | undefined {
    let biggest: Group | undefined;
    let biggestMs = 0;
    let oldest: Group | undefined;
    let pendingMs = 0;
    for (const g of this.groups.values()) {
      if (!g.jobs.length) continue;
      // Retries run alone, first.
      const retry = g.jobs.findIndex((j) => j.attempt > 1);
      if (retry >= 0) return { group: g, jobs: g.jobs.splice(retry, 1) };
      const ms = g.jobs.reduce((n, j) => n + jobUnits(j), 0) * g.msPerUnit;
      pendingMs += ms;
      if (ms > biggestMs) [biggest, biggestMs] = [g, ms];
      if (!oldest || g.jobs[0].since < oldest.jobs[0].since) oldest = g;
    }
    if (!biggest || !oldest) return undefined;
    // The group with the most work waiting, so groups fill up between their runs and each process
    // start is spread over more textures (oldest-first split a cook's three groups into three times
    // the processes); a group whose oldest request has waited STARVE_MS goes first.
    const best = now - oldest.jobs[0].since >= STARVE_MS ? oldest : biggest;
    const jobs = best.jobs;
    // Aim for all runners to finish together: this one takes its share of all the work left, the
    // rest of the running batches included. When runners were idle (a burst of requests, a lone
    // save) that splits what waits evenly over them. While others run, never less than
    // MIN_BATCH_MS, so the halving shares at the end of a cook do not become a string of
    // processes of a few textures each (a start costs ~20 ms).
    let runningMs = 0;
    for (const a of this.active) runningMs += Math.max(0, START_MS + a.units * a.group.msPerUnit - (now - a.started));
    const share = (pendingMs + runningMs) / this.runners;
    const target = busy > 0 ? Math.max(MIN_BATCH_MS, share) : share;
    let n = 0;
    let ms = 0;
    let pixels = 0;
    while (n < jobs.length && n < MAX_BATCH_FILES) {
      const jobMs = jobUnits(jobs[n]) * best.msPerUnit;
      // Take a texture when at least half of it fits the target (the first always).
      if (n > 0 && (ms + jobMs / 2 > target || pixels + jobs[n].pixels > MAX_BATCH_PIXELS)) break;
      ms += jobMs;
      pixels += jobs[n++].pixels;
    }
    // What this would leave of the group, if it costs less than starting a process for it, goes
    // along (unless another runner is free to take it now): crumbs at the end of a cook were a
    // run each, a whole start for one texture.
    const lastFree = this.running + 1 >= this.runners;
    let rest = lastFree ? 0 : Infinity;
    let restPixels = 0;
    for (let i = n; i < jobs.length && rest < START_MS; i++) {
      rest += jobUnits(jobs[i]) * best.msPerUnit;
      restPixels += jobs[i].pixels;
    }
    if (rest < START_MS && jobs.length <= MAX_BATCH_FILES && pixels + restPixels <= MAX_BATCH_PIXELS) {
      ms += rest;
      n = jobs.length;
    }
    const worth = ms >= MIN_BATCH_MS || this.running === 0 || now - jobs[0].since >= LINGER_MS;
    if (!worth) return undefined;
    return { group: best, jobs: jobs.splice(0, n) };
  }

  /** While requests wait for a batch to fill, make sure someone looks again after LINGER_MS. */
  private armTimer(): void {
    if (this.timer || this.pending === 0 || this.running >= this.runners) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.pump();
    }, LINGER_MS);
    this.timer.unref?.();
  }

  /** One basisu process over `jobs`; `free` is called as soon as it has exited, before its outputs are read. */
  private async run(group: Group, jobs: Job[], free: (ms?: number) => void): Promise<void> {
    if (jobs.some((j) => j.written)) {
      // A job whose write failed has been rejected already (see encode): run the others.
      const settled = await Promise.allSettled(jobs.map((j) => j.written));
      jobs = jobs.filter((_, i) => settled[i].status === 'fulfilled');
      for (const j of jobs) j.written = undefined;
      if (!jobs.length) return;
    }
    const dir = this.workDir();
    const pixels = jobs.reduce((n, j) => n + j.pixels, 0);
    const timeoutMs = Math.round(this.opts.timeoutMs * Math.max(1, pixels / 1e6));
    let run: ChildRun;
    try {
      run = await runChild(this.exe, [...jobs.map((j) => `${j.id}.${j.ext}`), '-output_path', dir, ...group.args], { cwd: dir, env: this.env, timeoutMs, threads: 1, slots: this.slots });
    } catch (e) {
      free();
      const why = `basisu could not start: ${(e as Error).message}`;
      for (const j of jobs) {
        this.cleanUp(j);
        j.reject(new EncoderUnavailableError(why));
      }
      return;
    }
    const ok = run.code === 0 && !run.timedOut;
    // The next batch starts on this core while this one's outputs are read.
    free(ok ? run.ms : undefined);
    const why = ok ? 'basisu exited with 0 but wrote no output for it' : describeChildFailure(this.exe, run, { timeoutMs, name: 'basisu' });
    await Promise.all(
      jobs.map(async (j) => {
        const out = `${dir}/${j.id}.ktx2`;
        const bytes = !ok ? undefined : j.pixels <= SYNC_IO_PIXELS ? readIfThere(out) : await fsp.readFile(out).catch(() => undefined);
        if (bytes) {
          this.cleanUp(j);
          j.resolve(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
        } else this.failed(group, j, why);
      }),
    );
  }

  /** Remove a finished request's input and output. */
  private cleanUp(job: Job): void {
    if (this.dir === undefined) return;
    for (const ext of [job.ext, 'ktx2']) {
      try {
        fs.unlinkSync(`${this.dir}/${job.id}.${ext}`);
      } catch {
        // never written, or already gone
      }
    }
  }

  /** First failure: back to the front of the queue, to run alone. Second: the asset fails. */
  private failed(group: Group, job: Job, why: string): void {
    if (job.ext === 'png') {
      this.cleanUp(job);
      job.reject(new PngInputFailedError(why, true));
      return;
    }
    if (job.attempt === 1) {
      job.attempt = 2;
      // A partial output of the failed run must not pass for the retry's.
      if (this.dir !== undefined) fs.rmSync(path.join(this.dir, `${job.id}.ktx2`), { force: true });
      group.jobs.unshift(job);
      this.schedule();
      return;
    }
    this.cleanUp(job);
    job.reject(errors.cookFailed(job.file, `${why} (retried once)`));
  }
}

const TEMP_PREFIX = 'lumina-basisu-';
let tempRoot: string | undefined;
/**
 * Where encoder inputs and outputs go: /dev/shm (tmpfs) when there is one, since creating a file
 * there costs a twentieth of what it costs on ext4 (1,500 small TGAs: 36 ms against 612 ms of
 * CPU here), else the OS temp folder. makeProcessTempDir sweeps the folders of processes that are
 * gone (a kill -9), so they cannot pile up in memory.
 */
function encoderTempRoot(): string {
  if (tempRoot !== undefined) return tempRoot;
  tempRoot = os.tmpdir();
  if (process.platform === 'linux') {
    try {
      fs.accessSync('/dev/shm', fs.constants.W_OK);
      tempRoot = '/dev/shm';
    } catch {
      // no tmpfs here
    }
  }
  return tempRoot;
}

/** Outputs of small textures are read into this first (most fit), then copied out at their size. */
const readScratch = Buffer.allocUnsafe(64 * 1024);

/** A small output's bytes, or undefined when there is none; open, read, close (readFileSync also stats). */
function readIfThere(file: string): Uint8Array | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const n = fs.readSync(fd, readScratch, 0, readScratch.length, 0);
    if (n < readScratch.length) return new Uint8Array(readScratch.subarray(0, n));
    return fs.readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

const LITTLE_ENDIAN = os.endianness() === 'LE';
/** Small inputs are written synchronously, so one scratch buffer serves them all. */
let scratch = new Uint8Array(0);

/**
 * Uncompressed 32-bit TGA, top-left origin: the cheapest input basisu reads (no inflate). With
 * `reuse`, the bytes are in a scratch buffer the next call overwrites (for synchronous writes).
 */
export function rgbaToTga(image: MipLevel, reuse = false): Uint8Array {
  const { width, height, data } = image;
  // The 18-byte header starts at offset 2 so the pixels start 4-byte aligned: BGRA from RGBA is
  // then one 32-bit operation per pixel.
  const size = 20 + data.length;
  let out: Uint8Array;
  if (reuse) {
    if (scratch.length < size) scratch = new Uint8Array(Math.max(size, 2 * scratch.length));
    out = scratch;
    out.fill(0, 0, 20);
  } else out = new Uint8Array(size);
  out[4] = 2; // uncompressed true-colour
  out[14] = width & 0xff;
  out[15] = width >> 8;
  out[16] = height & 0xff;
  out[17] = height >> 8;
  out[18] = 32;
  out[19] = 0x28; // 8 alpha bits, top-left origin
  const pixels = data.length >> 2;
  if (data.byteOffset % 4 === 0 && LITTLE_ENDIAN) {
    const src = new Uint32Array(data.buffer, data.byteOffset, pixels);
    const dst = new Uint32Array(out.buffer, out.byteOffset + 20, pixels);
    for (let i = 0; i < pixels; i++) {
      const v = src[i];
      dst[i] = (v & 0xff00ff00) | ((v & 0xff) << 16) | ((v >>> 16) & 0xff);
    }
  } else {
    for (let i = 0, o = 20; i < data.length; i += 4, o += 4) {
      out[o] = data[i + 2];
      out[o + 1] = data[i + 1];
      out[o + 2] = data[i];
      out[o + 3] = data[i + 3];
    }
  }
  return out.subarray(2, size);
}
