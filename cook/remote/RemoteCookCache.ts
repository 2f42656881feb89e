/**
 * The cook's side of the shared remote cache, plugged into the Cooker as its CookStore: look an
 * asset's cook up before cooking it locally, publish a local cook afterwards. Built on the Bazel
 * HTTP protocol (RemoteCacheClient), one action entry per package (actionResult.ts) keyed by
 * remoteKey.ts from the Cooker's own key parts. Text assets are copied locally, never shared.
 * Compiled shader permutations go through the same client, breaker and failure counts
 * (lookupShader/putShader, keyed and verified by RemoteShaderCache.ts), with their own hit counts.
 *
 * Nothing bad ships and nothing fails a cook:
 * - a download is used only after its SHA-256 and size match the action entry, its LCKD header
 *   parses, every block inflates to the xxh64 in that header, and the package inside is the asset
 *   asked for (its GUID); anything else is a local cook and a counted warning;
 * - a 404 is a plain miss; a 5xx, a reset, a timeout or a bad answer is a local cook and a counted
 *   warning; after MAX_CONSECUTIVE_ERRORS failures in a row the cache is off for the rest of the
 *   run (one warning), so a dead server costs a few timeouts, not one per asset;
 * - publishing uploads the blob first and the action entry last, and never overwrites an entry.
 * No method throws; failures are counted in `stats` and reported through `onWarning`.
 */
import fs from 'node:fs';
import { errors, type LuminaLog } from '../../src/errors.js';
import { decodeCooked, parseCookedHeader } from '../../src/format/cookedPackage.js';
import { parsePackageTables } from '../../src/format/packageReader.js';
import { hashHex, xxh64 } from '../../src/util/hash.js';
import type { AssetRecord } from '../../src/registry/types.js';
import type { ProjectConfig } from '../../config/index.js';
import { cookKeyFor, settingsHashes, type CookKeyParts, type CookSettingsHashes } from '../cookKey.js';
import type { CookStore, CookStorePublish, CookStoreRequest, StoredCook } from '../CookStore.js';
import { TEXTURE_CLASS } from '../textureClass.js';
import { decodeActionResult, encodeActionResult } from './actionResult.js';
import { RemoteCacheClient, RemoteRequestError, sha256Hex, type RemoteFailureKind } from './RemoteCacheClient.js';
import { remoteCookKey } from './remoteKey.js';

/** Failures in a row (no success or plain miss between them) that turn the cache off for the run. */
export const MAX_CONSECUTIVE_ERRORS = 8;
/** Individual failures reported as warnings before only the count goes on. */
const WARN_EACH = 5;
/** The output path of a cooked package inside its action entry. */
export const COOKED_OUTPUT = 'cooked.lckd';
/** The output path of a compiled shader permutation (validated SPIR-V) inside its action entry. */
export const SHADER_OUTPUT = 'shader.spv';
/** The largest cooked package accepted from the cache (as FORMAT.md limits nothing, a sanity cap). */
const MAX_BLOB = 2 ** 31;

export interface RemoteCacheSettings {
  url: string;
  read: boolean;
  write: boolean;
  salt: string;
  timeoutMs: number;
}

export interface RemoteCookCacheOptions extends RemoteCacheSettings {
  concurrency?: number;
  env?: NodeJS.ProcessEnv;
  /** Called for each of the first few failures, for the breaker, and once at the end with the count. */
  onWarning?: (log: LuminaLog) => void;
}

/** What a cook publishes beside the bytes. */
export interface RemoteCookMeta {
  strippedExports: number;
  nulledRefs: number;
  /** How long the local cook took, for balancing shards. */
  cookMs: number;
}

/** Lookups (hits + misses + failures), and publishes (new or already there). */
export interface Counts {
  lookups: number;
  hits: number;
  misses: number;
  published: number;
  alreadyThere: number;
}

export interface RemoteCacheStats {
  url: string;
  read: boolean;
  write: boolean;
  lookups: number;
  hits: number;
  misses: number;
  /** Lookups and uploads that failed, by how (packages and shaders). Each such asset was cooked locally. */
  failures: Record<RemoteFailureKind, number>;
  published: number;
  /** Publishes skipped because the entry was already there. */
  alreadyThere: number;
  /** The same counts for compiled shader permutations (the counts above are packages only). */
  shaders: Counts;
  /** The cache was turned off for the run after too many failures in a row. */
  disabled: boolean;
  requests: number;
  bytesDown: number;
  bytesUp: number;
}

export class RemoteCookCache implements CookStore {
  readonly client: RemoteCacheClient;
  private readonly settings: CookSettingsHashes;
  private readonly pending = new Set<Promise<void>>();
  private consecutive = 0;
  private warned = 0;
  private reportedFailures = 0;
  private off = false;
  private readonly counts: Counts = { lookups: 0, hits: 0, misses: 0, published: 0, alreadyThere: 0 };
  private readonly shaderCounts: Counts = { lookups: 0, hits: 0, misses: 0, published: 0, alreadyThere: 0 };
  private readonly failures: Record<RemoteFailureKind, number> = { timeout: 0, reset: 0, status: 0, integrity: 0 };

  constructor(
    config: Pick<ProjectConfig, 'cook' | 'textures'>,
    readonly opts: RemoteCookCacheOptions,
  ) {
    this.client = new RemoteCacheClient({ url: opts.url, timeoutMs: opts.timeoutMs, concurrency: opts.concurrency, env: opts.env });
    this.settings = settingsHashes(config);
  }

  /**
   * The remote cache a cook should use: the config's, with command-line overrides on top; none when
   * no URL is set or both reads and writes are off.
   */
  static fromConfig(
    config: Pick<ProjectConfig, 'cook' | 'textures' | 'remoteCache'>,
    overrides: Partial<RemoteCacheSettings> = {},
    extra: Pick<RemoteCookCacheOptions, 'onWarning' | 'env' | 'concurrency'> = {},
  ): RemoteCookCache | undefined {
    const s: RemoteCacheSettings = {
      url: overrides.url ?? config.remoteCache.url ?? '',
      read: overrides.read ?? config.remoteCache.read,
      write: overrides.write ?? config.remoteCache.write,
      salt: overrides.salt ?? config.remoteCache.salt,
      timeoutMs: overrides.timeoutMs ?? config.remoteCache.timeoutMs,
    };
    if (!s.url || (!s.read && !s.write)) return undefined;
    return new RemoteCookCache(config, { ...s, ...extra });
  }

  /** Reads are on and the cache has not been turned off. */
  get reading(): boolean {
    return this.opts.read && !this.off;
  }

  get writing(): boolean {
    return this.opts.write && !this.off;
  }

  /** The action key of a package cook: the cook key's parts, the source's SHA-256, the salt. */
  keyFor(parts: CookKeyParts, source: Uint8Array): string {
    return remoteCookKey({ parts, source: sha256Hex(source), salt: this.opts.salt });
  }

  /** CookStore: a verified cook of `record`, or undefined (a miss, a failure, reads off, a text asset). */
  async fetch(req: CookStoreRequest): Promise<StoredCook | undefined> {
    const { record } = req;
    if (!this.reading || record.kind !== 'package') return undefined;
    const source = readQuietly(record.file);
    // Changed since the registry hashed it: the Cooker's key is stale, let the local cook find out.
    if (!source || hashHex(xxh64(source)) !== record.hash) return undefined;
    let texture: boolean;
    try {
      texture = record.className === TEXTURE_CLASS || parsePackageTables(source, record.file).exports.some((e) => e.className === TEXTURE_CLASS);
    } catch {
      return undefined; // a corrupt source: the local cook reports it
    }
    // The Cooker guessed `texture` from the asset's class; the export table says for sure. The parts
    // that depend on it come from cookKeyFor, any other part the Cooker computed is kept as it is.
    const parts: CookKeyParts = { ...req.key.parts };
    delete parts.settings;
    delete parts.encoder;
    Object.assign(parts, cookKeyFor({ kind: 'package', contentHash: record.hash, texture }, this.settings).parts);
    const hit = await this.lookup(this.keyFor(parts, source), record.guid, record.file);
    if (!hit) return undefined;
    return { bytes: hit.lckd, xxh64: hashHex(hit.xxh64), rawSize: hit.rawSize, strippedExports: hit.strippedExports, nulledRefs: hit.nulledRefs, texture, ...(hit.cookMs !== undefined ? { cookMs: hit.cookMs } : {}) };
  }

  /** CookStore: publish a package cooked (or, for a shard, cached) here. Never rejects. */
  async publish(req: CookStorePublish): Promise<void> {
    const { record, key, entry, output } = req;
    if (!this.writing || record.kind !== 'package') return;
    const source = readQuietly(record.file);
    const lckd = readQuietly(output);
    // Only bytes that are exactly what the entry describes are shared.
    if (!source || !lckd || hashHex(xxh64(source)) !== key.parts.content || lckd.byteLength !== entry.cookedSize) return;
    await this.put(this.keyFor(key.parts, source), lckd, { strippedExports: entry.strippedExports, nulledRefs: entry.nulledRefs, cookMs: entry.cookMs ?? 0 }, record.file);
  }

  /**
   * A verified cook of the asset `guid` under `key`, or undefined (a miss, a failure, or reads off).
   * `file` names the asset in warnings.
   */
  async lookup(key: string, guid: string, file: string): Promise<{ lckd: Buffer; rawSize: number; xxh64: bigint; strippedExports: number; nulledRefs: number; cookMs?: number } | undefined> {
    let rawSize = 0;
    let hash = 0n;
    const got = await this.fetchOutput(this.counts, key, COOKED_OUTPUT, file, async (lckd, where) => {
      const header = parseCookedHeader(lckd, where);
      const raw = await decodeCooked(lckd, where);
      rawSize = header.rawSize;
      hash = header.xxh64;
      const tables = parsePackageTables(raw, where);
      if (!tables.exports.some((e) => e.objectGuid === guid)) return `holds no export with GUID ${guid}: it is another asset's cook`;
      return undefined;
    });
    if (!got) return undefined;
    const p = got.properties;
    const cookMs = p['lumina.cookMs'] !== undefined ? num(p['lumina.cookMs']) : undefined;
    return { lckd: got.bytes, rawSize, xxh64: hash, strippedExports: num(p['lumina.strippedExports']), nulledRefs: num(p['lumina.nulledRefs']), ...(cookMs !== undefined ? { cookMs } : {}) };
  }

  /** Upload a cook (blob first, entry last, never over an existing entry). Tracked until flush(). */
  put(key: string, lckd: Uint8Array, meta: RemoteCookMeta, file: string): Promise<void> {
    return this.putOutput(this.counts, key, COOKED_OUTPUT, lckd, {
      'lumina.strippedExports': String(meta.strippedExports),
      'lumina.nulledRefs': String(meta.nulledRefs),
      'lumina.cookMs': String(Math.round(meta.cookMs)),
    }, file);
  }

  /**
   * A compiled shader permutation under `key` (cook/remote/RemoteShaderCache.ts makes the key),
   * after `verify` (which says what is wrong, or undefined) accepted it; undefined otherwise.
   * Shares the breaker and the failure counts with the package lookups.
   */
  async lookupShader(key: string, file: string, verify: (code: Buffer, where: string) => Promise<string | undefined>): Promise<Buffer | undefined> {
    return (await this.fetchOutput(this.shaderCounts, key, SHADER_OUTPUT, file, verify))?.bytes;
  }

  /** Upload a compiled permutation (blob first, entry last, never over an existing entry). */
  putShader(key: string, code: Uint8Array, compileMs: number, file: string): Promise<void> {
    return this.putOutput(this.shaderCounts, key, SHADER_OUTPUT, code, { 'lumina.compileMs': String(Math.round(compileMs)) }, file);
  }

  private async fetchOutput(
    counts: Counts,
    key: string,
    output: string,
    file: string,
    verify: (bytes: Buffer, where: string) => Promise<string | undefined>,
  ): Promise<{ bytes: Buffer; properties: Record<string, string> } | undefined> {
    if (!this.reading) return undefined;
    counts.lookups++;
    try {
      const ac = await this.client.getAc(key);
      if (!ac) return this.miss(counts);
      let result;
      try {
        result = decodeActionResult(ac);
      } catch (e) {
        throw this.bad(key, `action entry is not an ActionResult: ${(e as Error).message}`);
      }
      const out = result.outputs.find((o) => o.path === output);
      if (result.exitCode !== 0 || !out) throw this.bad(key, `action entry has exit code ${result.exitCode} and no "${output}" output`);
      if (out.size > MAX_BLOB) throw this.bad(key, `action entry names a ${out.size}-byte blob`);
      const bytes = await this.client.getCas(out.hash, out.size);
      // The entry outlived its blob (evicted): a miss, not the server's fault.
      if (!bytes) return this.miss(counts);
      const where = this.client.urlFor('cas', out.hash);
      let why: string | undefined;
      try {
        why = await verify(bytes, where);
      } catch (e) {
        why = (e as Error).message;
      }
      if (why) throw new RemoteRequestError('integrity', `${output === SHADER_OUTPUT ? 'shader' : 'cooked'} blob is unusable: ${why}`, where);
      this.consecutive = 0;
      counts.hits++;
      return { bytes, properties: out.properties };
    } catch (e) {
      this.failed(e, file);
      return undefined;
    }
  }

  private putOutput(counts: Counts, key: string, output: string, bytes: Uint8Array, properties: Record<string, string>, file: string): Promise<void> {
    if (!this.writing) return Promise.resolve();
    const p = (async () => {
      try {
        // No HEAD of the entry first: the caller looked it up (a miss) just before making the
        // bytes, and putAc checks again right before writing; a blob already there is not re-sent.
        const { hash } = await this.client.putCas(bytes);
        const entry = encodeActionResult([{ path: output, hash, size: bytes.byteLength, properties }]);
        if (await this.client.putAc(key, entry)) counts.published++;
        else counts.alreadyThere++;
        this.consecutive = 0;
      } catch (e) {
        this.failed(e, file);
      }
    })();
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
    return p;
  }

  /** CookStore: wait for every upload in flight; report the failures since the last flush as one count. */
  async flush(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
    const failed = Object.values(this.failures).reduce((a, b) => a + b, 0);
    // The first few were named one by one; the count says the rest (once per count: a daemon flushes often).
    if (failed > WARN_EACH && failed > this.reportedFailures) {
      this.reportedFailures = failed;
      const by = Object.entries(this.failures)
        .filter(([, n]) => n)
        .map(([k, n]) => `${n} ${k}`)
        .join(', ');
      this.opts.onWarning?.(errors.remoteCache(this.opts.url, `${failed} remote cache requests failed (${by}); those assets were cooked locally`).toLog());
    }
  }

  stats(): RemoteCacheStats {
    return {
      url: this.opts.url,
      read: this.opts.read,
      write: this.opts.write,
      ...this.counts,
      shaders: { ...this.shaderCounts },
      failures: { ...this.failures },
      disabled: this.off,
      ...this.client.traffic,
    };
  }

  /** Close the keep-alive sockets (after flush). */
  close(): void {
    this.client.close();
  }

  private miss(counts: Counts): undefined {
    this.consecutive = 0;
    counts.misses++;
    return undefined;
  }

  private bad(key: string, why: string): RemoteRequestError {
    return new RemoteRequestError('integrity', why, this.client.urlFor('ac', key));
  }

  private failed(e: unknown, file: string): void {
    // Requests that were in flight when the cache went off say nothing new.
    if (this.off) return;
    const err = e instanceof RemoteRequestError ? e : new RemoteRequestError('reset', (e as Error)?.message ?? String(e), this.opts.url);
    this.failures[err.kind]++;
    this.consecutive++;
    if (this.warned < WARN_EACH) {
      this.warned++;
      this.opts.onWarning?.(errors.remoteCache(err.url, `${err.message}; cooking ${file} locally`).toLog());
    }
    if (this.consecutive >= MAX_CONSECUTIVE_ERRORS) {
      this.off = true;
      this.client.abort();
      this.opts.onWarning?.(errors.remoteCache(this.opts.url, `remote cache is off for the rest of this run after ${this.consecutive} failures in a row`).toLog());
    }
  }
}

function readQuietly(file: string): Buffer | undefined {
  try {
    return fs.readFileSync(file);
  } catch {
    return undefined;
  }
}

function num(v: string | undefined): number {
  const n = Number(v);
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
}
