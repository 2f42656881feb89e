/**
 * The daemon's current errors, as the status page shows them: each with the time it was raised
 * and its file, and gone once that file is fixed. It follows the progress bus:
 *
 * - an ERROR event records (or refreshes) the error under its file;
 * - a COOK_END for a file that did not fail clears that file's errors (the full cook re-cooked it),
 *   unless the same file raised an error earlier in this batch or cook;
 * - when a batch of saves settles, every file in it that raised no error during the batch is
 *   cleared: the save fixed it, whether or not the cook reaches it (a corrupt package that is not
 *   cooked is only ever read by the registry).
 *
 * Errors without a file (a config problem) stay until `clearUnfiled()` (a full cook that is ok).
 *
 * A condition rather than a file's content (WATCH_FAILED: a folder the daemon cannot watch) is not
 * fixed by a save or a cook: it stays until `resolve()` says the condition has ended.
 */
import path from 'node:path';
import type { LuminaLog } from '../src/errors.js';
import type { ProgressBus, ProgressEvent } from '../src/log/events.js';

export type BoardError = LuminaLog & { time: string };

const MAX_ERRORS = 200;
/** Codes that only resolve() clears. */
const CONDITIONS: ReadonlySet<string> = new Set(['WATCH_FAILED']);

export class ErrorBoard {
  /** Keyed by absolute file (or `code:message` for errors without one); insertion order is age. */
  private readonly byKey = new Map<string, BoardError>();
  /** Files that raised an error during the current batch or full cook: not cleared by it. */
  private raisedInBatch = new Set<string>();
  private readonly off: () => void;

  constructor(
    bus: ProgressBus,
    private readonly projectDir: () => string,
  ) {
    this.off = bus.on((e) => this.onEvent(e));
  }

  private fileKey(file: string): string {
    return path.resolve(this.projectDir(), file);
  }

  private onEvent(e: ProgressEvent): void {
    // A unit of work is a batch, or a full cook up to the end of its cook phase (its plan's
    // problems come before its first COOK_END).
    if (e.type === 'BATCH_START' || e.type === 'BATCH_END' || (e.type === 'END' && e.phase === 'cook')) this.raisedInBatch = new Set();
    else if (e.type === 'ERROR') this.add(e.log);
    else if (e.type === 'COOK_END' && e.status !== 'failed') {
      const key = this.fileKey(e.file);
      if (!this.raisedInBatch.has(key)) this.deleteFixed(key);
    }
  }

  /** Drop `key`'s error: its file was fixed (a condition is not fixed that way). */
  private deleteFixed(key: string): void {
    const e = this.byKey.get(key);
    if (e && !CONDITIONS.has(e.code)) this.byKey.delete(key);
  }

  private add(log: LuminaLog): void {
    const key = log.file ? this.fileKey(log.file) : `${log.code}:${log.message}`;
    if (log.file) this.raisedInBatch.add(key);
    this.byKey.delete(key); // re-insert: newest last
    this.byKey.set(key, { ...log, ...(log.file ? { file: key } : {}), time: new Date().toISOString() });
    for (const k of this.byKey.keys()) {
      if (this.byKey.size <= MAX_ERRORS) break;
      this.byKey.delete(k);
    }
  }

  /** A batch of saved `files` is done: clear the ones that raised nothing during it. */
  settleBatch(files: readonly string[]): void {
    for (const f of files) {
      const key = this.fileKey(f);
      if (!this.raisedInBatch.has(key)) this.deleteFixed(key);
    }
    // A folder removal fixes (removes) everything under it.
    for (const f of files) {
      const prefix = this.fileKey(f) + path.sep;
      for (const k of this.byKey.keys()) if (k.startsWith(prefix) && !this.raisedInBatch.has(k)) this.deleteFixed(k);
    }
  }

  /** A condition (`code`) has ended for `file`, or for every file when none is given. */
  resolve(code: string, file?: string): void {
    for (const [k, v] of this.byKey) if (v.code === code && (file === undefined || k === this.fileKey(file))) this.byKey.delete(k);
  }

  /** Forget errors that name no file. */
  clearUnfiled(): void {
    for (const [k, v] of this.byKey) if (!v.file) this.byKey.delete(k);
  }

  /** Current errors, oldest first. */
  list(): BoardError[] {
    return [...this.byKey.values()];
  }

  close(): void {
    this.off();
  }
}
