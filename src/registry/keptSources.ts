/**
 * Package bytes a cold scan read whole, kept for the cook that follows it (one read per source).
 *
 * A cold scan reads every package start to end to hash it and parse its tables; a first cook then
 * cooks most of them, and each cook worker used to open and read the file again. A scan given a
 * `KeptSources` copies the bytes of each small package it read whole (the same read that gave the
 * record its hash: the bytes and the hash agree by construction) until the byte budget is spent;
 * the cook takes them (`take`) instead of reading the file. Nothing is written and the records and
 * the registry cache are exactly what a scan without it makes.
 *
 * Bounded: at most `budget` bytes, and nothing at all for a scan reading more than `maxFiles`
 * files (a million-asset cold cook keeps its memory for the registry itself). The cook drops what
 * it did not take (`retain`, `clear`).
 */
import type { SourceSink } from './readAsset.js';

/** Kept bytes go into slabs of this size (a buffer per file cost an allocation each, and its own transfer). */
const SLAB = 1 << 20;

export class KeptSources implements SourceSink {
  private readonly files = new Map<string, Uint8Array>();
  private held = 0;
  private off = false;
  private slab = new Uint8Array(0);
  private slabAt = 0;

  /**
   * @param budget most bytes held at once
   * @param maxFiles a scan reading more files than this keeps none
   */
  constructor(
    readonly budget: number,
    readonly maxFiles = 250_000,
  ) {}

  /** Bytes held now. */
  get bytes(): number {
    return this.held;
  }

  /** Files held now. */
  get size(): number {
    return this.files.size;
  }

  /** Whether bytes offered now may be kept (not past `maxFiles`, not cleared). */
  get accepting(): boolean {
    return !this.off;
  }

  /** The scan is about to read `files` files: past `maxFiles`, keep nothing. */
  begin(files: number): void {
    if (files > this.maxFiles) this.off = true;
  }

  /**
   * The whole content of `file`, as the scan just read it: copied (the scan's buffer is reused)
   * into the current slab (a file larger than a slab gets one of its own). Dropped past the budget.
   */
  offer(file: string, whole: Uint8Array): void {
    const n = whole.byteLength;
    if (this.off || this.held + n > this.budget) return;
    const old = this.files.get(file);
    if (old) this.held -= old.byteLength;
    let copy: Uint8Array;
    if (n > SLAB / 4) copy = new Uint8Array(whole);
    else {
      if (this.slabAt + n > this.slab.byteLength) {
        this.slab = new Uint8Array(SLAB);
        this.slabAt = 0;
      }
      copy = this.slab.subarray(this.slabAt, this.slabAt + n);
      copy.set(whole);
      this.slabAt += n;
    }
    this.files.set(file, copy);
    this.held += n;
  }

  /**
   * `offer` for bytes that are already the scan's to keep (a read worker's transferred batch
   * buffer): held as they are, not copied. Dropped past the budget.
   */
  adopt(file: string, whole: Uint8Array): void {
    const n = whole.byteLength;
    if (this.off || this.held + n > this.budget) return;
    const old = this.files.get(file);
    if (old) this.held -= old.byteLength;
    this.files.set(file, whole);
    this.held += n;
  }

  /**
   * The kept bytes of `file` (a view into a slab: copy them before transferring), handed over once
   * (then forgotten here); undefined if none.
   */
  take(file: string): Uint8Array | undefined {
    const b = this.files.get(file);
    if (b === undefined) return undefined;
    this.files.delete(file);
    this.held -= b.byteLength;
    return b;
  }

  /** Keep only these files' bytes (the ones the cook will take). */
  retain(keep: Iterable<string>): void {
    const kept = new Map<string, Uint8Array>();
    let held = 0;
    for (const f of keep) {
      const b = this.files.get(f);
      if (b === undefined) continue;
      kept.set(f, b);
      held += b.byteLength;
    }
    this.files.clear();
    for (const [f, b] of kept) this.files.set(f, b);
    this.held = held;
  }

  /** Forget everything, and keep nothing more. */
  clear(): void {
    this.files.clear();
    this.held = 0;
    this.off = true;
    this.slab = new Uint8Array(0);
  }
}
