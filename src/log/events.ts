/**
 * Progress as typed events. The TTY progress bar, the JSON log and the daemon's SSE stream all
 * consume the same events, so they can never disagree about what happened.
 */
import type { LuminaLog } from '../errors.js';

export type ProgressEvent =
  | { type: 'START'; phase: 'scan' | 'cook' | 'pak' | 'patch'; total?: number }
  /** During a scan (at most every 100 ms): files found, how many need reading, how many are read. */
  | { type: 'SCAN_PROGRESS'; files: number; toRead: number; read: number }
  | { type: 'SCAN_END'; assets: number; read: number; cached: number; removed: number; ms: number }
  | { type: 'COOK_START'; asset: string; file: string }
  | {
      type: 'COOK_END';
      asset: string;
      file: string;
      cached: boolean;
      /** cooked, cached, fetched (from a remote cache), verbatim or failed. */
      status?: string;
      /** Why it was (re)cooked: new, output, or the cook key part that changed. */
      reason?: string;
      /** Wall time on this asset. */
      ms?: number;
      bytesIn: number;
      bytesOut: number;
    }
  | { type: 'PAK_WRITTEN'; file: string; chunk: string; entries: number; bytes: number }
  | { type: 'WARNING'; log: LuminaLog }
  | { type: 'ERROR'; log: LuminaLog }
  | { type: 'END'; phase: 'scan' | 'cook' | 'pak' | 'patch'; ms: number; ok: boolean }
  /** The watch daemon: one batch of file changes, from registry update to refreshed paks. */
  | { type: 'BATCH_START'; batch: number; files: number }
  | { type: 'BATCH_END'; batch: number; ms: number; ok: boolean; changed: number; removed: number; cooked: number };

export type ProgressListener = (event: ProgressEvent) => void;

/** A minimal typed emitter; listeners that throw are isolated from the work that emits. */
export class ProgressBus {
  private listeners = new Set<ProgressListener>();

  on(listener: ProgressListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Someone listens: a hot loop can skip building events nobody reads. */
  get listening(): boolean {
    return this.listeners.size > 0;
  }

  emit(event: ProgressEvent): void {
    for (const l of this.listeners) {
      try {
        l(event);
      } catch {
        // A broken consumer (a closed SSE socket, say) must never fail a cook.
      }
    }
  }
}
