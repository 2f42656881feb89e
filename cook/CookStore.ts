/**
 * The seam for a shared cache of cook results (a remote cache, a content-addressed store): the
 * Cooker asks it before cooking an asset locally and offers it every asset it did cook.
 *
 * The store owns its failures: `fetch` returns undefined for a miss, a bad entry, a timeout or a
 * server that is off, and `publish` never rejects. Whatever `fetch` returns must already be
 * verified (hash, size, parse): the Cooker writes it as the asset's output and caches it locally.
 */
import type { AssetRecord } from '../src/registry/types.js';
import type { CacheEntry } from './cookCache.js';
import type { CookKey } from './cookKey.js';

/** One asset's cook result as a store holds it. */
export interface StoredCook {
  /** The output file's bytes: an LCKD container for a package, the file itself for a text asset. */
  bytes: Uint8Array;
  /** xxh64 (16 hex digits) and size of the raw (uncompressed) cooked bytes. */
  xxh64: string;
  rawSize: number;
  strippedExports: number;
  nulledRefs: number;
  /** The package held a texture export. */
  texture: boolean;
  /** How long its cook took where it was cooked (ms), when the store knows. */
  cookMs?: number;
}

export interface CookStoreRequest {
  record: AssetRecord;
  /** The key the asset would be cooked under now. */
  key: CookKey;
}

export interface CookStorePublish extends CookStoreRequest {
  /** The cooked output on disk (absolute). */
  output: string;
  /** What the local cache recorded for it. */
  entry: CacheEntry;
}

export interface CookStore {
  /** A verified result for `key`, or undefined. Never rejects. */
  fetch(req: CookStoreRequest): Promise<StoredCook | undefined>;
  /** Offer a result cooked here. Never rejects; may do nothing (writes off). */
  publish(req: CookStorePublish): Promise<void>;
  /** Wait for publishes in flight (the end of a cook). */
  flush?(): Promise<void>;
  /** Release connections (the Cooker closes a store it opened itself). */
  close?(): void;
}
