/**
 * A set of mounted paks plus an optional loose-file overlay folder, resolved the way the runtime
 * does it (FORMAT.md): the overlay first, then the paks from the highest priority down, where a
 * tombstone hides the path in every pak below it. Among paks of equal priority the one mounted
 * later wins. The pak side is resolved once at mount; the overlay is looked up on each read so an
 * edited loose file shows at once.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { errors } from '../src/errors.js';
import { TEMP_MARKER } from '../src/util/atomicWrite.js';
import { PakReader } from './PakReader.js';
import { comparePathBytes, mountedPath, priorityOrder, validateVirtualPath, type PakEntry } from './pakFormat.js';
import { readAt } from '../src/util/readAt.js';

/** Bytes per window when an overlay file is streamed. */
const OVERLAY_WINDOW = 4 << 20;

export interface MountOptions {
  /** Loose files here win over every pak: `/Game/X.lasset` is `<overlayDir>/Game/X.lasset`. */
  overlayDir?: string;
}

export type Resolved =
  | { source: 'overlay'; path: string; file: string; rawSize: number }
  | { source: 'pak'; path: string; pak: PakReader; entry: PakEntry; rawSize: number };

interface PakHit {
  pak: PakReader;
  entry: PakEntry;
}

export class MountedPaks {
  /** Full virtual path -> the winning pak entry, or null when a tombstone hides it. */
  private readonly resolved = new Map<string, PakHit | null>();
  readonly overlayDir?: string;

  private constructor(
    /** Highest priority first. */
    readonly paks: readonly PakReader[],
    overlayDir: string | undefined,
  ) {
    if (overlayDir !== undefined) this.overlayDir = path.resolve(overlayDir);
    for (const pak of paks) {
      for (const entry of pak.entries) {
        const full = mountedPath(pak.toc.mountPoint, entry.path);
        if (this.resolved.has(full)) continue;
        this.resolved.set(full, entry.method === 2 ? null : { pak, entry });
      }
    }
  }

  /** Open `pakFiles` (any order: priority comes from each TOC) and resolve them. */
  static async mount(pakFiles: readonly string[], opts: MountOptions = {}): Promise<MountedPaks> {
    const opened: PakReader[] = [];
    try {
      for (const f of pakFiles) opened.push(await PakReader.open(f));
    } catch (e) {
      await Promise.all(opened.map((p) => p.close()));
      throw e;
    }
    const order = priorityOrder(opened.map((p) => ({ priority: p.toc.priority })));
    return new MountedPaks(
      order.map((i) => opened[i]),
      opts.overlayDir,
    );
  }

  /** The overlay file for a virtual path, guarded so no path (or symlink) reaches outside the folder. */
  private async overlayFile(p: string): Promise<{ file: string; size: number } | undefined> {
    if (this.overlayDir === undefined) return undefined;
    const file = path.join(this.overlayDir, ...p.slice(1).split('/'));
    const rel = path.relative(this.overlayDir, file);
    if (rel.startsWith('..') || path.isAbsolute(rel)) throw errors.pakPathInvalid(this.overlayDir, p, 'escapes the overlay folder');
    let st: fs.Stats;
    try {
      st = await fsp.stat(file);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      throw errors.ioFailed(file, 'stat', e);
    }
    if (!st.isFile()) return undefined;
    const [real, root] = await Promise.all([fsp.realpath(file), fsp.realpath(this.overlayDir)]);
    const realRel = path.relative(root, real);
    if (realRel.startsWith('..') || path.isAbsolute(realRel)) throw errors.pakPathInvalid(this.overlayDir, p, 'links outside the overlay folder');
    return { file, size: st.size };
  }

  /** Where `p` comes from, or undefined when no layer has it (or a tombstone hides it). */
  async resolve(p: string): Promise<Resolved | undefined> {
    validateVirtualPath(p, this.overlayDir ?? '<mount>');
    const loose = await this.overlayFile(p);
    if (loose) return { source: 'overlay', path: p, file: loose.file, rawSize: loose.size };
    const hit = this.resolved.get(p);
    if (!hit) return undefined;
    return { source: 'pak', path: p, pak: hit.pak, entry: hit.entry, rawSize: hit.entry.rawSize };
  }

  /** The pak entry that serves `p` when the overlay does not (ignores the overlay). */
  pakEntry(p: string): PakHit | undefined {
    return this.resolved.get(p) ?? undefined;
  }

  private async need(p: string): Promise<Resolved> {
    const r = await this.resolve(p);
    if (r === undefined) throw errors.pakEntryNotFound(this.paks.map((k) => k.file).join(', ') || '<mount>', p);
    return r;
  }

  async exists(p: string): Promise<boolean> {
    return (await this.resolve(p)) !== undefined;
  }

  /** The whole content of `p`. */
  async read(p: string): Promise<Uint8Array> {
    const r = await this.need(p);
    if (r.source === 'pak') return r.pak.readEntry(r.entry.path);
    try {
      return new Uint8Array(await fsp.readFile(r.file));
    } catch (e) {
      throw errors.ioFailed(r.file, 'read', e);
    }
  }

  /**
   * The content of `p` in windows of up to 4 MiB, so any size streams in bounded memory. From a
   * pak the entry hash is checked after the last window (see PakReader.readChunks).
   */
  async *chunks(p: string): AsyncGenerator<Uint8Array, void, undefined> {
    const r = await this.need(p);
    if (r.source === 'pak') {
      yield* r.pak.readChunks(r.entry.path);
      return;
    }
    let fh: fsp.FileHandle;
    try {
      fh = await fsp.open(r.file, 'r');
    } catch (e) {
      throw errors.ioFailed(r.file, 'open', e);
    }
    try {
      for (;;) {
        const buf = new Uint8Array(OVERLAY_WINDOW);
        const { bytesRead } = await fh.read(buf, 0, buf.byteLength, null);
        if (bytesRead === 0) return;
        yield buf.subarray(0, bytesRead);
      }
    } catch (e) {
      throw errors.ioFailed(r.file, 'read', e);
    } finally {
      await fh.close();
    }
  }

  /** `length` bytes of `p` from `offset`; from a pak only the covering blocks are inflated. */
  async readRange(p: string, offset: number, length: number): Promise<Uint8Array> {
    const r = await this.need(p);
    if (r.source === 'pak') return r.pak.readRange(r.entry.path, offset, length);
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0 || offset + length > r.rawSize) {
      throw errors.usage(`range ${offset}+${length} is outside "${p}" (${r.rawSize} bytes)`);
    }
    const fh = await fsp.open(r.file, 'r');
    try {
      const buf = new Uint8Array(length);
      return buf.subarray(0, await readAt(fh, buf, offset));
    } finally {
      await fh.close();
    }
  }

  /** Every live virtual path (overlay files included), sorted by bytes. */
  async list(): Promise<string[]> {
    const live = new Set<string>();
    for (const [p, hit] of this.resolved) if (hit) live.add(p);
    if (this.overlayDir !== undefined) for (const p of await walkOverlay(this.overlayDir)) live.add(p);
    return [...live].sort(comparePathBytes);
  }

  /** Live paths served by the paks alone, with their pak entries (for diffs and manifests). */
  pakListing(): Map<string, PakHit> {
    const out = new Map<string, PakHit>();
    for (const [p, hit] of this.resolved) if (hit) out.set(p, hit);
    return out;
  }

  async close(): Promise<void> {
    await Promise.all(this.paks.map((p) => p.close()));
  }
}

/** Virtual paths of the regular files under `root` (skipping temp files and invalid names). */
async function walkOverlay(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string, prefix: string): Promise<void> => {
    let names: fs.Dirent[];
    try {
      names = await fsp.readdir(dir, { withFileTypes: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw errors.ioFailed(dir, 'readdir', e);
    }
    for (const d of names) {
      if (d.name.includes(TEMP_MARKER) || d.name.includes('\\')) continue;
      const p = `${prefix}/${d.name}`;
      if (d.isDirectory()) await walk(path.join(dir, d.name), p);
      else if (d.isFile()) out.push(p);
    }
  };
  await walk(root, '');
  return out;
}
