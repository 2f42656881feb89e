/**
 * The cooked-package container (FORMAT.md "Cooked package", magic `LCKD`): a cooked package's raw
 * bytes in independent 64 KiB blocks, with the raw size and xxh64 up front so the pak writer can
 * copy the blocks straight into a pak entry without inflating or recompressing them.
 *
 * Method 0 (stored) keeps the blockCount and per-block size fields too: the payload is then the raw
 * bytes, cut into blocks of 65,536 (last shorter), and each block size equals its raw size. One
 * layout for both methods means a reader never special-cases the table.
 */
import fsp from 'node:fs/promises';
import { errors } from '../errors.js';
import { xxh64 } from '../util/hash.js';
import { BLOCK_SIZE, blockCountFor, compressBlocks, inflateBlocks, maxStoredBlockSize, rawBlockSize, type CompressOptions } from './deflateBlocks.js';

export const COOKED_MAGIC = 0x444b434c; // 'LCKD'
export const COOKED_VERSION = 1;
/** The largest cooked package decodeCooked inflates into one buffer (1 GiB). */
export const MAX_DECODED_SIZE = 1 << 30;
/** Fixed part of the header: magic, version, rawSize, xxh64, method, blockSize, blockCount. */
export const COOKED_FIXED_HEADER = 33;

export interface CookedHeader {
  rawSize: number;
  xxh64: bigint;
  method: 0 | 1;
  blockSize: number;
  blockCount: number;
  /** Stored size of each block, in order. */
  blockSizes: number[];
  /** File offset of the first block (the end of the header). */
  dataOffset: number;
  /** Sum of the block sizes: the bytes after the header. */
  storedSize: number;
}

/** Wrap raw cooked-package bytes in an LCKD container (64 KiB DEFLATE blocks, or stored when
 * DEFLATE does not shrink them). Requires `initHash()`. */
export async function encodeCooked(raw: Uint8Array, opts: CompressOptions = {}): Promise<Uint8Array> {
  const { method, blocks } = await compressBlocks(raw, opts);
  const headerSize = COOKED_FIXED_HEADER + 4 * blocks.length;
  let size = headerSize;
  for (const b of blocks) size += b.byteLength;
  const out = new Uint8Array(size);
  const v = new DataView(out.buffer);
  v.setUint32(0, COOKED_MAGIC, true);
  v.setUint32(4, COOKED_VERSION, true);
  v.setBigUint64(8, BigInt(raw.byteLength), true);
  v.setBigUint64(16, xxh64(raw), true);
  v.setUint8(24, method);
  v.setUint32(25, BLOCK_SIZE, true);
  v.setUint32(29, blocks.length, true);
  let at = headerSize;
  blocks.forEach((b, i) => {
    v.setUint32(COOKED_FIXED_HEADER + 4 * i, b.byteLength, true);
    out.set(b, at);
    at += b.byteLength;
  });
  return out;
}

/** The raw bytes' xxh64 as an LCKD container made by encodeCooked records it (no checks: for the encoder's own output). */
export function cookedRawXxh64(lckd: Uint8Array): bigint {
  return new DataView(lckd.buffer, lckd.byteOffset, lckd.byteLength).getBigUint64(16, true);
}

/** parseCookedHeader's bounds check (a module function: a closure made per call costs a pak writer 12k of them, and more under tsx). */
function need(bytes: Uint8Array, file: string, fileSize: number, at: number, n: number, field: string): void {
  if (at + n > bytes.byteLength || at + n > fileSize) {
    throw errors.cookedInvalid(file, field, `needs ${n} bytes at offset ${at} but the file ends at ${Math.min(fileSize, bytes.byteLength)}`, at);
  }
}

/**
 * Parse and validate an LCKD header. `bytes` may be only the start of the file (at least the
 * header and block table) when `fileSize` gives the whole file's size; every count and size is
 * checked against `fileSize` before it is trusted.
 */
export function parseCookedHeader(bytes: Uint8Array, file: string, fileSize = bytes.byteLength): CookedHeader {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  need(bytes, file, fileSize, 0, COOKED_FIXED_HEADER, 'header');
  const magic = v.getUint32(0, true);
  if (magic !== COOKED_MAGIC) throw errors.cookedInvalid(file, 'magic', `0x${magic.toString(16).padStart(8, '0')} is not LCKD`, 0);
  const version = v.getUint32(4, true);
  if (version !== COOKED_VERSION) throw errors.cookedInvalid(file, 'version', `version ${version} is not supported (this reads 1)`, 4);
  const rawBig = v.getBigUint64(8, true);
  if (rawBig > BigInt(Number.MAX_SAFE_INTEGER)) throw errors.cookedInvalid(file, 'rawSize', `value ${rawBig} is out of range`, 8);
  const rawSize = Number(rawBig);
  const hash = v.getBigUint64(16, true);
  const method = v.getUint8(24);
  if (method !== 0 && method !== 1) throw errors.cookedInvalid(file, 'method', `method ${method} is not 0 (stored) or 1 (DEFLATE)`, 24);
  const blockSize = v.getUint32(25, true);
  if (blockSize !== BLOCK_SIZE) throw errors.cookedInvalid(file, 'blockSize', `${blockSize} is not ${BLOCK_SIZE}`, 25);
  const blockCount = v.getUint32(29, true);
  if (blockCount !== blockCountFor(rawSize)) {
    throw errors.cookedInvalid(file, 'blockCount', `${blockCount} blocks, but rawSize ${rawSize} needs ${blockCountFor(rawSize)}`, 29);
  }
  need(bytes, file, fileSize, COOKED_FIXED_HEADER, 4 * blockCount, 'blockSizes');
  const dataOffset = COOKED_FIXED_HEADER + 4 * blockCount;
  const blockSizes: number[] = new Array(blockCount);
  let storedSize = 0;
  for (let i = 0; i < blockCount; i++) {
    const at = COOKED_FIXED_HEADER + 4 * i;
    const s = v.getUint32(at, true);
    if (method === 0 && s !== rawBlockSize(rawSize, i)) {
      throw errors.cookedInvalid(file, `blockSizes[${i}]`, `stored block of ${s} bytes, expected ${rawBlockSize(rawSize, i)}`, at);
    }
    if (method === 1 && s === 0) throw errors.cookedInvalid(file, `blockSizes[${i}]`, 'a DEFLATE block cannot be empty', at);
    if (method === 1 && s > maxStoredBlockSize(rawBlockSize(rawSize, i))) {
      throw errors.cookedInvalid(file, `blockSizes[${i}]`, `${s} bytes is more than a block of ${rawBlockSize(rawSize, i)} raw bytes can take (${maxStoredBlockSize(rawBlockSize(rawSize, i))})`, at);
    }
    blockSizes[i] = s;
    storedSize += s;
  }
  if (storedSize !== fileSize - dataOffset) {
    throw errors.cookedInvalid(file, 'blockSizes', `blocks add up to ${storedSize} bytes but ${fileSize - dataOffset} follow the header`, COOKED_FIXED_HEADER);
  }
  return { rawSize, xxh64: hash, method, blockSize, blockCount, blockSizes, dataOffset, storedSize };
}

/** Read and validate only the header and block table of an LCKD file on disk (two small reads). */
export async function readCookedHeader(file: string, fh?: fsp.FileHandle): Promise<CookedHeader> {
  const own = fh === undefined;
  let handle: fsp.FileHandle;
  try {
    handle = fh ?? (await fsp.open(file, 'r'));
  } catch (e) {
    throw errors.ioFailed(file, 'open', e);
  }
  try {
    const { size } = await handle.stat();
    const fixed = Buffer.alloc(Math.min(COOKED_FIXED_HEADER, size));
    await handle.read(fixed, 0, fixed.byteLength, 0);
    if (fixed.byteLength < COOKED_FIXED_HEADER) return parseCookedHeader(fixed, file, size);
    const count = fixed.readUInt32LE(29);
    const headerLen = Math.min(size, COOKED_FIXED_HEADER + 4 * count);
    const head = Buffer.alloc(headerLen);
    await handle.read(head, 0, headerLen, 0);
    return parseCookedHeader(head, file, size);
  } finally {
    if (own) await handle.close();
  }
}

/** Decode a whole LCKD file to its raw bytes, checking every block and the xxh64. Requires `initHash()`. */
export async function decodeCooked(bytes: Uint8Array, file: string): Promise<Uint8Array> {
  const h = parseCookedHeader(bytes, file);
  // A few MB of blocks can claim many GiB (zeros deflate ~1000:1): refuse before allocating.
  if (h.rawSize > MAX_DECODED_SIZE) throw errors.cookedInvalid(file, 'rawSize', `${h.rawSize} bytes is more than a whole decode may hold (${MAX_DECODED_SIZE})`, 8);
  const blocks: Uint8Array[] = [];
  const offsets: number[] = [];
  let at = h.dataOffset;
  for (const s of h.blockSizes) {
    blocks.push(bytes.subarray(at, at + s));
    offsets.push(at);
    at += s;
  }
  const raw = inflateBlocks(h.method, blocks, h.rawSize, (field, why, offset) => errors.cookedInvalid(file, field, why, offset), offsets);
  const got = xxh64(raw);
  if (got !== h.xxh64) {
    throw errors.cookedInvalid(file, 'xxh64', `raw bytes hash to ${got.toString(16).padStart(16, '0')}, header says ${h.xxh64.toString(16).padStart(16, '0')}`, 16);
  }
  return raw;
}
