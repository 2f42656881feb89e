/**
 * The registry cache's journal, `Intermediates/AssetRegistry.journal`: what changed since the
 * snapshot (`AssetRegistry.assetdb`, registryCache.ts) was written, one frame per registry batch,
 * appended as the batch finishes. A daemon save then costs one small append instead of a rewrite
 * of the whole cache (5.5 MB at 50k assets); the snapshot is rewritten only once the journal has
 * grown past a fraction of it (AssetRegistry decides), and loading folds the journal in.
 *
 * Frame (little-endian):
 *   u32 magic `LADJ`, u32 payload length, payload, u64 checksum of the payload (registryCache.ts `checksum`)
 *   payload: u32 length of the upserts, the upserts as one registry cache image
 *            (encodeRegistryCache: its own header, tables and checksum), or 0 and nothing;
 *            u32 deleteCount, per delete u16 length + UTF-8 absolute file path
 *
 * A frame is the unit of a batch: it is there whole (checksum matches) or not at all. A kill while
 * one was being written leaves a torn tail: `readJournal` stops at the first frame that does not
 * check out and says how many bytes it ignored; the caller cuts them off with a warning. Frames
 * before it are kept, so a kill loses at most the batch that was being written, and that batch's
 * files are simply read again (their stat no longer matches the cache).
 *
 * Replaying a journal over a snapshot that already holds its frames is harmless (each frame sets
 * entries to the state of its batch, in order), so a kill between writing a snapshot and emptying
 * the journal loses nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { checksum, decodeRegistryCache, encodeRegistryCache, type CacheEntry, type CacheRecord } from './registryCache.js';

export const JOURNAL_FILE_NAME = 'AssetRegistry.journal';
const FRAME_MAGIC = 0x4a44414c; // 'LADJ'
const FRAME_HEADER = 8;
const FRAME_TRAILER = 8;

/** One batch: entries that are now as given, files whose entries are gone. */
export interface JournalFrame {
  upserts: CacheEntry[];
  deletes: string[];
}

/** One frame holding a batch's changes. */
export function encodeJournalFrame(upserts: readonly CacheRecord[], deletes: readonly string[]): Buffer {
  const image = upserts.length > 0 ? encodeRegistryCache(upserts) : Buffer.alloc(0);
  const paths = deletes.map((d) => Buffer.from(d, 'utf8'));
  const payload = 4 + image.byteLength + 4 + paths.reduce((n, b) => n + 2 + b.byteLength, 0);
  const out = Buffer.allocUnsafe(FRAME_HEADER + payload + FRAME_TRAILER);
  let p = out.writeUInt32LE(FRAME_MAGIC, 0);
  p = out.writeUInt32LE(payload, p);
  p = out.writeUInt32LE(image.byteLength, p);
  p += image.copy(out, p);
  p = out.writeUInt32LE(paths.length, p);
  for (const b of paths) {
    if (b.byteLength > 0xffff) throw new Error(`path of ${b.byteLength} bytes does not fit a journal frame`);
    p = out.writeUInt16LE(b.byteLength, p);
    p += b.copy(out, p);
  }
  out.writeBigUInt64LE(checksum(out.subarray(FRAME_HEADER, FRAME_HEADER + payload)), p);
  return out;
}

export interface JournalRead {
  frames: JournalFrame[];
  /** Bytes of whole, checked frames from the start: where the next append belongs. */
  goodBytes: number;
  /** Why the bytes after `goodBytes` were ignored (a torn or damaged tail), when there are any. */
  tail?: string;
}

/** Parse a journal's bytes: every whole frame up to the first one that does not check out. Never throws. */
export function readJournal(bytes: Buffer, file: string): JournalRead {
  const frames: JournalFrame[] = [];
  let at = 0;
  const stop = (why: string): JournalRead => ({ frames, goodBytes: at, tail: `${why} at offset ${at}; ignored the last ${bytes.byteLength - at} bytes` });
  while (at < bytes.byteLength) {
    if (bytes.byteLength - at < FRAME_HEADER + FRAME_TRAILER) return stop('a frame cut short');
    if (bytes.readUInt32LE(at) !== FRAME_MAGIC) return stop('not a journal frame (bad magic)');
    const payload = bytes.readUInt32LE(at + 4);
    const end = at + FRAME_HEADER + payload;
    if (end + FRAME_TRAILER > bytes.byteLength) return stop('a frame cut short');
    const body = bytes.subarray(at + FRAME_HEADER, end);
    if (checksum(body) !== bytes.readBigUInt64LE(end)) return stop('a frame whose checksum does not match');
    let frame: JournalFrame;
    try {
      frame = decodeFrame(body, file);
    } catch {
      return stop('a frame that does not decode');
    }
    frames.push(frame);
    at = end + FRAME_TRAILER;
  }
  return { frames, goodBytes: at };
}

function decodeFrame(body: Buffer, file: string): JournalFrame {
  let p = 0;
  const imageLength = body.readUInt32LE(p);
  p += 4;
  if (p + imageLength > body.byteLength) throw new Error('upserts run past the frame');
  // A copy: the entries keep their image until thawed, and must not pin the whole journal buffer.
  const upserts = imageLength > 0 ? decodeRegistryCache(Buffer.from(body.subarray(p, p + imageLength)), file) : [];
  p += imageLength;
  const count = body.readUInt32LE(p);
  p += 4;
  const deletes = new Array<string>(count);
  for (let i = 0; i < count; i++) {
    const n = body.readUInt16LE(p);
    p += 2;
    if (p + n > body.byteLength) throw new Error('delete runs past the frame');
    deletes[i] = body.toString('utf8', p, p + n);
    p += n;
  }
  if (p !== body.byteLength) throw new Error('unexplained bytes in the frame');
  return { upserts, deletes };
}

/**
 * Every entry of a registry cache as a load sees it: the snapshot, then the journal beside it
 * folded in (a torn tail ignored). For readers outside the registry (`inspect` naming imports);
 * throws CACHE_INVALID when the snapshot is unusable, and ENOENT when there is none and no journal.
 */
export function readCacheEntries(cacheFile: string): CacheEntry[] {
  const byFile = new Map<string, CacheEntry>();
  let snapshot: Buffer | undefined;
  try {
    snapshot = fs.readFileSync(cacheFile);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  if (snapshot) for (const e of decodeRegistryCache(snapshot, cacheFile)) byFile.set(e.file, e);
  const journalFile = path.join(path.dirname(cacheFile), JOURNAL_FILE_NAME);
  let journal: Buffer | undefined;
  try {
    journal = fs.readFileSync(journalFile);
  } catch (e) {
    if (!snapshot) throw e;
  }
  for (const f of journal ? readJournal(journal, journalFile).frames : []) {
    for (const e of f.upserts) byFile.set(e.file, e);
    for (const file of f.deletes) byFile.delete(file);
  }
  return [...byFile.values()];
}
