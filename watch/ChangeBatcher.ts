/**
 * Turns a stream of raw watcher events into batches: paths are normalized, events are mapped to
 * create/update/delete, repeats per file are merged, and a quiet period (debounce) closes a batch.
 * Only one batch runs at a time; events that arrive while one runs accumulate for the next one
 * (a rerun flag, as in Rollup's watch.ts), so nothing is lost and nothing runs twice at once.
 */
import path from 'node:path';
import type { Logger } from '../src/log/logger.js';
import { silentLogger } from '../src/log/logger.js';
import { TEMP_MARKER } from '../src/util/atomicWrite.js';

export type RawEventName = 'add' | 'change' | 'unlink' | 'addDir' | 'unlinkDir';
export type ChangeKind = 'create' | 'update' | 'delete';

/** Files the daemon cares about: packages, text assets and their sidecars, shader sources, includes and their sidecars. */
export const WATCHED_EXTENSIONS = ['.lasset', '.rml', '.rcss', '.luau', '.lmeta', '.slang', '.hlsl', '.glsl', '.slangh', '.hlsli', '.glsli', '.shader.json'] as const;

export interface ChangeBatch {
  /** 1, 2, 3... in the order batches run. */
  seq: number;
  /** Absolute, normalized file paths and what happened to each, sorted by path. */
  changes: { file: string; kind: ChangeKind }[];
  /**
   * Folders to re-check whole: removed ones (the files under them that the watcher did not name
   * are gone too) and ones that appeared whole (moved in: the watcher names no file inside).
   */
  dirs: string[];
}

export type BatchHandler = (batch: ChangeBatch) => Promise<void>;

export interface ChangeBatcherOptions {
  /** Quiet time after the last event before a batch closes. */
  debounceMs: number;
  handler: BatchHandler;
  log?: Logger;
}

/** Normalize a path: absolute, resolved, `/` separators (the watcher may report either). */
export function normalizePath(p: string): string {
  const abs = path.resolve(p);
  return path.sep === '/' ? abs : abs.split(path.sep).join('/');
}

/**
 * True for a file name the daemon should ignore: dotfiles (editor swap files, `.DS_Store`), the
 * atomic writer's temp files, and anything that is not a watched extension.
 */
export function isIgnoredFileName(name: string): boolean {
  if (name.startsWith('.') || name.includes(TEMP_MARKER)) return true;
  return !WATCHED_EXTENSIONS.some((ext) => name.endsWith(ext));
}

/**
 * Merge a new event into what is already pending for a file. `undefined` means the two cancel out
 * (a file created and deleted inside one batch never existed as far as the registry knows).
 */
export function mergeKinds(prev: ChangeKind | undefined, next: ChangeKind): ChangeKind | undefined {
  if (prev === undefined) return next;
  if (prev === 'create') return next === 'delete' ? undefined : 'create';
  if (prev === 'delete') return next === 'delete' ? 'delete' : 'update';
  // prev is update: a delete wins, anything else stays an update.
  return next === 'delete' ? 'delete' : 'update';
}

export class ChangeBatcher {
  private pending = new Map<string, ChangeKind>();
  private pendingDirs = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private seq = 0;
  private closed = false;
  private idleWaiters: (() => void)[] = [];
  private readonly log: Logger;

  constructor(private readonly opts: ChangeBatcherOptions) {
    this.log = opts.log ?? silentLogger;
  }

  /** Files waiting for the next batch. */
  get queued(): number {
    return this.pending.size + this.pendingDirs.size;
  }

  /** True while a batch handler runs. */
  get busy(): boolean {
    return this.running !== undefined;
  }

  /** Feed one raw watcher event. Ignored files and events after `close` are dropped. */
  push(event: RawEventName, file: string): void {
    if (this.closed) return;
    const abs = normalizePath(file);
    if (event === 'addDir' || event === 'unlinkDir') {
      this.pendingDirs.add(abs);
    } else {
      if (isIgnoredFileName(path.posix.basename(abs))) return;
      const kind: ChangeKind = event === 'add' ? 'create' : event === 'change' ? 'update' : 'delete';
      const merged = mergeKinds(this.pending.get(abs), kind);
      if (merged === undefined) this.pending.delete(abs);
      else this.pending.set(abs, merged);
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    // A quiet period closes the batch; while a batch runs, the timer only re-arms on completion.
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.kick();
    }, this.opts.debounceMs);
  }

  /** Start a batch now if one is pending and none is running. */
  private kick(): void {
    if (this.running || this.queued === 0) {
      if (!this.running) this.notifyIdle();
      return;
    }
    const changes = [...this.pending].map(([file, kind]) => ({ file, kind })).sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
    const dirs = [...this.pendingDirs].sort();
    this.pending = new Map();
    this.pendingDirs = new Set();
    if (changes.length === 0 && dirs.length === 0) return this.notifyIdle();
    const batch: ChangeBatch = { seq: ++this.seq, changes, dirs };
    this.running = this.opts
      .handler(batch)
      .catch((e: unknown) => {
        // A failing batch is logged and the daemon goes on; the next change retries the files.
        this.log.error({ err: e, batch: batch.seq }, 'batch failed');
      })
      .finally(() => {
        this.running = undefined;
        // Events that arrived meanwhile form the next batch; wait out their quiet time if it is still running.
        if (this.queued > 0 && !this.timer && !this.closed) this.kick();
        else if (this.queued === 0 && !this.timer) this.notifyIdle();
      });
  }

  private notifyIdle(): void {
    if (this.running || this.timer || this.queued > 0) return;
    const w = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of w) resolve();
  }

  /** Run what is pending now instead of waiting for the quiet period. Resolves when idle. */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.kick();
    await this.idle();
  }

  /** Resolves once nothing is pending, no timer is armed and no batch runs. */
  idle(): Promise<void> {
    if (!this.running && !this.timer && this.queued === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Stop accepting events and wait for the in-flight batch, at most `timeoutMs` (then it is
   * abandoned: outputs are written atomically, so an abandoned batch leaves old or new files,
   * never torn ones). Pending, not yet started changes are dropped: the next start re-scans.
   * Resolves true when the in-flight batch finished, false when it was abandoned.
   */
  async close(timeoutMs = 10_000): Promise<boolean> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending.clear();
    this.pendingDirs.clear();
    const running = this.running;
    if (!running) {
      this.notifyIdle();
      return true;
    }
    let t: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      running.then(() => true),
      new Promise<boolean>((resolve) => {
        t = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
    clearTimeout(t);
    return finished;
  }
}
