/**
 * The dev patch pak, `Saved/Paks/Dev.pak`: what the daemon changed since the chunk paks were last
 * written, one entry per changed path plus a tombstone per path that stopped shipping. It mounts
 * one priority above the chunk paks, so the runtime (and MountedPaks) sees the edit at once.
 *
 * Why not rewrite the chunk pak per edit: a chunk of 10k assets is tens of MiB and ~10k files to
 * copy, far over the 150 ms budget; the dev pak holds only the handful of entries edited in a
 * session. The daemon folds it back into the chunk paks with a full cook when idle, then deletes it.
 *
 * It is written with the streaming pak writer (temp + fsync + rename), so a kill at any moment
 * leaves the previous Dev.pak or the new one under the final name.
 *
 * It is a patch pak (flag 0x1): it holds tombstones, which FORMAT.md allows only in patches. Its
 * base TOC hash is that of the chunk paks on disk when it is written (FORMAT.md: one base, its TOC
 * hash; several, the xxh64 of their TOC hashes in mount order, priority ascending then file name).
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { DEV_PAK_NAME } from '../cook/writeChunkPaks.js';
import { errors } from '../src/errors.js';
import { xxh64 } from '../src/util/hash.js';
import { writePak, type PakSource } from '../pak/writePak.js';
import { comparePathBytes, entryPathUnder, PAK_FOOTER_SIZE, parseFooter } from '../pak/pakFormat.js';

export { DEV_PAK_NAME };

/** What one full virtual path resolves to in the dev pak. */
export type DevEntry = { kind: 'cooked' | 'file'; file: string } | { kind: 'bytes'; data: Uint8Array } | { kind: 'tombstone' };

export interface DevPakOptions {
  paksDir: string;
  /** The project's pak mount point (config.paks.mountPoint). */
  mountPoint: string;
  /** config.paks.priority + 1: above every chunk pak. */
  priority: number;
  level?: number;
}

export class DevPak {
  readonly file: string;
  private readonly entries = new Map<string, DevEntry>();
  private dirty = false;
  /** The chunk paks this patches (all at the project's pak priority). */
  private basePaks: string[] = [];

  constructor(private readonly opts: DevPakOptions) {
    this.file = path.join(opts.paksDir, DEV_PAK_NAME);
  }

  get size(): number {
    return this.entries.size;
  }

  has(virtualPath: string): boolean {
    return this.entries.has(virtualPath);
  }

  /** Ship `file` (a cooked LCKD file or a plain file) at `virtualPath`. */
  put(virtualPath: string, entry: DevEntry): void {
    this.entries.set(virtualPath, entry);
    this.dirty = true;
  }

  /** Hide `virtualPath` in every chunk pak below. */
  tombstone(virtualPath: string): void {
    this.put(virtualPath, { kind: 'tombstone' });
  }

  /** The chunk paks (absolute files) the dev pak sits on: its base. */
  setBase(pakFiles: readonly string[]): void {
    this.basePaks = [...pakFiles].sort((a, b) => comparePathBytes(path.basename(a), path.basename(b)));
  }

  /** The base TOC hash of the chunk paks on disk now (read from their footers). */
  private async baseTocHash(): Promise<bigint> {
    const hashes: bigint[] = [];
    for (const file of this.basePaks) {
      let fh: fsp.FileHandle | undefined;
      try {
        fh = await fsp.open(file, 'r');
        const size = (await fh.stat()).size;
        if (size < PAK_FOOTER_SIZE) continue;
        const buf = new Uint8Array(PAK_FOOTER_SIZE);
        await fh.read(buf, 0, PAK_FOOTER_SIZE, size - PAK_FOOTER_SIZE);
        hashes.push(parseFooter(buf, file, size - PAK_FOOTER_SIZE));
      } catch {
        // A chunk pak that is gone or unreadable is not part of the base.
      } finally {
        await fh?.close();
      }
    }
    if (hashes.length === 1) return hashes[0];
    const buf = Buffer.alloc(8 * hashes.length);
    hashes.forEach((h, i) => buf.writeBigUInt64LE(h, 8 * i));
    return xxh64(buf);
  }

  /** Write Dev.pak when anything changed since the last write. Returns true when written. */
  async write(): Promise<boolean> {
    if (!this.dirty) return false;
    const sources: PakSource[] = [];
    for (const [vp, e] of this.entries) {
      const p = entryPathUnder(this.opts.mountPoint, vp);
      if (p === undefined) continue; // outside the project's mount point: the chunk paks cannot hold it either
      sources.push(e.kind === 'tombstone' ? { path: p, kind: 'tombstone' } : e.kind === 'bytes' ? { path: p, kind: 'bytes', data: e.data } : { path: p, kind: e.kind, file: e.file });
    }
    await writePak(this.file, sources, { mountPoint: this.opts.mountPoint, priority: this.opts.priority, level: this.opts.level, patch: { baseTocHash: await this.baseTocHash() } });
    this.dirty = false;
    return true;
  }

  /** Forget every entry and delete Dev.pak: the chunk paks are current again. */
  async clear(): Promise<void> {
    this.entries.clear();
    this.dirty = false;
    try {
      await fsp.rm(this.file, { force: true });
    } catch (e) {
      throw errors.ioFailed(this.file, 'remove', e);
    }
  }
}
