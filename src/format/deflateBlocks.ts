/**
 * Raw DEFLATE in independent 64 KiB blocks, the compression shared by cooked packages (LCKD) and
 * pak entries. Each block is compressed on its own so a reader can inflate only the blocks that
 * cover the byte range it wants, and so blocks compress in parallel.
 *
 * Engines: node:zlib's async `deflateRaw` runs on the libuv thread pool, so several blocks compress
 * at once across cores; fflate's `deflateSync` runs on the JS thread only. Both emit raw DEFLATE,
 * so the wire format does not depend on the engine (the bytes may differ between engines, which is
 * why a build uses one engine throughout to stay deterministic). Default: zlib, because
 * `bench/pakBench.ts` ("deflate engines" lines, 64 MiB of cooked-like data, level 6, 2 cores)
 * measured zlib at 40-49 MB/s against fflate's 24-41 MB/s (1.2x-1.6x) with equal ratios: the
 * blocks compress in parallel on the pool while the JS thread reads and writes the pak.
 *
 * Stored rule: method 0 (stored) when the DEFLATE blocks together are not smaller than the raw
 * bytes, and always for an empty input. A stored payload is the raw bytes themselves, still
 * viewed as blocks of 65,536 raw bytes (the last one shorter) so every reader walks one layout.
 */
import zlib from 'node:zlib';
import { promisify } from 'node:util';
import type { LuminaError } from '../errors.js';

export const BLOCK_SIZE = 65_536;
export const METHOD_STORED = 0;
export const METHOD_DEFLATE = 1;

export type DeflateEngine = 'zlib' | 'fflate';
export const DEFAULT_ENGINE: DeflateEngine = 'zlib';
export const DEFAULT_LEVEL = 6;
/** zlib calls in flight at once: enough to keep the thread pool (4 threads by default) busy, few
 * enough that file reads queued on the same pool are not starved. */
const ZLIB_IN_FLIGHT = 8;

const deflateRawAsync = promisify(zlib.deflateRaw);

export interface CompressOptions {
  level?: number;
  engine?: DeflateEngine;
}

export interface CompressedBlocks {
  /** 0 stored (blocks are raw slices), 1 raw DEFLATE. */
  method: 0 | 1;
  /** One entry per 65,536 raw bytes (last one shorter); none for an empty input. */
  blocks: Uint8Array[];
}

/** Builds the typed error for a bad block; callers pass their own (pak or cooked) factory. */
export type BlockErrorFactory = (field: string, why: string, offset?: number) => LuminaError;

/** Number of blocks that `rawSize` raw bytes occupy. */
export function blockCountFor(rawSize: number): number {
  return Math.ceil(rawSize / BLOCK_SIZE);
}

/** Raw size of block `index` of an entry of `rawSize` bytes. */
export function rawBlockSize(rawSize: number, index: number): number {
  return Math.min(BLOCK_SIZE, rawSize - index * BLOCK_SIZE);
}

/**
 * The most stored bytes a DEFLATE block of `rawSize` raw bytes may take. A DEFLATE stream can be
 * padded without end (empty stored blocks), so readers need a bound before they allocate for a
 * block: this one is generous for any real encoder (zlib's deflateBound is raw + raw/4096 +
 * raw/16384 + 7; fixed Huffman codes at worst 9 bits per byte, raw/8 more) and keeps a window of
 * 64 blocks under 5 MiB however the TOC or LCKD header lies.
 */
export function maxStoredBlockSize(rawSize: number): number {
  return rawSize + (rawSize >>> 3) + 64;
}

/** Split raw bytes into 64 KiB views (no copy). */
export function splitBlocks(raw: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < raw.byteLength; at += BLOCK_SIZE) out.push(raw.subarray(at, Math.min(at + BLOCK_SIZE, raw.byteLength)));
  return out;
}

/** zlib's window bits for raw DEFLATE, from 9 (512 bytes) to 15 (32 KiB, the default). */
const MIN_WINDOW_BITS = 9;
const MAX_WINDOW_BITS = 15;
/** zlib never matches within the last MIN_LOOKAHEAD bytes of its window (MAX_DIST = window - 262). */
const MIN_LOOKAHEAD = 262;

/**
 * The smallest zlib window that still reaches back over the whole of a `rawSize`-byte input, so
 * the bytes are exactly those of the default 32 KiB window: with every match distance within
 * MAX_DIST, no match is cut by the window and no window slide happens; the window size changes
 * nothing else at levels 1-9 (the hash and the block splitting follow memLevel, left at its
 * default). Most cooked packages are under 4 KiB, and a zlib state per call allocates and clears
 * its window: a small one costs less (test/cook/deflateSync.test.ts checks the bytes against the
 * default window at every level and at each size boundary). Level 0 (stored) keeps the default:
 * its stored-block sizes follow the window.
 */
export function windowBitsFor(rawSize: number, level: number): number {
  if (level === 0) return MAX_WINDOW_BITS;
  let bits = MIN_WINDOW_BITS;
  while (bits < MAX_WINDOW_BITS && (1 << bits) - MIN_LOOKAHEAD < rawSize) bits++;
  return bits;
}

/** The native half of a node:zlib raw-deflate stream, as `deflateRawSync` drives it. */
interface ZlibHandle {
  writeSync(flush: number, input: Uint8Array, inOff: number, inLen: number, out: Uint8Array, outOff: number, outLen: number): void;
  reset(): void;
}

/** A zlib raw-deflate state kept for one (level, window bits), reset between inputs. */
interface KeptDeflate {
  stream: zlib.DeflateRaw;
  handle: ZlibHandle;
  /** [output bytes left, input bytes left] after each writeSync. */
  state: Uint32Array;
  out: Buffer;
  /** Window bytes [0, dirty) hold an earlier input's data (see deflateRawOnce). */
  dirty: number;
}

/** null: this Node has no such handle (or it failed once), use deflateRawSync. */
const keptDeflates = new Map<number, KeptDeflate | null>();

function keptDeflate(level: number, windowBits: number): KeptDeflate | null {
  const key = level * 16 + windowBits;
  let k = keptDeflates.get(key);
  if (k !== undefined) return k;
  k = null;
  try {
    const stream = zlib.createDeflateRaw({ level, windowBits });
    // An error would be emitted on the stream: never unhandled (the call then falls back).
    stream.on('error', () => {});
    const internals = stream as unknown as { _handle?: ZlibHandle; _writeState?: Uint32Array };
    if (typeof internals._handle?.writeSync === 'function' && typeof internals._handle.reset === 'function' && internals._writeState instanceof Uint32Array) {
      k = { stream, handle: internals._handle, state: internals._writeState, out: Buffer.allocUnsafe(0), dirty: 0 };
    }
  } catch {
    k = null;
  }
  keptDeflates.set(key, k);
  return k;
}

/** deflateRawSync's output chunk: level 0's stored blocks are cut to the output room, so the calls must offer the same. */
const OUT_CHUNK = zlib.constants.Z_DEFAULT_CHUNK;

/**
 * Run `input` through a kept state with `flush` (Z_FINISH unless told), offering the output room
 * in OUT_CHUNK pieces exactly as deflateRawSync's loop does; the stream is in `k.out[0, returned)`.
 */
function deflateKept(k: KeptDeflate, input: Uint8Array, flush: number = zlib.constants.Z_FINISH): number {
  if (k.out.byteLength < OUT_CHUNK * 2) k.out = Buffer.allocUnsafe(OUT_CHUNK * 4);
  let inOff = 0;
  let availIn = input.byteLength;
  let pos = 0;
  for (;;) {
    if (pos + OUT_CHUNK > k.out.byteLength) {
      const grown = Buffer.allocUnsafe(k.out.byteLength * 2);
      k.out.copy(grown, 0, 0, pos);
      k.out = grown;
    }
    k.handle.writeSync(flush, input, inOff, availIn, k.out, pos, OUT_CHUNK);
    const availOut = k.state[0];
    const left = k.state[1];
    inOff += availIn - left;
    availIn = left;
    pos += OUT_CHUNK - availOut;
    // Room left: the stream has ended (Z_FINISH), or all the input is taken (Z_NO_FLUSH); zlib
    // asks for another call only with none.
    if (availOut !== 0) return pos;
  }
}

/** zlib's MAX_MATCH: a match search compares up to this many bytes past the data in the window. */
const MAX_MATCH = 258;
let zeros = new Uint8Array(0);

/**
 * `zlib.deflateRawSync(input, { level, windowBits })`, the same bytes, through one zlib state per
 * (level, window bits) kept for the thread's life and reset between inputs. deflateRawSync builds
 * a whole stream object and a zlib state per call, about a third on top of compressing a small
 * cooked package (~12k calls in a 20k-asset cook, 98.8% of them under 4 KiB). It drives the same
 * native handle deflateRawSync does (Node's internal `_handle.writeSync`); where that is missing
 * or anything is off, it falls back to deflateRawSync. Returns a copy in a buffer of its own.
 *
 * deflateReset is not quite a fresh state: it keeps the window's bytes, and a match search reads
 * up to MAX_MATCH bytes past the data, where a fresh state has zeros (zlib zeroes that margin of a
 * window never written), so an earlier, longer input's bytes there can change which match wins
 * (found on real packages: 2 of 12k differed). So the window is put back to zeros first, by
 * deflating zeros over the part the next search can reach, and only inputs that fit the window
 * without sliding it (all of windowBitsFor's) take this path.
 */
export function deflateRawOnce(input: Uint8Array, level: number, windowBits: number): Uint8Array {
  const n = input.byteLength;
  const k = level === 0 || n <= (1 << windowBits) - MIN_LOOKAHEAD ? keptDeflate(level, windowBits) : null;
  if (k !== null) {
    let done = -1;
    try {
      if (level !== 0 && k.dirty > n) {
        const clean = Math.min(k.dirty, n + MAX_MATCH + 64);
        if (zeros.byteLength < clean) zeros = new Uint8Array(Math.max(clean, 4096));
        deflateKept(k, zeros.subarray(0, clean), zlib.constants.Z_NO_FLUSH);
        k.handle.reset();
      }
      done = deflateKept(k, input);
      k.handle.reset();
      k.dirty = Math.max(k.dirty, n);
    } catch {
      done = -1;
    }
    if (done >= 0 && !k.stream.destroyed) return new Uint8Array(k.out.subarray(0, done));
    // Anything off: this state is not used again.
    keptDeflates.set(level * 16 + windowBits, null);
  }
  const b = zlib.deflateRawSync(input, { level, windowBits });
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/** DEFLATE each 64 KiB block without deciding stored vs compressed; the building block for
 * callers that stream (the pak writer decides the method over a whole entry). */
export async function deflateEachBlock(raw: Uint8Array, opts: CompressOptions = {}): Promise<Uint8Array[]> {
  const level = opts.level ?? DEFAULT_LEVEL;
  const parts = splitBlocks(raw);
  if ((opts.engine ?? DEFAULT_ENGINE) === 'fflate') {
    // Loaded on first use: its module builds its tables as it loads (~15 ms of CPU), in every
    // thread that imports this file (a cook's main thread and each cook worker), for an engine
    // only a bench asks for.
    const { deflateSync } = await import('fflate');
    return parts.map((p) => deflateSync(p, { level: level as 6 }));
  }
  if (parts.length === 1) {
    // One block: the thread-pool round trip costs far more than compressing 64 KiB or less
    // (1,500 small buffers: 34-55 ms sync vs 277-486 ms async). Same zlib, same options, so the
    // bytes are the same as the async path's.
    return [deflateRawOnce(parts[0], level, windowBitsFor(parts[0].byteLength, level))];
  }
  const out: Uint8Array[] = new Array(parts.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < parts.length) {
      const i = next++;
      const b = await deflateRawAsync(parts[i], { level, windowBits: windowBitsFor(parts[i].byteLength, level) });
      out[i] = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    }
  };
  await Promise.all(Array.from({ length: Math.min(ZLIB_IN_FLIGHT, parts.length) }, worker));
  return out;
}

/** Sum of byte lengths. */
export function totalLength(parts: readonly Uint8Array[]): number {
  let n = 0;
  for (const p of parts) n += p.byteLength;
  return n;
}

/**
 * Compress `raw` into independent 64 KiB DEFLATE blocks, or return it stored (method 0, the raw
 * slices) when DEFLATE does not make it smaller.
 */
export async function compressBlocks(raw: Uint8Array, opts: CompressOptions = {}): Promise<CompressedBlocks> {
  if (raw.byteLength === 0) return { method: METHOD_STORED, blocks: [] };
  const blocks = await deflateEachBlock(raw, opts);
  if (totalLength(blocks) >= raw.byteLength) return { method: METHOD_STORED, blocks: splitBlocks(raw) };
  return { method: METHOD_DEFLATE, blocks };
}

const inflateRawAsync = promisify(zlib.inflateRaw) as unknown as (b: Uint8Array, o: zlib.ZlibOptions & { info: true }) => Promise<{ buffer: Buffer; engine: { bytesWritten: number } }>;

/** The checks shared by decompressBlock and decompressBlockAsync, on what the inflater returned. */
function checkInflated(
  run: () => { buffer: Buffer; engine: { bytesWritten: number } },
  stored: Uint8Array,
  expectedRaw: number,
  fail: BlockErrorFactory,
  field: string,
  offset: number | undefined,
): Uint8Array {
  let r: { buffer: Buffer; engine: { bytesWritten: number } };
  try {
    r = run();
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' ? `inflates to more than ${expectedRaw} bytes` : `is not valid DEFLATE (${(e as Error).message})`;
    throw fail(field, why, offset);
  }
  const out = r.buffer;
  if (out.byteLength !== expectedRaw) throw fail(field, `inflates to ${out.byteLength} bytes, expected ${expectedRaw}`, offset);
  // zlib stops at the final DEFLATE block and says nothing about bytes after it; the engine's
  // bytesWritten is the input the stream actually used.
  const consumed = r.engine.bytesWritten;
  if (consumed !== stored.byteLength) {
    throw fail(field, `has ${stored.byteLength - consumed} bytes of junk after its DEFLATE stream ends`, offset === undefined ? undefined : offset + consumed);
  }
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

/**
 * decompressBlock on the libuv thread pool, so several blocks inflate at once across cores (the
 * pak writer checks cooked blocks this way). Same checks, same errors.
 */
export async function decompressBlockAsync(
  stored: Uint8Array,
  expectedRaw: number,
  fail: BlockErrorFactory,
  field = 'block',
  offset?: number,
): Promise<Uint8Array> {
  let result: { buffer: Buffer; engine: { bytesWritten: number } } | undefined;
  let error: unknown;
  try {
    // One byte of headroom so an over-long block is seen as too long, not silently cut.
    result = await inflateRawAsync(stored, { maxOutputLength: expectedRaw + 1, info: true });
  } catch (e) {
    error = e;
  }
  return checkInflated(
    () => {
      if (result === undefined) throw error;
      return result;
    },
    stored,
    expectedRaw,
    fail,
    field,
    offset,
  );
}

/**
 * Inflate one block and check it holds exactly `expectedRaw` bytes (65,536, or the remainder for
 * the last block). A block that inflates to more or less, is not DEFLATE at all, or has bytes
 * after its DEFLATE stream ends, is an error from `fail` naming `field`.
 */
export function decompressBlock(
  stored: Uint8Array,
  expectedRaw: number,
  fail: BlockErrorFactory,
  field = 'block',
  offset?: number,
): Uint8Array {
  // One byte of headroom so an over-long block is seen as too long, not silently cut.
  return checkInflated(
    () => zlib.inflateRawSync(stored, { maxOutputLength: expectedRaw + 1, info: true }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } },
    stored,
    expectedRaw,
    fail,
    field,
    offset,
  );
}

/**
 * Rebuild `rawSize` raw bytes from stored blocks of either method. For method 0 each block must
 * be exactly its raw size; for method 1 each must inflate to it.
 * `blockOffsets` (optional) gives each block's file offset, for error messages.
 */
export function inflateBlocks(
  method: 0 | 1,
  blocks: readonly Uint8Array[],
  rawSize: number,
  fail: BlockErrorFactory,
  blockOffsets?: readonly number[],
): Uint8Array {
  if (blocks.length !== blockCountFor(rawSize)) {
    throw fail('blockCount', `${blocks.length} blocks cannot hold ${rawSize} bytes (needs ${blockCountFor(rawSize)})`);
  }
  const out = new Uint8Array(rawSize);
  for (let i = 0; i < blocks.length; i++) {
    const want = rawBlockSize(rawSize, i);
    const field = `block[${i}]`;
    if (method === METHOD_STORED) {
      if (blocks[i].byteLength !== want) throw fail(field, `stored block holds ${blocks[i].byteLength} bytes, expected ${want}`, blockOffsets?.[i]);
      out.set(blocks[i], i * BLOCK_SIZE);
    } else {
      out.set(decompressBlock(blocks[i], want, fail, field, blockOffsets?.[i]), i * BLOCK_SIZE);
    }
  }
  return out;
}
