/**
 * Patch paks: given a base release (its manifest only, no old content) and the new full content,
 * write a pak with just the added and changed entries plus tombstones for paths the new content
 * no longer has. It mounts above the base (max base priority + 1), is flagged 0x1, and records the
 * base TOC hash, so base + patch serves exactly the new content.
 */
import fsp from 'node:fs/promises';
import { errors } from '../src/errors.js';
import { createXxh64, hashHex, initHash, xxh64 } from '../src/util/hash.js';
import { readCookedHeader } from '../src/format/cookedPackage.js';
import { SHADER_CACHE_ENTRY } from '../src/format/shaderCache.js';
import { comparePathBytes, entryPathUnder, mountedPath, validateMountPoint, validateVirtualPath } from './pakFormat.js';
import { ReleaseContent } from './releaseContent.js';
import { baseTocHash, type ReleaseManifest } from './releaseManifest.js';
import { sortSources, writePak, type PakSource, type WritePakOptions } from './writePak.js';

export interface PatchSummary {
  file: string;
  /** Full virtual paths, sorted by bytes. */
  added: string[];
  changed: string[];
  removed: string[];
  unchanged: number;
  priority: number;
  baseTocHash: bigint;
  tocHash: bigint;
}

export interface BuildPatchOptions extends Pick<WritePakOptions, 'level' | 'engine' | 'onEntry'> {
  /** The release, read whole (readReleaseManifest) or as its compact content (ReleaseContent.read). */
  base: ReleaseManifest | ReleaseContent;
  /**
   * The NEW full content; paths relative to `mountPoint`. Tombstone sources count as absent. An
   * async iterable (e.g. of walkFiles) is consumed once, without being listed whole.
   */
  entries: readonly PakSource[] | AsyncIterable<PakSource>;
  out: string;
  /** Default "/". */
  mountPoint?: string;
  /**
   * The (rawSize, xxh64) of a source when the caller already knows them (the cook cache recorded
   * them when it wrote the file): such a source is not opened unless it goes into the patch.
   */
  known?: (s: Exclude<PakSource, { kind: 'tombstone' }>) => { rawSize: number; xxh64: bigint } | undefined;
  /**
   * Make a source what it really is before it is hashed or written (the caller listed files without
   * opening them: see collectSources.ts `sourceOf`). Called only for sources `known` does not
   * answer and for those written into the patch.
   */
  resolve?: (s: Exclude<PakSource, { kind: 'tombstone' }>) => Promise<PakSource>;
}

/** (rawSize, xxh64) of a source's raw bytes: a cooked file's header carries both, others are hashed. */
export async function sourceIdentity(s: Exclude<PakSource, { kind: 'tombstone' }>): Promise<{ rawSize: number; xxh64: bigint }> {
  await initHash();
  if (s.kind === 'bytes') return { rawSize: s.data.byteLength, xxh64: xxh64(s.data) };
  if (s.kind === 'cooked') {
    const h = await readCookedHeader(s.file);
    return { rawSize: h.rawSize, xxh64: h.xxh64 };
  }
  let fh: fsp.FileHandle;
  try {
    fh = await fsp.open(s.file, 'r');
  } catch (e) {
    throw errors.ioFailed(s.file, 'open', e);
  }
  try {
    const h = createXxh64();
    const buf = new Uint8Array(4 << 20);
    let rawSize = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.byteLength, rawSize);
      if (bytesRead === 0) break;
      h.update(buf.subarray(0, bytesRead));
      rawSize += bytesRead;
    }
    return { rawSize, xxh64: h.digest() };
  } finally {
    await fh.close();
  }
}

/**
 * Build the patch pak at `opts.out` (atomically) and say what it holds. With `entries` as an async
 * iterable (walkFiles) and `base` as a ReleaseContent, neither side is held whole: what the patch
 * keeps per path is one byte (seen) beside the release's own table.
 */
export async function buildPatchPak(opts: BuildPatchOptions): Promise<PatchSummary> {
  const mountPoint = opts.mountPoint ?? '/';
  validateMountPoint(mountPoint, opts.out);
  const base = opts.base instanceof ReleaseContent ? opts.base : ReleaseContent.of(opts.base);
  const listed = Array.isArray(opts.entries);
  const sources: Iterable<PakSource> | AsyncIterable<PakSource> = listed
    ? sortSources(
        (opts.entries as readonly PakSource[]).filter((s) => s.kind !== 'tombstone'),
        opts.out,
      )
    : (opts.entries as AsyncIterable<PakSource>);
  const added: string[] = [];
  const changed: string[] = [];
  const write: PakSource[] = [];
  const seen = new Uint8Array(base.slotCount);
  // The whole shader cache is compared with the release's whole one (see ReleaseManifest.shaderCache).
  const wholeShaders = base.summary.shaderCache;
  let unchanged = 0;
  for await (const source of sources) {
    if (source.kind === 'tombstone') continue;
    let s = source;
    // A listed array was validated (and checked for repeats) by sortSources.
    if (!listed) validateVirtualPath(s.path, opts.out);
    const full = mountedPath(mountPoint, s.path);
    const slot = base.slot(full);
    if (slot !== undefined) {
      if (seen[slot]) throw errors.pakPathInvalid(opts.out, s.path, 'is listed twice');
      seen[slot] = 1;
    }
    const shaders = full === `/${SHADER_CACHE_ENTRY}` && wholeShaders ? wholeShaders : undefined;
    if (slot === undefined && !shaders) {
      added.push(full);
      write.push(opts.resolve ? await opts.resolve(s) : s);
      continue;
    }
    const known = opts.known?.(s);
    let resolved = false;
    if (!known && opts.resolve) {
      s = (await opts.resolve(s)) as typeof s;
      resolved = true;
    }
    const now = known ?? (await sourceIdentity(s));
    const same = shaders ? shaders.rawSize === now.rawSize && shaders.xxh64 === hashHex(now.xxh64) : base.rawSize(slot!) === now.rawSize && base.xxh64(slot!) === now.xxh64;
    if (same) {
      unchanged++;
      continue;
    }
    changed.push(full);
    write.push(!resolved && opts.resolve ? await opts.resolve(s) : s);
  }
  const removed: string[] = [];
  for (const [p, slot] of base.served()) if (!seen[slot]) removed.push(p);
  removed.sort(comparePathBytes);
  for (const full of removed) {
    const rel = entryPathUnder(mountPoint, full);
    if (rel === undefined) {
      throw errors.usage(`"${full}" was removed but lies outside the patch mount point "${mountPoint}"`, 'build the patch with mount point "/"');
    }
    write.push({ path: rel, kind: 'tombstone' });
  }
  const priority = Math.max(...base.summary.paks.map((p) => p.priority)) + 1;
  const baseHash = await baseTocHash(base.summary);
  const result = await writePak(opts.out, write, {
    mountPoint,
    priority,
    patch: { baseTocHash: baseHash },
    level: opts.level,
    engine: opts.engine,
    onEntry: opts.onEntry,
  });
  // Sources in any order (an iterable need not be sorted) still give sorted lists.
  added.sort(comparePathBytes);
  changed.sort(comparePathBytes);
  return { file: opts.out, added, changed, removed, unchanged, priority, baseTocHash: baseHash, tocHash: result.tocHash };
}
