/**
 * The chunk pak rebuild of a one-file change: the pak this cook wrote last time, spliced
 * (pak/splicePak.ts), and its listing `<Chunk>.contents.txt` spliced with it (the lines of the
 * changed entries and the first line replaced), instead of writing both from every entry.
 *
 * What the splice needs of the last write is kept beside its seal, in
 * `Intermediates/PakSeals/<Chunk>.splice`: which TOC entry each source became (the sources in
 * writeChunkPaks' order: packages, text assets, AssetRegistry.bin, ShaderCache.bin), a hash of
 * those sources' paths, how the pak compressed what it compressed itself, and the hash and size of
 * the listing written with it:
 *
 *   "LPSP" u32 version, u32 sources, u32 compression id length, u64 TOC hash, u64 paths hash,
 *   u64 listing xxh64, u64 listing size, the compression id (UTF-8), u32 TOC index per source,
 *   u64 xxh64 of everything before it                                        (little-endian)
 *
 * It is used only for the pak of that TOC hash, sources of the same paths, the same compression,
 * and a listing that still hashes as written; anything else (or a splice that gives up) and the
 * pak is written the usual way. No fsync: a lost or stale record only costs the usual way.
 */
import fs from 'node:fs';
import path from 'node:path';
import { commitStaged, discardStaged, stageAtomicFile, tempPathFor, writeFully } from '../src/util/atomicWrite.js';
import { newCheckedFile, openCheckedFile, sealCheckedFile } from '../src/util/checkedFile.js';
import { createXxh64, hashHex, hex8, xxh64 } from '../src/util/hash.js';
import type { PakEntry } from '../pak/pakFormat.js';
import { splicePak } from '../pak/splicePak.js';
import type { PakSeal, PakSource, WritePakResult } from '../pak/writePak.js';
import type { AssetCookResult } from './cookAsset.js';

export const SPLICE_SUFFIX = '.splice';
const MAGIC = 0x5053504c; // "LPSP"
const VERSION = 1;
const HEADER = 48;

/** The listing's second line. */
export const LISTING_COLUMNS = '# method\trawSize\tstoredSize\txxh64\tpath';
const METHOD_NAMES = ['stored', 'deflate', 'tombstone'] as const;

/** One entry's line of a listing. */
export function listingLine(e: PakEntry): string {
  return `${METHOD_NAMES[e.method]}\t${e.rawSize}\t${e.storedSize}\t${hashHex(e.xxh64)}\t${e.path}`;
}

export interface SpliceRecord {
  tocHash: bigint;
  pathsHash: string;
  compression: string;
  listingXxh64: bigint;
  listingSize: number;
  /** The TOC index of each source. */
  order: Uint32Array;
}

export function encodeSplice(r: SpliceRecord): Uint8Array {
  const comp = Buffer.from(r.compression, 'utf8');
  const out = newCheckedFile(MAGIC, VERSION, HEADER + comp.byteLength + 4 * r.order.length);
  out.writeUInt32LE(r.order.length, 8);
  out.writeUInt32LE(comp.byteLength, 12);
  out.writeBigUInt64LE(r.tocHash, 16);
  out.writeBigUInt64LE(BigInt(`0x${r.pathsHash}`), 24);
  out.writeBigUInt64LE(r.listingXxh64, 32);
  out.writeBigUInt64LE(BigInt(r.listingSize), 40);
  comp.copy(out, HEADER);
  const at = HEADER + comp.byteLength;
  Buffer.from(r.order.buffer, r.order.byteOffset, r.order.byteLength).copy(out, at);
  return sealCheckedFile(out);
}

/** A splice record read back; undefined when the bytes are not one (damaged, another version). Requires `initHash()`. */
export function decodeSplice(bytes: Uint8Array): SpliceRecord | undefined {
  const b = openCheckedFile(bytes, MAGIC, VERSION, HEADER, (h) => HEADER + h.readUInt32LE(12) + 4 * h.readUInt32LE(8) + 8);
  if (!b) return undefined;
  const count = b.readUInt32LE(8);
  const compLen = b.readUInt32LE(12);
  const order = new Uint32Array(count);
  const at = HEADER + compLen;
  for (let i = 0; i < count; i++) order[i] = b.readUInt32LE(at + 4 * i);
  return {
    tocHash: b.readBigUInt64LE(16),
    pathsHash: hashHex(b.readBigUInt64LE(24)),
    listingXxh64: b.readBigUInt64LE(32),
    listingSize: Number(b.readBigUInt64LE(40)),
    compression: b.toString('utf8', HEADER, HEADER + compLen),
    order,
  };
}

/** The record of a pak just written from `sources` with `listing`; undefined when writePak did not say where each source went (`tocIndex`). */
export function spliceRecord(res: WritePakResult, sources: readonly PakSource[], pathsHash: string, compression: string, listing: readonly Uint8Array[]): SpliceRecord | undefined {
  const order = res.tocIndex;
  if (order === undefined || order.length !== sources.length) return undefined;
  const h = createXxh64();
  let size = 0;
  for (const b of listing) {
    h.update(b);
    size += b.byteLength;
  }
  return { tocHash: res.tocHash, pathsHash, compression, listingXxh64: h.digest(), listingSize: size, order };
}

/** Temp file + rename, no fsync (see the module comment); a record that cannot be kept is none. */
export function keepQuietly(file: string, data: Uint8Array): void {
  const tmp = tempPathFor(file);
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(tmp, data);
    fs.renameSync(tmp, file);
  } catch {
    fs.rmSync(tmp, { force: true });
    fs.rmSync(file, { force: true });
  }
}

function readSplice(file: string): SpliceRecord | undefined {
  try {
    return decodeSplice(fs.readFileSync(file));
  } catch {
    return undefined;
  }
}


export interface ChunkSpliceInput {
  file: string;
  contents: string;
  spliceFile: string;
  seal: PakSeal;
  pathsHash: string;
  compression: string;
  /** The old pak's self-compressed entries were compressed as this cook would (same compression id, its listing's TOC hash). */
  compressedAlike: boolean;
  level: number;
  sourceCount: number;
  sourceAt(i: number): PakSource;
  /** The packages' GUIDs and the text assets' identities, in source order. */
  packages: readonly string[];
  texts: ReadonlyArray<string | undefined>;
  registryXxh64: bigint;
  shadersXxh64: bigint | undefined;
  results: { get(guid: string): Pick<AssetCookResult, 'cookedXxh64'> | undefined; cookedXxh64Is?(guid: string, hi: number, lo: number): boolean };
  /** The listing's first line for a pak of `count` entries and this TOC hash. */
  header(count: number, tocHash: bigint): string;
}

export interface ChunkSpliceResult {
  seal: PakSeal;
  splice: SpliceRecord;
  size: number;
  entryCount: number;
  reused: number;
  reusedCompressed: number;
}

/** Splice the chunk pak and its listing (see the module comment); undefined when it cannot, with nothing written. */
export async function spliceChunkPak(input: ChunkSpliceInput): Promise<ChunkSpliceResult | undefined> {
  const rec = readSplice(input.spliceFile);
  if (!rec || rec.tocHash !== input.seal.tocHash || rec.pathsHash !== input.pathsHash || rec.compression !== input.compression || rec.order.length !== input.sourceCount) return undefined;
  let oldListing: Buffer;
  try {
    oldListing = fs.readFileSync(input.contents);
  } catch {
    return undefined;
  }
  if (oldListing.byteLength !== rec.listingSize || xxh64(oldListing) !== rec.listingXxh64) return undefined;

  const { packages, texts, results } = input;
  const cookedIs = results.cookedXxh64Is
    ? (guid: string, hi: number, lo: number) => results.cookedXxh64Is!(guid, hi, lo)
    : (guid: string, hi: number, lo: number) => results.get(guid)?.cookedXxh64 === `${hex8(hi)}${hex8(lo)}`;
  const bytesIs = (want: bigint | undefined, hi: number, lo: number) => want !== undefined && want === ((BigInt(hi) << 32n) | BigInt(lo));
  const unchanged = (i: number, cookedHi: number, cookedLo: number, rawHi: number, rawLo: number): boolean => {
    if (i < packages.length) return (cookedHi !== 0 || cookedLo !== 0) && cookedIs(packages[i], cookedHi, cookedLo);
    // Entries the pak compressed itself: the seal says so (no cooked hash), and the same raw bytes compressed alike.
    if (cookedHi !== 0 || cookedLo !== 0 || !input.compressedAlike) return false;
    i -= packages.length;
    if (i < texts.length) return texts[i] !== undefined && texts[i]!.startsWith(`${hex8(rawHi)}${hex8(rawLo)}:`);
    return bytesIs(i === texts.length ? input.registryXxh64 : input.shadersXxh64, rawHi, rawLo);
  };
  let res;
  try {
    res = await splicePak(input.file, input.file, input.seal, { order: rec.order, unchanged, source: (i) => input.sourceAt(i) }, { level: input.level });
  } catch {
    // A changed cooked file that does not match its hash, or cannot be read: the usual way reports (or re-cooks) it.
    return undefined;
  }
  if (!res) return undefined;

  // The listing: the first line for the new TOC, each changed entry's line replaced, the rest as it was.
  const pieces: Buffer[] = [];
  try {
    const firstEnd = oldListing.indexOf(10);
    pieces.push(Buffer.from(`${input.header(res.entryCount, res.tocHash)}\n`, 'utf8'));
    let pos = firstEnd + 1; // start of line 1 (the columns)
    let line = 1;
    let copied = pos;
    for (const { index, entry } of res.changed) {
      // Entry k is line k + 2.
      while (line < index + 2) {
        pos = oldListing.indexOf(10, pos) + 1;
        line++;
      }
      const end = oldListing.indexOf(10, pos) + 1;
      pieces.push(oldListing.subarray(copied, pos), Buffer.from(`${listingLine(entry)}\n`, 'utf8'));
      copied = end;
      pos = end;
      line++;
    }
    pieces.push(oldListing.subarray(copied));
    // The pak and its listing committed together: both fsynced at once, renamed (the pak first), the folder fsynced once.
    const listing = await stageAtomicFile(input.contents, async (fh) => {
      for (const p of pieces) await writeFully(fh, p);
    });
    await commitStaged([res.staged, listing.staged]);
  } catch (e) {
    await discardStaged([res.staged]);
    throw e;
  }
  const h = createXxh64();
  let size = 0;
  for (const p of pieces) {
    h.update(p);
    size += p.byteLength;
  }
  return {
    seal: res.seal,
    splice: { ...rec, tocHash: res.tocHash, listingXxh64: h.digest(), listingSize: size },
    size: res.size,
    entryCount: res.entryCount,
    reused: res.reused,
    reusedCompressed: res.reusedCompressed,
  };
}
