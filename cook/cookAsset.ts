/**
 * Cooking one asset into `Saved/Cooked/<virtual path>`: consult the cache, else read, strip,
 * (texture-)transform, LCKD-encode and write; record the result in the cache only after the
 * output is on disk. Text assets are copied as they are (the pak writer compresses them).
 *
 * Failures of the asset's own content (a corrupt package, an undecodable texture) come back as
 * `{ status: 'failed' }` with the typed error, never thrown, so one bad asset cannot stop the
 * others. With onCookFailure "verbatim" the source bytes ship in the LCKD container instead.
 */
import fs from 'node:fs';
import path from 'node:path';
import { threadId } from 'node:worker_threads';
import type { LoadedPackage } from '../src/format/packageTypes.js';
import { errors, LuminaError, type LuminaLog } from '../src/errors.js';
import { TEMP_MARKER } from '../src/util/atomicWrite.js';
import { hashHex, xxh64 } from '../src/util/hash.js';
import type { AssetRecord } from '../src/registry/types.js';
import type { ProjectConfig, TextureConfig } from '../config/index.js';
import type { CacheCheck, CacheEntry, CookCache, RecookReason } from './cookCache.js';
import { cookKeyFor, cookKeyParts, settingsHashes, type CookKey, type CookKeyInput, type CookKeyParts, type CookSettingsHashes } from './cookKey.js';
import { asCookError, cookPackageSource, type PackageCookOutcome } from './cookPackageSource.js';
import type { PackageMaterials } from './shaders/materials.js';
import { TEXTURE_CLASS } from './textureClass.js';
import { ClassSchemas } from '../src/schemas/classSchemas.js';
import { loadSchemas } from '../src/schemas/loadSchemas.js';

export type AssetStatus = 'cooked' | 'cached' | 'fetched' | 'verbatim' | 'failed';

export interface AssetCookResult {
  /** `fetched`: taken from a CookStore (remote cache) instead of cooked here. */
  status: AssetStatus;
  /** Why it was (re)cooked; absent when cached. */
  reason?: RecookReason;
  error?: LuminaError;
  /** The cooked file, absolute; absent when failed. */
  output?: string;
  /** Identifies the output's bytes (hash and size), for pak fingerprints; absent when failed. */
  identity?: string;
  /** xxh64 of the output file's bytes as written (16 hex digits), which the pak writer checks before shipping them. */
  cookedXxh64?: string;
  /**
   * The output's bytes, when this process just wrote them (cooked, fetched, verbatim), so the pak
   * writer need not read the file back. A full cook keeps them only within a memory budget.
   */
  bytes?: Uint8Array;
  /** Shipped, but not as asked: a texture stored as RGBA8 because basisu could not run (never cached). */
  warnings?: LuminaLog[];
  /** The cook key the output was made under (absent for failed and verbatim outputs). */
  key?: CookKey;
  /** The cache entry describing the output (cooked, cached, fetched). */
  entry?: CacheEntry;
  bytesIn: number;
  bytesOut: number;
  strippedExports: number;
  nulledRefs: number;
  /** Wall time spent on this asset, ms. */
  ms: number;
  /** A package cooked from its source: its shader materials from the same parse (the Cooker hands them to the shader cook). */
  materials?: PackageMaterials;
}

export interface AssetCookContext {
  cache: CookCache;
  cookedDir: string;
  settings: CookSettingsHashes;
  editorOnlyClassPrefixes: readonly string[];
  compressionLevel: number;
  /** `textures.*`: the encoder, its levels and limits. */
  textures: TextureConfig;
  onCookFailure: 'fail' | 'verbatim';
  onTextureFallback?: (file: string, reason: string) => void;
  /** The project's class schemas: what native tails hold, and the `schema` part of the keys of the packages they touch. */
  schemas: ClassSchemas;
  /** Non-fatal findings of a package's cook (PACKAGE_NAME_NONE). */
  onWarning?: (warning: LuminaLog) => void;
}

/**
 * The context every asset cook of a project shares (the Cooker builds it once). Loads the schemas
 * folder: one that does not validate throws SCHEMA_INVALID naming the file, like a bad config.
 */
export function assetCookContext(
  config: Pick<ProjectConfig, 'cookedDir' | 'cook' | 'textures'> & Partial<Pick<ProjectConfig, 'schemasDir'>>,
  cache: CookCache,
  onTextureFallback?: (file: string, reason: string) => void,
  onWarning?: (warning: LuminaLog) => void,
): AssetCookContext {
  return {
    schemas: config.schemasDir ? loadSchemas(config.schemasDir) : ClassSchemas.empty,
    onWarning,
    cache,
    cookedDir: config.cookedDir,
    settings: settingsHashes(config),
    editorOnlyClassPrefixes: config.cook.editorOnlyClassPrefixes,
    compressionLevel: config.cook.compressionLevel,
    textures: config.textures,
    onCookFailure: config.cook.onCookFailure,
    onTextureFallback,
  };
}

/**
 * The cook key `record` would be cooked under, given whether it holds a texture export (known
 * for sure only after parsing; the asset class is the guess before) and its export classes (the
 * `schema` part; undefined when unknown, which never matches a package a schema may touch).
 */
export function keyForRecord(
  record: AssetRecord,
  ctx: Pick<AssetCookContext, 'settings'> & Partial<Pick<AssetCookContext, 'schemas'>>,
  texture = record.className === TEXTURE_CLASS,
  contentHash = record.hash,
  classes?: readonly string[],
): CookKey {
  return cookKeyFor(keyInput(record, ctx, texture, contentHash, classes), ctx.settings);
}

/** keyForRecord's parts, without hashing them into the key (what a cache check compares). */
export function keyPartsForRecord(
  record: AssetRecord,
  ctx: Pick<AssetCookContext, 'settings'> & Partial<Pick<AssetCookContext, 'schemas'>>,
  texture = record.className === TEXTURE_CLASS,
  contentHash = record.hash,
  classes?: readonly string[],
): CookKeyParts {
  return cookKeyParts(keyInput(record, ctx, texture, contentHash, classes), ctx.settings);
}

function keyInput(
  record: AssetRecord,
  ctx: Partial<Pick<AssetCookContext, 'schemas'>>,
  texture: boolean,
  contentHash: string,
  classes: readonly string[] | undefined,
): CookKeyInput {
  let schema: string | undefined;
  if (record.kind === 'package' && ctx.schemas && ctx.schemas.size > 0) schema = classes ? schemaPart(ctx.schemas, classes) : 'unknown';
  return { kind: record.kind, contentHash, texture: texture || record.className === TEXTURE_CLASS, schema };
}

/**
 * packageHash by export class list, per schema set (immutable): a no-op asks it of every package,
 * a first cook of every cooked one, mostly of a few lists. A tree with one level per class of the
 * list, so a list is found by its classes exactly (whatever characters they hold) without a string
 * made of it per call: the JSON key of longer lists was ~5-10 ms of a cold 20k cook.
 */
interface SchemaMemo {
  part: string | undefined;
  next: Map<string, SchemaMemo> | undefined;
}
const schemaParts = new WeakMap<ClassSchemas, SchemaMemo>();

function schemaPart(schemas: ClassSchemas, classes: readonly string[]): string {
  let node = schemaParts.get(schemas);
  if (!node) schemaParts.set(schemas, (node = { part: undefined, next: undefined }));
  for (let i = 0; i < classes.length; i++) {
    const next: Map<string, SchemaMemo> = (node.next ??= new Map());
    let child = next.get(classes[i]);
    if (!child) next.set(classes[i], (child = { part: undefined, next: undefined }));
    node = child;
  }
  return (node.part ??= schemas.packageHash(classes));
}

/** The export classes of a parsed package, as the cache entry keeps them. */
export function exportClasses(pkg: Pick<LoadedPackage, 'exports'>): string[] {
  return [...new Set(pkg.exports.map((e) => e.className ?? ''))].sort();
}

/** Is the asset's cached output (at `output`, its cookedPathFor) still valid? (no read of the source) */
export function checkCache(record: AssetRecord, ctx: AssetCookContext, output = cookedPathFor(ctx.cookedDir, record)): CacheCheck {
  return ctx.cache.check(record.guid, (texture, classes) => keyPartsForRecord(record, ctx, texture, record.hash, classes), record.virtualPath.slice(1), output);
}

/** `Saved/Cooked/<virtual path>` for a record. */
export function cookedPathFor(cookedDir: string, record: Pick<AssetRecord, 'virtualPath'>): string {
  const v = record.virtualPath;
  // A plain concatenation when it gives what path.join would: a no-op cook asks this per asset,
  // and the join was a tenth of its per-asset cost.
  if (plainDir(cookedDir) && v.charCodeAt(0) === 0x2f && !v.includes('//') && !v.includes('/.')) return cookedDir + v;
  return path.join(cookedDir, ...v.split('/').filter(Boolean));
}

let lastDir = '';
let lastDirPlain = false;
/** `dir` is absolute and normalized, without a trailing separator, on a '/' platform. */
function plainDir(dir: string): boolean {
  if (dir !== lastDir) {
    lastDir = dir;
    lastDirPlain = path.sep === '/' && path.isAbsolute(dir) && path.normalize(dir) === dir && !dir.endsWith('/');
  }
  return lastDirPlain;
}

const madeDirs = new Set<string>();

let tempSeq = 0;

/**
 * A temp name beside `target`, unique among live processes (pid, thread, counter) and carrying
 * TEMP_MARKER so the stale-file sweep removes what a killed run left. Not tempPathFor's random
 * suffix: crypto.randomBytes per output was ~20 us, a twentieth of the 20k-asset cook's main thread.
 */
function outputTempPath(target: string): string {
  return `${target}${TEMP_MARKER}${process.pid}-${threadId}-${(tempSeq++).toString(36)}`;
}

/**
 * Write one cooked output: temp file + rename, so a crash never leaves a half file under the
 * final name. Deliberately no fsync per file (20k fsyncs would dominate the cook): the cache only
 * trusts an output whose size matches what it recorded, so a file lost to a power cut is simply
 * re-cooked, and the paks built from these files are written with fsync.
 *
 * Synchronous on purpose: cooked files are small and the main thread is the bottleneck; measured
 * here, writeFileSync + renameSync cost about a third of the main-thread time of the promise
 * API's open/write/close round trips, and the thread pool stays free for DEFLATE.
 */
export function writeOutput(target: string, data: Uint8Array): WrittenFile {
  beforeCookedWrite(target);
  const dir = path.dirname(target);
  const tmp = outputTempPath(target);
  try {
    if (!madeDirs.has(dir)) {
      fs.mkdirSync(dir, { recursive: true });
      madeDirs.add(dir);
    }
    // The size and mtime the cook cache records, from the open file (rename keeps both): a
    // stat by fd here instead of a stat by path on the main thread for every output.
    let st: fs.Stats;
    const fd = fs.openSync(tmp, 'w');
    try {
      for (let at = 0; at < data.byteLength; ) at += fs.writeSync(fd, data, at, data.byteLength - at);
      st = fs.fstatSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, target);
    return { size: st.size, mtimeMs: st.mtimeMs };
  } catch (e) {
    // Best effort: when the folder could not be made (Saved is a file) the temp path is not even
    // reachable, and that must not replace the real error with an untyped one.
    try {
      fs.rmSync(tmp, { force: true });
    } catch {
      // nothing was written there
    }
    // The folder may have been removed since it was made (a clean, a stale-file sweep): forget it and retry once.
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' && madeDirs.delete(dir)) return writeOutput(target, data);
    throw errors.ioFailed(target, 'write', e);
  }
}

/** What writeOutput put on disk: the file's size and mtime, which the cook cache records. */
export interface WrittenFile {
  size: number;
  mtimeMs: number;
}

/** An output a cook worker wrote: what the cache and the pak writer need of it, so the main thread neither stats nor hashes it. */
export interface WrittenOutput extends WrittenFile {
  /** xxh64 of the file's bytes (16 hex digits). */
  cookedXxh64: string;
}

/**
 * Write an asset's output (see writeOutput) and say what the pak writer and the cache need of it:
 * the xxh64 of the file as written, its size and mtime, and the bytes themselves (a full cook
 * keeps them, within a budget, until its paks are written, so they are not read back).
 */
export function writeAssetOutput(target: string, data: Uint8Array): WrittenOutput {
  const st = writeOutput(target, data);
  return { cookedXxh64: hashHex(xxh64(data)), size: st.size, mtimeMs: st.mtimeMs };
}

/**
 * The "swept" marker of each cooked folder this process writes into (cookedOutputs.ts): it says
 * the folder held exactly the last cook's outputs, so it goes before the first write here (a kill
 * mid-write may leave a temp file) and comes back only when a full cook has made that true again.
 */
const sweptMarkers = new Map<string, { file: string; present: boolean }>();
/** Markers of `sweptMarkers` still present: none (the usual state once a cook has written), no path to resolve per write. */
let markersPresent = 0;

/** Watch `cookedDir`'s swept marker: the next write under it removes the marker first. */
export function trackSweptMarker(cookedDir: string, marker: string): void {
  sweptMarkers.set(path.resolve(cookedDir) + path.sep, { file: marker, present: true });
  markersPresent = 0;
  for (const m of sweptMarkers.values()) if (m.present) markersPresent++;
}

/**
 * Call before anything writes `target` (this thread does it in writeOutput; a cook worker's write
 * must be announced by the main thread before the job goes out: the workers track no marker).
 */
export function beforeCookedWrite(target: string): void {
  if (markersPresent === 0) return;
  const abs = path.resolve(target);
  for (const [dir, m] of sweptMarkers) {
    if (!m.present || !abs.startsWith(dir)) continue;
    try {
      fs.rmSync(m.file, { force: true });
    } catch (e) {
      throw errors.ioFailed(m.file, 'remove', e);
    }
    m.present = false;
    markersPresent--;
  }
}

/** Read a source file. Synchronous for the same reason as writeOutput. */
/** A source's whole content; a failure is the I/O error naming it (a cook worker's text copy reads through this too). */
export function readSource(file: string): Uint8Array {
  try {
    return fs.readFileSync(file);
  } catch (e) {
    throw errors.ioFailed(file, 'read', e);
  }
}

/** Cook one package asset (cache first) on this thread. */
export async function cookPackageAsset(record: AssetRecord, ctx: AssetCookContext, check: CacheCheck = checkCache(record, ctx)): Promise<AssetCookResult> {
  const t0 = performance.now();
  if (check.hit) return cachedResult(check.entry, cookedPathFor(ctx.cookedDir, record), t0);
  let source: Uint8Array;
  try {
    source = readSource(record.file);
  } catch (e) {
    ctx.cache.delete(record.guid);
    return { status: 'failed', reason: check.reason, error: asCookError(e, record.file), bytesIn: 0, bytesOut: 0, strippedExports: 0, nulledRefs: 0, ms: performance.now() - t0 };
  }
  return commitPackageOutcome(record, ctx, check.reason, await cookPackageSource(source, record.file, ctx, record.packagePath), t0);
}

/**
 * Make a package's cook outcome (this thread's or a cook worker's) the asset's output: write the
 * LCKD file (unless the worker has: `written`), then record it in the cache (only after the output
 * is on disk), and say what happened.
 */
export function commitPackageOutcome(
  record: AssetRecord,
  ctx: AssetCookContext,
  reason: RecookReason,
  o: PackageCookOutcome,
  t0: number,
  written?: WrittenOutput,
  output = cookedPathFor(ctx.cookedDir, record),
): AssetCookResult {
  const materials = o.materials ? { materials: o.materials } : {};
  // The output is overwritten in place below: its old entry goes first (see cookCache.ts). A cook
  // worker's output (`written`) is on disk already: its caller dropped the entry before sending it.
  if (!written) ctx.cache.delete(record.guid);
  const fail = (error: LuminaError): AssetCookResult => {
    return { status: 'failed', reason, error, bytesIn: o.sourceSize, bytesOut: 0, strippedExports: 0, nulledRefs: 0, ms: performance.now() - t0, ...materials };
  };
  if (o.status === 'failed' || !o.lckd) return fail(new LuminaError(o.error ?? { code: 'COOK_FAILED', message: 'cooking failed', file: record.file }));
  const lckd = o.lckd;
  let file: WrittenOutput;
  try {
    file = written ?? writeAssetOutput(output, lckd);
  } catch (e) {
    // An output we could not write is not the asset's fault: never paper over it with verbatim.
    return fail(asCookError(e, record.file));
  }
  const out = { cookedXxh64: file.cookedXxh64, bytes: lckd };
  if (o.status === 'verbatim') {
    // Not cached: the next cook tries again, so a fixed tool or setting takes effect.
    return { status: 'verbatim', reason, error: new LuminaError(o.error!), output, identity: `verbatim:${o.contentHash}:${lckd.byteLength}`, ...out, bytesIn: o.sourceSize, bytesOut: lckd.byteLength, strippedExports: 0, nulledRefs: 0, ms: performance.now() - t0, ...materials };
  }
  for (const w of o.warnings) ctx.onWarning?.(w);
  if (o.fallbacks.length) {
    // A texture that fell back to RGBA8 is not what its settings ask for: it ships, but is never
    // cached (nor published) under the key of the real encoding, so the next cook tries again.
    for (const f of o.fallbacks) ctx.onTextureFallback?.(f.file, f.reason);
    const warnings = o.fallbacks.map((f): LuminaLog => ({ code: 'TEXTURE_INVALID', message: `stored as RGBA8: ${f.reason}`, file: f.file }));
    const identity = `fallback:${o.rawXxh64}:${o.rawSize}:${lckd.byteLength}`;
    return { status: 'cooked', reason, output, identity, ...out, warnings, bytesIn: o.sourceSize, bytesOut: lckd.byteLength, strippedExports: o.strippedExports, nulledRefs: o.nulledRefs, ms: performance.now() - t0, ...materials };
  }
  const key = keyForRecord(record, ctx, o.texture, o.contentHash, o.classes);
  const ms = performance.now() - t0;
  const entry = ctx.cache.set(record.guid, key, {
    cookedFile: record.virtualPath.slice(1),
    rawSize: o.rawSize,
    xxh64: o.rawXxh64!,
    cookedXxh64: out.cookedXxh64,
    sourceSize: o.sourceSize,
    strippedExports: o.strippedExports,
    nulledRefs: o.nulledRefs,
    texture: o.texture,
    classes: o.classes,
    cookMs: Math.round(ms),
  }, file);
  // Spelled out, not spread in: every cooked package's result of a first cook comes through here
  // (one hidden class for all of them; see cookCache.ts set).
  const res: AssetCookResult = {
    status: 'cooked',
    reason,
    output,
    identity: identityOf(entry),
    cookedXxh64: file.cookedXxh64,
    bytes: lckd,
    key,
    entry,
    bytesIn: o.sourceSize,
    bytesOut: lckd.byteLength,
    strippedExports: o.strippedExports,
    nulledRefs: o.nulledRefs,
    ms,
  };
  if (o.materials) res.materials = o.materials;
  return res;
}

/** Ship one text asset: copied byte for byte (cache first). */
export async function cookTextAsset(record: AssetRecord, ctx: AssetCookContext, check: CacheCheck = checkCache(record, ctx)): Promise<AssetCookResult> {
  const t0 = performance.now();
  const output = cookedPathFor(ctx.cookedDir, record);
  if (check.hit) return cachedResult(check.entry, output, t0);
  try {
    const source = readSource(record.file);
    ctx.cache.delete(record.guid);
    return textCopied(record, ctx, check.reason, source.byteLength, writeAssetOutput(output, source), output, t0);
  } catch (e) {
    ctx.cache.delete(record.guid);
    return textFailed(check.reason, asCookError(e, record.file), t0);
  }
}

/**
 * Make a cook worker's copy of a text asset (JobResult `copied`: its output is on disk, the entry
 * dropped before the job went out) the asset's output: cookTextAsset's cache entry and result.
 */
export function commitTextCopy(record: AssetRecord, ctx: AssetCookContext, reason: RecookReason, copied: number, written: WrittenOutput, output: string, t0: number): AssetCookResult {
  try {
    return textCopied(record, ctx, reason, copied, written, output, t0);
  } catch (e) {
    ctx.cache.delete(record.guid);
    return textFailed(reason, asCookError(e, record.file), t0);
  }
}

/** A text asset's `n` bytes copied to `output` (`written`: their xxh64, size and mtime there): recorded in the cache. */
function textCopied(record: AssetRecord, ctx: AssetCookContext, reason: RecookReason, n: number, written: WrittenOutput, output: string, t0: number): AssetCookResult {
  const h = written.cookedXxh64;
  const key = keyForRecord(record, ctx, false, h);
  const ms = performance.now() - t0;
  const entry = ctx.cache.set(record.guid, key, {
    cookedFile: record.virtualPath.slice(1),
    rawSize: n,
    xxh64: h,
    sourceSize: n,
    strippedExports: 0,
    nulledRefs: 0,
    texture: false,
    cookMs: Math.round(ms),
  }, written);
  return { status: 'cooked', reason, output, identity: identityOf(entry), key, entry, bytesIn: n, bytesOut: n, strippedExports: 0, nulledRefs: 0, ms };
}

function textFailed(reason: RecookReason, error: LuminaError, t0: number): AssetCookResult {
  return { status: 'failed', reason, error, bytesIn: 0, bytesOut: 0, strippedExports: 0, nulledRefs: 0, ms: performance.now() - t0 };
}

/** What identifies an output's bytes in a pak fingerprint. */
export function identityOf(e: CacheEntry): string {
  return `${e.xxh64}:${e.rawSize}:${e.cookedSize}`;
}

/**
 * The result of an asset whose cache entry still holds (`checkCache` hit): its output as recorded.
 * `t0` 0: no time taken (a hit's microseconds are not cook time). `slim`: without the entry and
 * key, which a full cook's held results drop (one object per asset instead of three).
 */
export function cachedResult(e: CacheEntry, output: string, t0: number, slim = false): AssetCookResult {
  const ms = t0 === 0 ? 0 : performance.now() - t0;
  if (slim) return { status: 'cached', output, identity: identityOf(e), cookedXxh64: e.cookedXxh64, bytesIn: e.sourceSize, bytesOut: e.cookedSize, strippedExports: e.strippedExports, nulledRefs: e.nulledRefs, ms };
  return { status: 'cached', output, identity: identityOf(e), cookedXxh64: e.cookedXxh64, key: { key: e.key, parts: e.parts }, entry: e, bytesIn: e.sourceSize, bytesOut: e.cookedSize, strippedExports: e.strippedExports, nulledRefs: e.nulledRefs, ms };
}
