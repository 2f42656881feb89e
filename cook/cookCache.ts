/**
 * The cook cache: `Intermediates/CookCache.json`, guid -> what the last cook of that asset wrote.
 *
 * An entry is reused when its key matches and its output is still there with the recorded size.
 * key = hash(content hash : COOK_FORMAT_VERSION : settings hash), and the parts are stored beside
 * the key so the log can say WHY an asset re-cooked (new, content, settings, format, output).
 *
 * Only settings that change cooked bytes are hashed, and only for the assets they affect:
 * every package depends on the editor-only class prefixes and the compression level; packages
 * with a texture export also on the texture settings. Soft/hard traversal, onCookFailure,
 * concurrency and pak settings change which assets ship, never an asset's bytes, so they are out.
 *
 * A package's cooked bytes do not depend on the packages it imports (imports are GUIDs), so an
 * entry has no dependency keys: changing a dependency never re-cooks its referrers.
 *
 * Crash safety: the cooked file is written (atomically) before its entry is recorded, and the
 * manifest is saved atomically; a cache lost in a crash only costs a re-cook. A manifest that
 * cannot be read is a warning and a clean cook, never a failure.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { errors, type LuminaError } from '../src/errors.js';
import { writeFileAtomic } from '../src/util/atomicWrite.js';
import { hashString } from '../src/util/hash.js';
import type { ProjectConfig } from '../config/index.js';

/** Bump when the cooked bytes for the same input and settings change. */
export const COOK_FORMAT_VERSION = 1;
export const CACHE_FILE_NAME = 'CookCache.json';
// 2: entries record the output's mtime and the cooked path is part of a hit.
const MANIFEST_VERSION = 2;

export type RecookReason = 'new' | 'content' | 'settings' | 'format' | 'output';

export interface CacheEntry {
  key: string;
  contentHash: string;
  settingsHash: string;
  formatVersion: number;
  /** Relative to the cooked folder, `/`-separated. */
  cookedFile: string;
  /** Size of the LCKD file on disk. */
  cookedSize: number;
  /**
   * mtime of the output when it was recorded. A kill between overwriting an output and saving the
   * manifest leaves an entry that describes the old bytes; the mtime no longer matches then.
   */
  cookedMtimeMs: number;
  /** Raw (uncompressed) cooked package bytes. */
  rawSize: number;
  /** xxh64 of the raw cooked bytes, 16 hex digits. */
  xxh64: string;
  /** Size of the source file. */
  sourceSize: number;
  strippedExports: number;
  nulledRefs: number;
  /** The package held a texture export, so texture settings are part of its key. */
  texture: boolean;
}

/** What the last cook wrote for a chunk's pak, so an unchanged pak is not rewritten. */
export interface PakRecord {
  /** Hash of everything that goes into the pak (entry paths and content identities, options). */
  fingerprint: string;
  size: number;
  entries: number;
}

interface Manifest {
  version: number;
  formatVersion: number;
  entries: Record<string, CacheEntry>;
  paks?: Record<string, PakRecord>;
}

/** The settings that change cooked bytes, split by what they affect. */
export function settingsHashes(config: Pick<ProjectConfig, 'cook' | 'textures'>): { package: string; texture: string } {
  const pkg = { editorOnlyClassPrefixes: [...config.cook.editorOnlyClassPrefixes], compressionLevel: config.cook.compressionLevel };
  const tex = { ...pkg, textures: { encoder: config.textures.encoder, maxSize: config.textures.maxSize } };
  return { package: hashString(canonicalJson(pkg)), texture: hashString(canonicalJson(tex)) };
}

/** JSON with object keys sorted at every level: the same settings always hash the same. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .filter((k) => o[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

export function cacheKey(contentHash: string, settingsHash: string, formatVersion = COOK_FORMAT_VERSION): string {
  return hashString(`${contentHash}:${formatVersion}:${settingsHash}`);
}

export type CacheCheck = { hit: true; entry: CacheEntry } | { hit: false; reason: RecookReason };

export class CookCache {
  private entries: Map<string, CacheEntry>;
  private paks = new Map<string, PakRecord>();
  private dirty = false;

  private constructor(
    readonly file: string,
    readonly cookedDir: string,
    entries: Map<string, CacheEntry>,
  ) {
    this.entries = entries;
  }

  /**
   * Load the manifest. Never throws for a bad cache: a missing file is an empty cache, an
   * unreadable one is an empty cache plus a CACHE_INVALID warning in `warning`.
   */
  static async load(file: string, cookedDir: string): Promise<{ cache: CookCache; warning?: LuminaError }> {
    let text: string;
    try {
      text = await fsp.readFile(file, 'utf8');
    } catch (e) {
      const empty = new CookCache(file, cookedDir, new Map());
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { cache: empty };
      return { cache: empty, warning: errors.cacheInvalid(file, `cannot be read (${(e as NodeJS.ErrnoException).code ?? e}); cooking everything`) };
    }
    try {
      const m = JSON.parse(text) as Manifest;
      if (!m || typeof m !== 'object' || m.version !== MANIFEST_VERSION || typeof m.entries !== 'object' || m.entries === null) {
        throw new Error(`manifest version ${m?.version} is not ${MANIFEST_VERSION}`);
      }
      const entries = new Map<string, CacheEntry>();
      for (const [guid, e] of Object.entries(m.entries)) {
        if (!isEntry(e)) throw new Error(`entry ${guid} is malformed`);
        entries.set(guid, e);
      }
      const cache = new CookCache(file, cookedDir, entries);
      for (const [chunk, p] of Object.entries(m.paks ?? {})) {
        if (p && typeof p.fingerprint === 'string' && typeof p.size === 'number' && typeof p.entries === 'number') cache.paks.set(chunk, p);
      }
      return { cache };
    } catch (e) {
      return { cache: new CookCache(file, cookedDir, new Map()), warning: errors.cacheInvalid(file, `${(e as Error).message}; cooking everything`) };
    }
  }

  get size(): number {
    return this.entries.size;
  }

  peek(guid: string): CacheEntry | undefined {
    return this.entries.get(guid);
  }

  /**
   * Is the asset's last cook still valid? `contentHash` is the registry's hash of the source;
   * `settingsHash` the current hash of the settings that affect it (a function when that depends
   * on whether the last cook found a texture export). Stats the output file (size must match).
   */
  async check(guid: string, contentHash: string, settingsHash: string | ((texture: boolean) => string), cookedFile?: string): Promise<CacheCheck> {
    const e = this.entries.get(guid);
    if (!e) return { hit: false, reason: 'new' };
    // A renamed or moved asset keeps its GUID but ships under a new path.
    if (cookedFile !== undefined && e.cookedFile !== cookedFile) return { hit: false, reason: 'output' };
    const want = typeof settingsHash === 'string' ? settingsHash : settingsHash(e.texture);
    if (e.formatVersion !== COOK_FORMAT_VERSION) return { hit: false, reason: 'format' };
    if (e.contentHash !== contentHash) return { hit: false, reason: 'content' };
    if (e.settingsHash !== want) return { hit: false, reason: 'settings' };
    if (e.key !== cacheKey(contentHash, want)) return { hit: false, reason: 'format' };
    // Synchronous: a stat of a cached inode is a few microseconds, the promise round trip several
    // times that, and a no-op re-cook of 20k assets is mostly these stats (440 -> ~200 ms measured).
    let st: fs.Stats | undefined;
    try {
      st = fs.statSync(path.join(this.cookedDir, e.cookedFile), { throwIfNoEntry: false });
    } catch {
      st = undefined;
    }
    if (!st || !st.isFile() || st.size !== e.cookedSize || st.mtimeMs !== e.cookedMtimeMs) return { hit: false, reason: 'output' };
    return { hit: true, entry: e };
  }

  /** Record a cook whose output is already on disk (its size and mtime are read from it here). */
  set(guid: string, entry: Omit<CacheEntry, 'key' | 'formatVersion' | 'cookedSize' | 'cookedMtimeMs'>): CacheEntry {
    const st = fs.statSync(path.join(this.cookedDir, entry.cookedFile));
    const full: CacheEntry = {
      ...entry,
      cookedSize: st.size,
      cookedMtimeMs: st.mtimeMs,
      formatVersion: COOK_FORMAT_VERSION,
      key: cacheKey(entry.contentHash, entry.settingsHash),
    };
    this.entries.set(guid, full);
    this.dirty = true;
    return full;
  }

  delete(guid: string): void {
    if (this.entries.delete(guid)) this.dirty = true;
  }

  /** Drop entries for assets no longer in the registry at all. */
  prune(keep: (guid: string) => boolean): number {
    let n = 0;
    for (const guid of [...this.entries.keys()]) {
      if (!keep(guid)) {
        this.entries.delete(guid);
        n++;
      }
    }
    if (n) this.dirty = true;
    return n;
  }

  /** The pak record of `pakFile` (a path relative to the project or absolute: callers pick one). */
  getPak(pakFile: string): PakRecord | undefined {
    return this.paks.get(pakFile);
  }

  setPak(pakFile: string, record: PakRecord | undefined): void {
    if (record) this.paks.set(pakFile, record);
    else this.paks.delete(pakFile);
    this.dirty = true;
  }

  /** Save atomically when anything changed. Entries are written sorted by GUID. */
  async save(): Promise<void> {
    if (!this.dirty) return;
    const entries: Record<string, CacheEntry> = {};
    for (const guid of [...this.entries.keys()].sort()) entries[guid] = this.entries.get(guid)!;
    const paks: Record<string, PakRecord> = {};
    for (const k of [...this.paks.keys()].sort()) paks[k] = this.paks.get(k)!;
    const m: Manifest = { version: MANIFEST_VERSION, formatVersion: COOK_FORMAT_VERSION, entries, paks };
    await writeFileAtomic(this.file, Buffer.from(JSON.stringify(m), 'utf8'));
    this.dirty = false;
  }
}

function isEntry(e: unknown): e is CacheEntry {
  if (!e || typeof e !== 'object') return false;
  const o = e as Record<string, unknown>;
  return (
    typeof o.key === 'string' &&
    typeof o.contentHash === 'string' &&
    typeof o.settingsHash === 'string' &&
    typeof o.formatVersion === 'number' &&
    typeof o.cookedFile === 'string' &&
    !o.cookedFile.split('/').includes('..') &&
    typeof o.cookedSize === 'number' &&
    typeof o.cookedMtimeMs === 'number' &&
    typeof o.rawSize === 'number' &&
    typeof o.xxh64 === 'string' &&
    typeof o.sourceSize === 'number' &&
    typeof o.strippedExports === 'number' &&
    typeof o.nulledRefs === 'number' &&
    typeof o.texture === 'boolean'
  );
}
