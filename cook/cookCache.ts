/**
 * The cook cache: guid -> what the last cook of that asset wrote, keyed by its cook key
 * (cook/cookKey.ts). An entry is reused when its key matches and its output is still there with
 * the recorded size and mtime. The key's parts are stored too, so a miss says WHY (`new`, `output`,
 * or the first key part that changed: `content`, `format`, `settings`, ...).
 *
 * On disk it is a snapshot plus a journal, both in `Intermediates/`:
 * - `CookCache.json`: the folded state, rewritten atomically (temp + fsync + rename) only when the
 *   journal has grown past a fraction of the cache (`compact`), so no batch ever rewrites it whole;
 * - `CookCache.journal`: one JSON line per change (set, delete, pak record), appended as each asset
 *   finishes. Ctrl-C or kill -9 keeps every finished asset: the page cache has the line as soon as
 *   `write` returns. A torn last line (a kill mid-write) is dropped and cut off on load.
 * Replaying a journal over a snapshot that already holds it gives the same state (last write per
 * key wins), so a kill between writing a snapshot and emptying the journal loses nothing.
 *
 * Crash safety: an output is written (atomically) before its entry is journaled, and an entry
 * about to be overwritten in place is journaled as deleted first (`invalidate`), so no entry on
 * disk ever describes bytes that are not there. A cache that cannot be read is a warning and a
 * clean cook, never a failure.
 *
 * One writer: the project lock (cook/projectLock.ts) keeps two processes from appending at once.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { errors, type LuminaError } from '../src/errors.js';
import { writeFileAtomic } from '../src/util/atomicWrite.js';
import { changedPart, COOK_FORMAT_VERSION, type CookKey, type CookKeyPart, type CookKeyParts } from './cookKey.js';

export { COOK_FORMAT_VERSION, canonicalJson, settingsHashes } from './cookKey.js';

export const CACHE_FILE_NAME = 'CookCache.json';
export const JOURNAL_FILE_NAME = 'CookCache.journal';
// 3: entries carry the cook key's parts; a journal beside the snapshot.
const MANIFEST_VERSION = 3;

export type RecookReason = 'new' | 'output' | CookKeyPart;

export interface CacheEntry {
  key: string;
  parts: CookKeyParts;
  /** Relative to the cooked folder, `/`-separated. */
  cookedFile: string;
  /** Size of the output file on disk. */
  cookedSize: number;
  /** mtime of the output when it was recorded: an output replaced behind the cache's back no longer matches. */
  cookedMtimeMs: number;
  /** Raw (uncompressed) cooked bytes. */
  rawSize: number;
  /** xxh64 of the raw cooked bytes, 16 hex digits. */
  xxh64: string;
  /**
   * xxh64 of the whole output file as written (the LCKD container), 16 hex digits: the pak writer
   * checks the file, or the previous pak's copy of its blocks, against it before shipping them.
   * Absent in entries of older cooks and for text assets (the pak writer then checks the slow way).
   */
  cookedXxh64?: string;
  /** Size of the source file. */
  sourceSize: number;
  strippedExports: number;
  nulledRefs: number;
  /** The package held a texture export, so texture settings are part of its key. */
  texture: boolean;
  /** Class names of the package's exports: which class schemas its key depends on. */
  classes?: string[];
  /** How long the cook took (ms): the cost that balances shards. */
  cookMs?: number;
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

/** One journal line. */
type JournalOp = { s: string; e: CacheEntry } | { d: string } | { p: string; r: PakRecord | null };

export type CacheCheck = { hit: true; entry: CacheEntry } | { hit: false; reason: RecookReason };

export class CookCache {
  private readonly entries: Map<string, CacheEntry>;
  private readonly paks = new Map<string, PakRecord>();
  readonly journalFile: string;
  private fd: number | undefined;
  /** Lines in the journal now: what a compaction would fold. */
  private journalOps = 0;

  private constructor(
    readonly file: string,
    readonly cookedDir: string,
    entries: Map<string, CacheEntry>,
  ) {
    this.entries = entries;
    this.journalFile = path.join(path.dirname(file), JOURNAL_FILE_NAME);
  }

  /**
   * Load snapshot + journal. Never throws for a bad cache: a missing file is an empty cache, an
   * unreadable snapshot is an empty cache plus a CACHE_INVALID warning in `warning` (and its journal
   * is discarded with it).
   */
  static async load(file: string, cookedDir: string): Promise<{ cache: CookCache; warning?: LuminaError }> {
    let text: string | undefined;
    let warning: LuminaError | undefined;
    try {
      text = await fsp.readFile(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') warning = errors.cacheInvalid(file, `cannot be read (${(e as NodeJS.ErrnoException).code ?? e}); cooking everything`);
    }
    let cache = new CookCache(file, cookedDir, new Map());
    if (text !== undefined) {
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
        cache = new CookCache(file, cookedDir, entries);
        for (const [chunk, p] of Object.entries(m.paks ?? {})) if (isPakRecord(p)) cache.paks.set(chunk, p);
      } catch (e) {
        warning = errors.cacheInvalid(file, `${(e as Error).message}; cooking everything`);
      }
    }
    if (warning) {
      // The journal continues a snapshot we threw away: replaying it alone would be half a cache.
      await fsp.rm(cache.journalFile, { force: true }).catch(() => {});
      return { cache, warning };
    }
    cache.replayJournal();
    return { cache };
  }

  /** Fold the journal into memory; cut a torn tail so the next append starts on a clean line. */
  private replayJournal(): void {
    let buf: Buffer;
    try {
      buf = fs.readFileSync(this.journalFile);
    } catch {
      return;
    }
    let at = 0;
    let good = 0;
    while (at < buf.length) {
      const nl = buf.indexOf(0x0a, at);
      if (nl < 0) break; // a line without its newline was cut by a kill
      let op: JournalOp | undefined;
      try {
        op = JSON.parse(buf.toString('utf8', at, nl)) as JournalOp;
      } catch {
        op = undefined;
      }
      if (!op || !this.applyOp(op)) break;
      this.journalOps++;
      at = nl + 1;
      good = at;
    }
    if (good < buf.length) {
      try {
        fs.truncateSync(this.journalFile, good);
      } catch {
        // Next append would follow garbage: start the journal over instead (costs re-cooks only).
        this.entries.clear();
        this.paks.clear();
        fs.rmSync(this.journalFile, { force: true });
        this.journalOps = 0;
      }
    }
  }

  private applyOp(op: JournalOp): boolean {
    if ('s' in op && typeof op.s === 'string' && isEntry(op.e)) this.entries.set(op.s, op.e);
    else if ('d' in op && typeof op.d === 'string') this.entries.delete(op.d);
    else if ('p' in op && typeof op.p === 'string' && (op.r === null || isPakRecord(op.r))) {
      if (op.r) this.paks.set(op.p, op.r);
      else this.paks.delete(op.p);
    } else return false;
    return true;
  }

  /** Append one change to the journal: synchronous, so it is in the page cache before the next asset starts. */
  private append(op: JournalOp): void {
    try {
      if (this.fd === undefined) {
        fs.mkdirSync(path.dirname(this.journalFile), { recursive: true });
        this.fd = fs.openSync(this.journalFile, 'a');
      }
      fs.writeSync(this.fd, JSON.stringify(op) + '\n');
      this.journalOps++;
    } catch (e) {
      throw errors.ioFailed(this.journalFile, 'write', e);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  peek(guid: string): CacheEntry | undefined {
    return this.entries.get(guid);
  }

  /** Every entry, by GUID (unordered). */
  list(): IterableIterator<[string, CacheEntry]> {
    return this.entries.entries();
  }

  /**
   * Is the asset's last cook still valid? `want` gives the current key (from whether the last cook
   * found a texture export and which export classes it saw, which the entry remembers). `cookedFile` is where it ships now.
   * Stats the output file (size and mtime must match).
   */
  check(guid: string, want: (texture: boolean, classes: readonly string[] | undefined) => CookKey, cookedFile?: string): CacheCheck {
    const e = this.entries.get(guid);
    if (!e) return { hit: false, reason: 'new' };
    // A renamed or moved asset keeps its GUID but ships under a new path.
    if (cookedFile !== undefined && e.cookedFile !== cookedFile) return { hit: false, reason: 'output' };
    const k = want(e.texture, e.classes);
    if (e.key !== k.key) return { hit: false, reason: changedPart(e.parts, k.parts) ?? 'format' };
    // Synchronous: a stat of a cached inode is a few microseconds, the promise round trip several
    // times that, and a no-op re-cook of 20k assets is mostly these stats.
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
  set(guid: string, key: CookKey, entry: Omit<CacheEntry, 'key' | 'parts' | 'cookedSize' | 'cookedMtimeMs'>): CacheEntry {
    const st = fs.statSync(path.join(this.cookedDir, entry.cookedFile));
    const full: CacheEntry = { key: key.key, parts: key.parts, ...entry, cookedSize: st.size, cookedMtimeMs: st.mtimeMs };
    this.entries.set(guid, full);
    this.append({ s: guid, e: full });
    return full;
  }

  /**
   * Forget an entry whose output is about to be overwritten in place (or is gone), before the
   * overwrite: the journal must never hold an entry describing bytes no longer on disk.
   */
  delete(guid: string): void {
    if (this.entries.delete(guid)) this.append({ d: guid });
  }

  /** Drop entries for which `keep` is false. */
  prune(keep: (guid: string) => boolean): number {
    let n = 0;
    for (const guid of [...this.entries.keys()]) {
      if (!keep(guid)) {
        this.delete(guid);
        n++;
      }
    }
    return n;
  }

  /** The pak record of `pakFile` (a path relative to the project or absolute: callers pick one). */
  getPak(pakFile: string): PakRecord | undefined {
    return this.paks.get(pakFile);
  }

  setPak(pakFile: string, record: PakRecord | undefined): void {
    if (record) this.paks.set(pakFile, record);
    else if (!this.paks.delete(pakFile)) return;
    this.append({ p: pakFile, r: record ?? null });
  }

  /** Journal lines not yet folded into the snapshot. */
  get pending(): number {
    return this.journalOps;
  }

  /**
   * Fold the journal into the snapshot when it has grown past a quarter of the cache (at least
   * 1024 lines): a daemon batch or a one-file cook appends a line or two and rewrites nothing, and
   * loading never replays more than a fraction of the cache. `force` folds any journal.
   */
  async save(force = false): Promise<void> {
    if (this.journalOps === 0) return;
    if (!force && this.journalOps < Math.max(1024, this.entries.size / 4)) return;
    await this.compact();
  }

  /** Write the snapshot (sorted by GUID), then empty the journal. */
  async compact(): Promise<void> {
    const entries: Record<string, CacheEntry> = {};
    for (const guid of [...this.entries.keys()].sort()) entries[guid] = this.entries.get(guid)!;
    const paks: Record<string, PakRecord> = {};
    for (const k of [...this.paks.keys()].sort()) paks[k] = this.paks.get(k)!;
    const m: Manifest = { version: MANIFEST_VERSION, formatVersion: COOK_FORMAT_VERSION, entries, paks };
    await writeFileAtomic(this.file, Buffer.from(JSON.stringify(m), 'utf8'));
    // Replaying what the snapshot already holds is harmless, so a kill right here loses nothing.
    try {
      if (this.fd !== undefined) fs.ftruncateSync(this.fd, 0);
      else fs.rmSync(this.journalFile, { force: true });
    } catch (e) {
      throw errors.ioFailed(this.journalFile, 'truncate', e);
    }
    this.journalOps = 0;
  }

  /** Close the journal (what was appended stays). */
  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}

function isPakRecord(p: unknown): p is PakRecord {
  const o = p as PakRecord | null;
  return !!o && typeof o.fingerprint === 'string' && typeof o.size === 'number' && typeof o.entries === 'number';
}

function isEntry(e: unknown): e is CacheEntry {
  if (!e || typeof e !== 'object') return false;
  const o = e as Record<string, unknown>;
  return (
    typeof o.key === 'string' &&
    !!o.parts &&
    typeof o.parts === 'object' &&
    typeof o.cookedFile === 'string' &&
    !o.cookedFile.split('/').includes('..') &&
    typeof o.cookedSize === 'number' &&
    typeof o.cookedMtimeMs === 'number' &&
    typeof o.rawSize === 'number' &&
    typeof o.xxh64 === 'string' &&
    (o.cookedXxh64 === undefined || typeof o.cookedXxh64 === 'string') &&
    typeof o.sourceSize === 'number' &&
    typeof o.strippedExports === 'number' &&
    typeof o.nulledRefs === 'number' &&
    typeof o.texture === 'boolean' &&
    (o.classes === undefined || (Array.isArray(o.classes) && o.classes.every((c) => typeof c === 'string')))
  );
}
