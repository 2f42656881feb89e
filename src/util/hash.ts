/**
 * xxh64 (seed 0) over bytes, as FORMAT.md uses it everywhere. xxhash-wasm must be instantiated
 * once (async); after `initHash()` every call is synchronous, so hot loops never await.
 */
import xxhash from 'xxhash-wasm';
import type { XXHashAPI } from 'xxhash-wasm';

let api: XXHashAPI | undefined;
let pending: Promise<XXHashAPI> | undefined;

/** Instantiate the wasm module. Safe to call many times; joins the first call. */
export async function initHash(): Promise<void> {
  if (api) return;
  pending ??= xxhash();
  api = await pending;
}

function ready(): XXHashAPI {
  if (!api) throw new Error('initHash() must be awaited before hashing');
  return api;
}

/**
 * Bytes handed to the wasm module at once. It copies its input into its own memory, which grows to
 * the largest input ever hashed and never shrinks: one 117 MB cache file hashed whole kept 117 MB
 * for the rest of the process (at a million assets several such files made ~0.3 GB). Larger inputs
 * go through the streaming state in pieces of this size: the same digest.
 */
const PIECE = 1 << 20;

/** xxh64, seed 0, of the bytes. */
export function xxh64(bytes: Uint8Array): bigint {
  if (bytes.byteLength <= PIECE) return ready().h64Raw(bytes, 0n);
  const h = createXxh64();
  h.update(bytes);
  return h.digest();
}

/** Streaming xxh64 for data that arrives in pieces (pak entries, files read in chunks). */
export function createXxh64(): { update(bytes: Uint8Array): void; digest(): bigint } {
  const h = ready().create64(0n);
  return {
    update(bytes) {
      if (bytes.byteLength <= PIECE) h.update(bytes);
      else for (let at = 0; at < bytes.byteLength; at += PIECE) h.update(bytes.subarray(at, at + PIECE));
    },
    digest: () => h.digest(),
  };
}

/**
 * Streaming xxh64 of UTF-8 text that arrives as many small strings (a line per asset): they are
 * gathered and hashed a few thousand at a time, so a million assets never make one huge string,
 * and the digest is that of the whole text (hex, as {@link hashString} gives it).
 */
export function createTextHasher(): { update(text: string): void; digestHex(): string } {
  const h = createXxh64();
  let batch: string[] = [];
  const flush = () => {
    h.update(Buffer.from(batch.join(''), 'utf8'));
    batch = [];
  };
  return {
    update(text) {
      batch.push(text);
      if (batch.length >= 4096) flush();
    },
    digestHex() {
      flush();
      return hashHex(h.digest());
    },
  };
}

const HEX_BYTE = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/**
 * A u32 as 8 lowercase hex digits (`n.toString(16).padStart(8, '0')`), from a table of bytes: a
 * no-op at 100k assets prints ~112k of them (the pak fingerprint's identities), and toString +
 * padStart took about twice the time.
 */
export function hex8(n: number): string {
  return HEX_BYTE[n >>> 24] + HEX_BYTE[(n >>> 16) & 255] + HEX_BYTE[(n >>> 8) & 255] + HEX_BYTE[n & 255];
}

/** 16 lowercase hex digits, the way hashes appear in logs, manifests and cache keys. */
export function hashHex(h: bigint): string {
  return h.toString(16).padStart(16, '0');
}

/** xxh64 (seed 0) of a string's UTF-8 bytes, without a Buffer per call (xxhash-wasm encodes it into its own memory). */
export function xxh64Text(s: string): bigint {
  return ready().h64(s, 0n);
}

/** xxh64 of a UTF-8 string, as hex: for cache keys built from settings. */
export function hashString(s: string): string {
  return hashHex(xxh64(Buffer.from(s, 'utf8')));
}
