/**
 * The shader half of a cook: from the shipped packages' materials (plus config `shaders.global`)
 * to one `ShaderCache.bin` per chunk.
 *
 * 1. Permutations. Each shipped material adds (source, entry, stage, sorted defines) for every
 *    entry point its source's sidecar declares; the same permutation asked for by several
 *    materials is compiled once and remembers who asked (for error messages) and which chunks
 *    need it. `shaders.global` sources add their entries with no defines, in Main.
 * 2. Cache key per permutation: the compiler's and validator's name and version, the
 *    permutation's text, the source language, and the virtual path and xxh64 of the source and of
 *    every file it includes, transitively (ShaderRegistry.closure). Editing an include therefore
 *    changes the keys of exactly the permutations whose source reaches it; nothing else re-compiles.
 * 3. Misses are compiled in parallel, at most one per core (the child pool in src/util/runChild
 *    bounds it too), each with a timeout; a hung or crashed compiler is killed with its process
 *    group and reported naming the source and the permutation. Output is validated with spirv-val
 *    before it is stored (ShaderStore) or packed.
 *
 * Problems are reported through `report` as typed errors, never thrown: a source that does not
 * compile (file:line:column and the material that asked), a material naming a shader that is not
 * there, a refused define, a bad sidecar, a missing include, an include cycle. Any of them makes
 * `ok` false, which fails the cook like a corrupt asset.
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import PQueue from 'p-queue';
import type { ProjectConfig } from '../../config/index.js';
import { errors, type LuminaError } from '../../src/errors.js';
import { describePermutation, encodeShaderCache, permutationText, sortDefines, type PermutationId, type ShaderPermutation } from '../../src/format/shaderCache.js';
import { silentLogger, type Logger } from '../../src/log/logger.js';
import type { ShaderClosure, ShaderRegistry } from '../../src/registry/ShaderRegistry.js';
import type { ShaderLanguage } from '../../src/registry/shaderSources.js';
import type { AssetRecord } from '../../src/registry/types.js';
import { hashHex, hashString, initHash, xxh64 } from '../../src/util/hash.js';
import { canonicalJson } from '../cookCache.js';
import { checkDefine, compileShader, detectCompiler, SHADER_TOOLS_FILE, type ShaderCompiler } from './compiler.js';
import { MATERIALS_CACHE_FILE, materialsTable, scanMaterials, type KnownMaterials, type MaterialsMemo } from './materials.js';
import { readShaderCookMemo, shaderCookInputs, shaderCookMemoKey, writeShaderCookMemo, type ShaderCookMemo } from './shaderCookMemo.js';
import type { ShaderRemote, ShaderRemoteRequest } from './ShaderRemote.js';
import { ShaderStore } from './ShaderStore.js';

/** The closure's files still hold the bytes its hashes (and so the cache key) were made from. */
async function closureUnchanged(c: ShaderClosure, shaders: ShaderRegistry): Promise<boolean> {
  for (const f of c.files) {
    const file = shaders.get(f.virtualPath)?.file;
    if (file === undefined) return false;
    const bytes = await fsp.readFile(file).catch(() => undefined);
    if (bytes === undefined || hashHex(xxh64(bytes)) !== f.hash) return false;
  }
  return true;
}

/** Bump when what a permutation's cached code means changes (arguments given to the compiler...). */
export const SHADER_COOK_VERSION = 1;
export const GLOBAL_ASKER = 'shaders.global';
const MAIN_CHUNK = 'Main';

export interface ShaderCookOptions {
  config: Pick<ProjectConfig, 'intermediatesDir' | 'configFile' | 'shaders'>;
  /** Scanned. */
  shaders: ShaderRegistry;
  /** The shipped packages and the chunk each ships in. */
  packages: ReadonlyArray<{ record: AssetRecord; chunk: string }>;
  /** Every chunk that gets a pak (each gets a ShaderCache.bin, empty or not). */
  chunks: readonly string[];
  report: (e: LuminaError) => void;
  log?: Logger;
  signal?: AbortSignal;
  /** Use this compiler instead of the one found on PATH (tests stand in a tool that hangs or crashes). */
  compiler?: ShaderCompiler;
  /** Remove cache entries this cook did not use (a full cook does; default true). */
  prune?: boolean;
  /** A shared cache asked after a local miss, before compiling, and offered what was compiled. */
  remote?: ShaderRemote;
  /**
   * Cook only these permutations (by {@link permutationText}) of all that are asked for: a shard's
   * share. Every permutation of the share is offered to `remote`, local cache hits too.
   */
  share?: (texts: readonly string[]) => ReadonlySet<string>;
  /** Materials a cook already parsed (see scanMaterials' `known`): those packages are not read again. */
  knownMaterials?: KnownMaterials;
  /** Read only packages whose class is a material (see scanMaterials). */
  materialClassOnly?: boolean;
  /** The materials cache as this cook's last scan left it (see scanMaterials' `memo`). */
  materials?: MaterialsMemo;
  /**
   * Names `packages` exactly (each record's content, path and file, their chunks, the order): with
   * it, a cook whose shader inputs are all the last one's takes that one's result
   * (shaderCookMemo.ts). Only for a whole cook's pass: no `remote`, `share` or `materialClassOnly`,
   * and pruning.
   */
  packagesIdentity?: string;
  /**
   * With `packagesIdentity`: the same packages, chunks and order as under this older identity
   * (a plan carried over edits that kept every planning fact), but for the content of `changed`.
   * When the memo under the older identity is there and no changed package had or has materials
   * (the table says so of its content before, this cook's parse of its content now), that result
   * is this one's: taken, and kept under the new identity too. A mesh edit does not scan.
   */
  carried?: { packagesIdentity: string; changed: ReadonlyArray<{ before: AssetRecord; after: AssetRecord }> };
}

export interface ShaderCookResult {
  ok: boolean;
  /** Name and version of the compiler, as written into ShaderCache.bin; "none" when none was needed and none was found. */
  compiler: string;
  permutations: number;
  compiled: number;
  cached: number;
  /** Taken from `remote` (verified), not compiled here. */
  fetched: number;
  failed: number;
  /** Packages whose materials were read (not known to the materials cache). */
  materialsRead: number;
  /** `ShaderCache.bin` per chunk. */
  chunkBytes: Map<string, Uint8Array>;
  /** Every permutation of the cook in one `ShaderCache.bin`: what `Saved/Cooked/ShaderCache.bin` holds. */
  allBytes: Uint8Array;
  /** What was compiled this time (not from the cache), as `describePermutation` text, sorted. */
  compiledList: string[];
}

interface Wanted {
  id: PermutationId;
  language: ShaderLanguage;
  file: string;
  askedBy: Set<string>;
  chunks: Set<string>;
  key?: string;
  code?: Uint8Array;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Cook every shader permutation the shipped content needs. See the module comment. */
export async function cookShaders(opts: ShaderCookOptions): Promise<ShaderCookResult> {
  await initHash();
  const log = opts.log ?? silentLogger;
  const { config, shaders } = opts;
  let ok = true;
  const fail = (e: LuminaError) => {
    ok = false;
    opts.report(e);
  };

  // ---- 0. the last cook's result, when nothing it was made from changed ----
  const found = opts.compiler ?? (await detectCompiler(path.join(config.intermediatesDir, SHADER_TOOLS_FILE)));
  const tableFile = path.join(config.intermediatesDir, MATERIALS_CACHE_FILE);
  const memoInputs =
    opts.packagesIdentity !== undefined && !opts.remote && !opts.share && !opts.materialClassOnly && opts.prune !== false
      ? shaderCookInputs({ packagesIdentity: opts.packagesIdentity, chunks: opts.chunks, config, shaders, compiler: found })
      : undefined;
  if (memoInputs !== undefined) {
    const key = shaderCookMemoKey(memoInputs, tableFile);
    let taken = await takeMemo(config.intermediatesDir, key === undefined ? undefined : readShaderCookMemo(config.intermediatesDir, key));
    if (!taken && key !== undefined && opts.carried) {
      const before = shaderCookInputs({ packagesIdentity: opts.carried.packagesIdentity, chunks: opts.chunks, config, shaders, compiler: found });
      const beforeKey = before === undefined ? undefined : shaderCookMemoKey(before, tableFile);
      const memo = beforeKey === undefined ? undefined : readShaderCookMemo(config.intermediatesDir, beforeKey);
      const noMaterials = memo && carriedNoMaterials(opts.carried.changed, memo.noMaterials, config.intermediatesDir, opts.knownMaterials, opts.materials);
      if (memo && noMaterials) {
        taken = await takeMemo(config.intermediatesDir, memo);
        // The next cook of this content (a no-op, another edit) finds it under this key.
        if (taken) writeShaderCookMemo(config.intermediatesDir, key, { ...memo, noMaterials });
      }
    }
    if (taken) {
      log.debug({ permutations: taken.permutations }, "shader cook: the last cook's result, nothing it depends on changed");
      if (taken.permutations) log.info({ permutations: taken.permutations, compiled: 0, cached: taken.permutations, fetched: 0, failed: 0, compiler: taken.compiler }, 'shaders cooked');
      return taken;
    }
  }

  // ---- 1. what is asked for ----
  const wanted = new Map<string, Wanted>();
  const badSources = new Map<string, LuminaError | null>();
  /** Checks a source once; false (and one report) when it cannot be compiled. */
  const sourceUsable = (source: string): boolean => {
    if (badSources.has(source)) return badSources.get(source) === null;
    const rec = shaders.get(source);
    let problem: LuminaError | null = null;
    if (rec && rec.kind === 'source') {
      problem = shaders.sidecarProblem(rec) ?? null;
      if (!problem) {
        try {
          shaders.closure(source);
        } catch (e) {
          problem = e as LuminaError;
        }
      }
    }
    badSources.set(source, problem);
    if (problem) fail(problem);
    return problem === null;
  };
  const ask = (source: string, defines: string[], asker: string, chunk: string): void => {
    const rec = shaders.get(source)!;
    for (const e of rec.entries ?? []) {
      const id: PermutationId = { source, entry: e.name, stage: e.stage, defines };
      const text = permutationText(id);
      let w = wanted.get(text);
      if (!w) wanted.set(text, (w = { id, language: rec.language, file: rec.file, askedBy: new Set(), chunks: new Set() }));
      w.askedBy.add(asker);
      w.chunks.add(chunk);
    }
  };

  const scan = await scanMaterials(
    opts.packages.map((p) => p.record),
    config.intermediatesDir,
    { known: opts.knownMaterials, materialClassOnly: opts.materialClassOnly, memo: opts.materials },
  );
  // Only packages with materials ask for anything: sorting just those is the same order of asks.
  // Sorted by index on their paths, each read once (ties in list order, as the stable sort of the
  // packages themselves gave): the comparator read two records' packagePath per comparison.
  const withMaterials = opts.packages.filter((p) => scan.byPackage.has(p.record.guid));
  const paths = withMaterials.map((p) => p.record.packagePath);
  const order = Array.from(paths.keys()).sort((a, b) => cmp(paths[a], paths[b]) || a - b);
  for (const k of order) {
    const { record, chunk } = withMaterials[k];
    const found = scan.byPackage.get(record.guid)!;
    if (found.error) fail(found.error);
    for (const m of found.materials) {
      const rec = shaders.get(m.source);
      if (!rec || rec.kind !== 'source') {
        fail(errors.shaderNotFound(record.file, m.source, `${m.objectPath} ShaderSource`));
        continue;
      }
      const badDefine = m.defines.findIndex((d) => !checkDefine(d));
      if (badDefine >= 0) {
        fail(errors.shaderDefineInvalid(record.file, m.defines[badDefine], `${m.objectPath} ShaderDefines[${badDefine}]`));
        continue;
      }
      if (!sourceUsable(m.source)) continue;
      ask(m.source, sortDefines(m.defines), m.objectPath, chunk);
    }
  }
  const globalChunk = opts.chunks.includes(MAIN_CHUNK) ? MAIN_CHUNK : opts.chunks[0];
  config.shaders.global.forEach((source, i) => {
    const rec = shaders.get(source);
    if (!rec || rec.kind !== 'source') {
      fail(errors.shaderNotFound(config.configFile, source, `shaders.global[${i}]`));
      return;
    }
    if (globalChunk !== undefined && sourceUsable(source)) ask(source, [], GLOBAL_ASKER, globalChunk);
  });

  // ---- 2. compiler and keys ----
  let list = [...wanted.values()].sort((a, b) => cmp(permutationText(a.id), permutationText(b.id)));
  if (opts.share) {
    const mine = opts.share(list.map((w) => permutationText(w.id)));
    list = list.filter((w) => mine.has(permutationText(w.id)));
  }
  const compiler: ShaderCompiler | undefined = typeof found === 'string' ? undefined : found;
  if (!compiler && list.length) fail(errors.shaderCompilerMissing(list[0].file, found as string));
  const store = new ShaderStore(config.intermediatesDir);
  const closures = new Map<string, ShaderClosure>();
  for (const w of list) {
    if (!compiler) break;
    let c = closures.get(w.id.source);
    if (!c) closures.set(w.id.source, (c = shaders.closure(w.id.source)));
    w.key = hashString(
      canonicalJson({ v: SHADER_COOK_VERSION, compiler: compiler.id, validator: compiler.validatorId, permutation: permutationText(w.id), language: w.language, files: c.files }),
    );
  }

  // ---- 3. cache, then compile what is missing ----
  let compiled = 0;
  let cached = 0;
  let fetched = 0;
  let failed = 0;
  const { remote } = opts;
  const remoteRequest = (w: Wanted): ShaderRemoteRequest => ({
    id: w.id,
    language: w.language,
    compiler: compiler!,
    files: closures.get(w.id.source)!.files.map((f) => ({ ...f, file: shaders.get(f.virtualPath)?.file ?? '' })),
    file: w.file,
    timeoutMs: config.shaders.timeoutMs,
    signal: opts.signal,
  });
  const compiledList: string[] = [];
  // Code shipped but not cached (a source edited while it compiled): this result is not kept either.
  let uncached = false;
  if (compiler) {
    const queue = new PQueue({ concurrency: Math.max(1, config.shaders.concurrency || os.availableParallelism()) });
    for (const w of list) {
      void queue.add(async () => {
        const hit = await store.get(w.key!);
        if (hit) {
          w.code = hit;
          cached++;
          // A shard's whole share must reach the shared cache, what this machine had too.
          if (remote && opts.share) void remote.publish(remoteRequest(w), hit, 0);
          return;
        }
        const got = remote && compiler.languages.has(w.language) ? await remote.fetch(remoteRequest(w)) : undefined;
        if (got) {
          w.code = got;
          fetched++;
          try {
            await store.put(w.key!, got);
          } catch (e) {
            log.warn({ code: 'IO_FAILED', file: store.dir }, `shader cache entry not saved: ${(e as Error).message}`);
          }
          return;
        }
        if (!compiler.languages.has(w.language)) {
          failed++;
          fail(errors.shaderCompilerMissing(w.file, `${compiler.id} cannot compile ${w.language} sources (${describePermutation(w.id)}); .slang needs Slang's slangc on PATH`));
          return;
        }
        const asker = askedByText(w);
        const res = await compileShader(compiler, {
          file: w.file,
          language: w.language,
          entry: w.id.entry,
          stage: w.id.stage,
          defines: w.id.defines,
          includeDirs: shaders.includeDirs,
          timeoutMs: config.shaders.timeoutMs,
          signal: opts.signal,
        });
        if (res.ok) {
          w.code = res.code;
          compiled++;
          compiledList.push(describePermutation(w.id));
          // The compiler read the files itself, after the scan hashed them: an edit in between
          // (an editor saving in place) would file this code under the key of bytes it was not
          // compiled from, here and in the shared cache. Shipped, not cached; the edit's own
          // re-cook compiles it under its key.
          if (!(await closureUnchanged(closures.get(w.id.source)!, shaders))) {
            uncached = true;
            log.debug({ file: w.file, permutation: describePermutation(w.id) }, 'a shader source changed while it compiled: not cached');
            return;
          }
          try {
            await store.put(w.key!, res.code);
          } catch (e) {
            log.warn({ code: 'IO_FAILED', file: store.dir }, `shader cache entry not saved: ${(e as Error).message}`);
          }
          if (remote) void remote.publish(remoteRequest(w), res.code, res.ms);
          return;
        }
        failed++;
        if (res.kind === 'error') {
          const d = res.diagnostics[0];
          const where = `${virtualOf(shaders, d.file)}:${d.line}:${d.column}`;
          fail(errors.shaderCompileFailed(d.file, where, d.message, describePermutation(w.id), asker));
        } else if (res.kind === 'crash') {
          fail(errors.shaderCompilerFailed(w.file, describePermutation(w.id), res.why, asker));
        } else {
          fail(errors.shaderSpirvInvalid(w.file, describePermutation(w.id), res.why));
        }
      });
    }
    await queue.onIdle();
    await remote?.flush();
    if (ok && opts.prune !== false) await store.prune(new Set(list.map((w) => w.key!))).catch(() => 0);
  }

  // ---- 4. one ShaderCache.bin per chunk, and the whole set ----
  const id = compiler?.id ?? 'none';
  const done = list.filter((w) => w.code);
  const perm = (w: Wanted): ShaderPermutation => ({ ...w.id, key: 0n, code: w.code! });
  const chunkBytes = new Map<string, Uint8Array>();
  for (const chunk of opts.chunks) chunkBytes.set(chunk, encodeShaderCache({ compiler: id, permutations: done.filter((w) => w.chunks.has(chunk)).map(perm) }));
  const allBytes = encodeShaderCache({ compiler: id, permutations: done.map(perm) });
  compiledList.sort(cmp);
  if (list.length) log.info({ permutations: list.length, compiled, cached, fetched, failed, compiler: id }, 'shaders cooked');
  if (memoInputs !== undefined && ok && !uncached && done.length === list.length) {
    // Under the materials table as this scan left it (written or not).
    const key = shaderCookMemoKey(memoInputs, tableFile);
    if (key !== undefined) writeShaderCookMemo(config.intermediatesDir, key, { compiler: id, permutations: list.length, storeKeys: compiler ? list.map((w) => w.key!) : [], chunkBytes, allBytes });
  }
  return { ok, compiler: id, permutations: list.length, compiled, cached, fetched, failed, materialsRead: scan.read, chunkBytes, allBytes, compiledList };
}

/**
 * The memo kept under `key` as this cook's result, when the shader cache still holds every entry
 * it used (its counts say cached); the cache is pruned to them as the cook would. Else undefined.
 */
async function takeMemo(intermediatesDir: string, memo: ShaderCookMemo | undefined): Promise<ShaderCookResult | undefined> {
  if (!memo) return undefined;
  const store = new ShaderStore(intermediatesDir);
  const keep = new Set(memo.storeKeys);
  if (keep.size) {
    const held = store.keys();
    for (const k of keep) if (!held.has(k)) return undefined;
    await store.prune(keep).catch(() => 0);
  }
  const n = memo.permutations;
  return { ok: true, compiler: memo.compiler, permutations: n, compiled: 0, cached: n, fetched: 0, failed: 0, materialsRead: 0, chunkBytes: memo.chunkBytes, allBytes: memo.allBytes, compiledList: [] };
}

/** A carried memo keeps at most this many packages' content known to have no materials beyond the table. */
const MAX_CARRIED_NO_MATERIALS = 256;

/**
 * Whether no changed package had materials (or a material error) in its content before (the
 * materials table's record of that content says none, or the memo carried says so of it) nor has
 * any in its content now (this cook parsed it: `known` holds its hash alone). Then the memo's
 * list of such contents with the changed packages' new ones (the table still names their old
 * content: it is not rewritten for them); else undefined. Anything not known so is a no.
 */
function carriedNoMaterials(
  changed: ReadonlyArray<{ before: AssetRecord; after: AssetRecord }>,
  carried: Readonly<Record<string, string>> | undefined,
  intermediatesDir: string,
  known: KnownMaterials | undefined,
  memo: MaterialsMemo | undefined,
): Record<string, string> | undefined {
  if (!changed.length || !known) return undefined;
  const table = materialsTable(intermediatesDir, memo);
  if (!table) return undefined;
  const out: Record<string, string> = { ...carried };
  for (const { before, after } of changed) {
    if (before.kind !== 'package' && after.kind !== 'package') continue;
    if (before.kind !== 'package' || after.kind !== 'package' || before.guid !== after.guid) return undefined;
    if (known.get(after.guid) !== after.hash) return undefined;
    if (out[before.guid] !== before.hash) {
      const i = table.find(before.guid);
      if (i < 0 || !table.hashIs(i, before.hash) || !table.blobEmpty(i)) return undefined;
    }
    out[after.guid] = after.hash;
  }
  return Object.keys(out).length <= MAX_CARRIED_NO_MATERIALS ? out : undefined;
}

/** "material /Game/M/Rock.Rock" or "materials /Game/A.A, /Game/B.B (and 3 more)" or "shaders.global". */
function askedByText(w: Wanted): string {
  const all = [...w.askedBy].sort(cmp);
  const mats = all.filter((a) => a !== GLOBAL_ASKER);
  const parts: string[] = [];
  if (mats.length === 1) parts.push(`material ${mats[0]}`);
  else if (mats.length > 1) parts.push(`materials ${mats.slice(0, 2).join(', ')}${mats.length > 2 ? ` (and ${mats.length - 2} more)` : ''}`);
  if (all.includes(GLOBAL_ASKER)) parts.push('config shaders.global');
  return parts.join(' and ');
}

/** The virtual path of a file the compiler named, or the path as it was printed. */
function virtualOf(shaders: ShaderRegistry, file: string): string {
  const abs = path.resolve(file);
  for (const r of shaders.all()) if (r.file === abs) return r.virtualPath;
  return file;
}
