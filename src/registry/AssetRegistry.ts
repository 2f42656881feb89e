/**
 * The asset registry: every asset under the project's content mounts, found incrementally.
 *
 * - `scan()` walks every content mount (config.mounts: /Game, /Engine, enabled plugins). A file
 *   whose mtime and size match the cache is not opened at all; a file whose mtime changed but whose
 *   xxh64 did not is not re-parsed; anything else has its tables read (see readAsset.ts).
 * - Cache entries under a walked mount that were not seen are reaped; entries under a disabled
 *   plugin's folder stay in the cache, invisible, so re-enabling the plugin costs no reads; entries
 *   under no folder of the config (a copied or moved project's origin) are reaped.
 * - Two files with one GUID: the file whose absolute path sorts first (plain string order) is the
 *   asset, the other is left out and reported as DUPLICATE_GUID naming both. Path order, not
 *   discovery order, so every run and every machine with the same tree picks the same file.
 * - The cache is a snapshot (registryCache.ts) plus a journal (registryJournal.ts): a call that
 *   changed something appends one frame with just those entries, and the snapshot is rewritten
 *   only when there is none or the journal has grown past a quarter of it. The cache is only ever
 *   a stat cache (each entry is the record of the file as it was at that mtime and size), so a
 *   lost or partial cache costs reads, never a wrong answer.
 * - Calls are serialized by a mutex; `onChange` listeners get one notification per call that
 *   changed something, after the state is consistent and after the mutex is released.
 */
import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import PQueue from 'p-queue';
import type { ProjectConfig } from '../../config/index.js';
import { errors, isLuminaError, type LuminaLog } from '../errors.js';
import { DependencyType } from '../format/packageTypes.js';
import { silentLogger, type Logger } from '../log/logger.js';
import { TEMP_MARKER, writeFileAtomic } from '../util/atomicWrite.js';
import { initHash } from '../util/hash.js';
import { LEAN_HEAP_ASSETS, leanHeapFor, leanHeapStrictFor } from '../util/leanHeap.js';
import { sortedByString } from '../util/stringOrder.js';
import { Vfs } from '../vfs/Vfs.js';
import { AsyncMutex } from './asyncMutex.js';
import { hashWholeFile, readPackageRecord, readTextRecord, type Located } from './readAsset.js';
import type { KeptSources } from './keptSources.js';
import { RecordInterner } from './recordIntern.js';
import { outcomeError, ReadThreads, readOnPool, type ReadJob, type ScanReaders } from './readPool.js';
import { CACHE_FILE_NAME, encodeRegistryCache, entryAt, indexRegistryCache, thawRecord, type CacheEntry } from './registryCache.js';
import { RowFolder } from './rowFolder.js';
import { EntryTable } from './entryTable.js';
import { encodeJournalFrame, JOURNAL_FILE_NAME, readJournal } from './registryJournal.js';
import type { AssetDependency, AssetRecord, ScanProblem, ScanResult } from './types.js';
import { assetKindOf, PACKAGE_EXT, SIDECAR_EXT, statOrNull, walkMount, type FileStat, type WalkedFile } from './walkMount.js';

/** Files queued for reading between turns of the event loop (a turn costs ~µs; 256 reads ~2-5 ms). */
const YIELD_EVERY_READS = 256;

export interface RegistryOptions {
  config: ProjectConfig;
  log?: Logger;
  /** Mint missing `.lmeta` sidecars (editor, watch, plain scan). False under `--ci`: a missing sidecar is an error. Default true. */
  mintSidecars?: boolean;
  /** Default `<intermediatesDir>/AssetRegistry.assetdb`. */
  cacheFile?: string;
  /**
   * Save the cache at the end of every call that changed it: one journal frame with what changed
   * (the snapshot is rewritten only once the journal has grown, see `save`). Default true.
   */
  autoSave?: boolean;
  /** Files read at once on the main thread. Default 32. */
  concurrency?: number;
  /**
   * Worker threads that read packages when a call has many to read (a cold scan; readPool.ts).
   * Default 0: on the main thread only. On 2 cores, quiet (load 2-3), a cold 50k scan with 2 read
   * threads took 1.16-1.30x the main thread's time alone and ~1.7x its CPU (each worker loads its
   * modules, warms its JIT and heap, and encodes its answers); under load they gave no gain either.
   */
  readThreads?: number;
  /** Packages a call must read before it starts read threads (starting them costs tens of ms). Default 256. */
  readThreadsFrom?: number;
  /**
   * While the read threads start, the main thread reads too. Default true; false leaves every
   * package to the threads (tests use it to be sure the threads did the reading).
   */
  mainThreadReads?: boolean;
  /**
   * Log each problem as it is found. Default true; a caller that reports `ScanResult.problems`
   * itself (the cook, with its own severities) passes false so nothing is said twice.
   */
  logProblems?: boolean;
  /**
   * A file that was an asset and now cannot be read keeps its last good record (and the problem
   * is reported each time it is read), so what ships does not change until the file is fixed.
   * The watch daemon's choice; a cook wants the truth. Default false.
   */
  keepLastGood?: boolean;
}

/** How far a scan is: files the walk found, how many of them it reads, how many it has read. */
export interface ScanProgress {
  files: number;
  toRead: number;
  read: number;
}

/** One notification per batch (a `scan` or `updateFiles` call): GUIDs, each list sorted. */
export interface RegistryChange {
  added: string[];
  changed: string[];
  removed: string[];
}

export type RegistryListener = (change: RegistryChange) => void;

/**
 * What the last full scan changed, file by file, against the content it started from (named by
 * `from`, a `contentIdentity`): each file read again with its record before and after (`before`
 * absent: a new file), each file gone (`after` absent). Re-hashed files (same bytes) are not listed.
 */
export interface ScanChanges {
  from: string;
  files: ReadonlyArray<{ before?: AssetRecord; after?: AssetRecord }>;
}

/** More changed files than this and a scan keeps no list (a cook plans again anyway). */
const MAX_LISTED_CHANGES = 4096;

/** An edge of the reverse map: `guid` refers to the asset asked about. */
export interface Referrer {
  guid: string;
  /** Hard when any of its imports of the asset is Hard. */
  type: DependencyType;
}

export type CacheStatus = 'loaded' | 'missing' | 'rebuilt';

interface ContentMount {
  alias: string;
  dir: string;
}

/**
 * The reverse map (GUID -> the assets importing it, with the strongest edge type), built on the
 * first `referrers` call and then kept up to date per batch. Nothing else is indexed: path lookups
 * go through `entries` (keyed by file), so a cook, which never asks for referrers, never pays for it.
 */
type ReferrerIndex = Map<string, Map<string, DependencyType>>;

/** A cache entry; its record is built on first use (see registryCache.ts). */
type Entry = CacheEntry;

interface Batch {
  /** Entries that became live. */
  upserts: Entry[];
  /** Entries that stopped being live (file gone, changed, unreadable). */
  removals: Entry[];
}

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export class AssetRegistry {
  /** The project's mounts (content mounts from the config, plus /Intermediates). Read it; do not mount on it. */
  readonly vfs = new Vfs();
  readonly cacheFile: string;
  /** What changed since the snapshot `cacheFile` was written, one frame per batch (registryJournal.ts). */
  readonly journalFile: string;
  /** Whether the cache was loaded, absent, or unusable and rebuilt (with a warning). */
  cacheStatus: CacheStatus = 'missing';

  private readonly log: Logger;
  private readonly mint: boolean;
  private readonly autoSave: boolean;
  private readonly concurrency: number;
  private readonly readThreadsOpt: number | undefined;
  private readonly readThreadsFrom: number;
  private readonly mainThreadReads: boolean;
  private readonly logProblems: boolean;
  private readonly keepLastGood: boolean;
  private readonly content: ContentMount[];
  /** Folders that belong to some other mount (or a disabled plugin): never walked twice. */
  private readonly mountDirs: Set<string>;
  private readonly mutex = new AsyncMutex();
  private readonly listeners = new Set<RegistryListener>();

  /** Cache: every file read, by absolute path, including files no mount shows now. */
  private readonly entries = new EntryTable<Entry>();
  /**
   * GUID -> the asset. Built on first need (`ensureWinners`): while `pending`, the live entries of
   * the table are the truth and this map is empty. A warm scan whose live entries are all unchanged
   * rows of the loaded snapshot (distinct GUIDs) stays pending, so a scan alone never builds it.
   */
  private readonly winners = new Map<string, Entry>();
  private pending = true;
  /** While pending: the assets (live entries) after the last batch. */
  private pendingCount = 0;
  /** The loaded snapshot names no GUID twice (see `pendingAssets`). */
  private snapshotDistinct = false;
  /** A batch is between its start and its apply. */
  private batchOpen = false;
  /** The GUID map was built while a batch was open: that batch's apply rebuilds it from the table. */
  private builtMidBatch = false;
  /** GUIDs claimed by more than one live file: every claimant, sorted by file; [0] is the winner. */
  private readonly dupes = new Map<string, Entry[]>();
  /** Bumped per batch; an entry seen in this batch carries the current value. */
  private gen = 0;
  private refs: ReferrerIndex | null = null;
  /** What `all()` returned, until the next batch changes which entries are the assets. */
  private sorted: readonly AssetRecord[] | null = null;
  /** Files whose cache entry changed (or went) since the cache was last saved. */
  private readonly unsaved = new Set<string>();
  /** The snapshot on disk is missing or unusable: the next save writes it whole. */
  private needsSnapshot = true;
  /** Entries (upserts and deletes) in the journal now: what the next snapshot would fold. */
  private journalOps = 0;
  private journalFd: number | undefined;
  private pendingProblems: ScanProblem[] = [];
  /** Shared parts of the records one `process` call reads; dropped when it returns. */
  private interner: RecordInterner | undefined;
  /** See contentIdentity. */
  private identity: string | undefined;
  /**
   * What the cache files hold, as a fresh open would name it: the snapshot's checksum (hex trailer)
   * and a running SHA-1 of the journal's bytes (loaded, then each frame appended). Undefined when
   * not known (no snapshot yet, a journal cut back or dropped): then no identity until a snapshot.
   */
  private snapshotSum: string | undefined;
  private journalHash: Hash | undefined;
  private journalBytes = 0;
  /** The identity of the content as the last batch left it (the loaded cache's before any scan). */
  private knownAs: string | undefined;
  private scanChanges: ScanChanges | undefined;
  /** The current full scan's changed files, while it runs and its start had an identity. */
  private changing: Array<{ before?: AssetRecord; after?: AssetRecord }> | undefined;

  private constructor(readonly config: ProjectConfig, opts: RegistryOptions) {
    this.log = opts.log ?? silentLogger;
    this.mint = opts.mintSidecars ?? true;
    this.autoSave = opts.autoSave ?? true;
    this.concurrency = opts.concurrency ?? 32;
    this.readThreadsOpt = opts.readThreads;
    this.readThreadsFrom = opts.readThreadsFrom ?? 256;
    this.mainThreadReads = opts.mainThreadReads ?? true;
    this.logProblems = opts.logProblems ?? true;
    this.keepLastGood = opts.keepLastGood ?? false;
    this.cacheFile = opts.cacheFile ?? path.join(config.intermediatesDir, CACHE_FILE_NAME);
    this.journalFile = path.join(path.dirname(this.cacheFile), JOURNAL_FILE_NAME);
    for (const m of config.mounts) this.vfs.mount(m.alias, m.dir);
    this.content = this.vfs.mounts();
    this.vfs.mount('/Intermediates', config.intermediatesDir);
    this.mountDirs = new Set([...config.mounts.map((m) => path.resolve(m.dir)), ...config.plugins.map((p) => path.resolve(p.contentDir))]);
  }

  /** Create a registry and load its cache (an unusable cache is a warning, then a clean build). */
  static async open(opts: RegistryOptions): Promise<AssetRegistry> {
    await initHash();
    const reg = new AssetRegistry(opts.config, opts);
    await reg.loadCache();
    return reg;
  }

  // ---- queries ----

  get(guid: string): AssetRecord | undefined {
    this.ensureWinners();
    const e = this.winners.get(guid.toLowerCase());
    return e && thawRecord(e);
  }

  /** The asset whose package path (`/Game/X`; a text asset's is its virtual path) is `p`. */
  byPackagePath(p: string): AssetRecord | undefined {
    const pkg = this.byVirtualPath(p + PACKAGE_EXT);
    if (pkg?.kind === 'package') return pkg;
    const text = this.byVirtualPath(p);
    if (text?.kind === 'text') return text;
    // A package whose extension is not lowercase (`X.LASSET`) is still a package: look at the
    // folder's names only when the exact lookups missed.
    const slash = p.lastIndexOf('/');
    const dir = this.diskPathOf(p.slice(0, slash));
    if (dir === null) return undefined;
    const stem = p.slice(slash + 1);
    for (const name of readdirOrEmpty(dir)) {
      if (name.length !== stem.length + PACKAGE_EXT.length || !name.startsWith(stem) || name === stem + PACKAGE_EXT) continue;
      const r = this.byFile(dir + path.sep + name);
      if (r?.kind === 'package' && r.packagePath === p) return r;
    }
    return undefined;
  }

  /** The asset whose virtual path (`/Game/X.lasset`, `/Game/UI/Hud.rml`) is `p`. */
  byVirtualPath(p: string): AssetRecord | undefined {
    for (const m of this.content) {
      if (!p.startsWith(m.alias + '/')) continue;
      const file = m.dir + path.sep + toDiskRel(p.slice(m.alias.length + 1));
      const i = file.lastIndexOf(path.sep);
      const e = this.entries.peek(file.slice(0, i), file.slice(i + 1));
      if (e && e.mount === m.alias && e.mountDir === m.dir && this.isAsset(e)) return thawRecord(e);
    }
    return undefined;
  }

  byFile(abs: string): AssetRecord | undefined {
    const file = path.resolve(abs);
    const i = file.lastIndexOf(path.sep);
    return this.fileAsset(file.slice(0, i), file.slice(i + 1));
  }

  /**
   * The asset whose file is `name` in folder `dir` (both as the record's `file` spells them): `byFile`
   * without joining and splitting the path. A stored cook plan takes its records this way
   * (cook/planStore.ts): on a warm no-op it needs neither the GUID map nor the folders built.
   */
  fileAsset(dir: string, name: string): AssetRecord | undefined {
    const e = this.entries.peek(dir, name);
    return e !== undefined && this.isAsset(e) ? thawRecord(e) : undefined;
  }

  /** Whether the entry is the asset of its GUID (live, and its GUID's first claimant). */
  private isAsset(e: Entry): boolean {
    if (!e.live) return false;
    // While the GUID map is unbuilt outside a batch, no two live entries share a GUID (`pending`):
    // a live entry is its GUID's asset, and the map need not be built to say so.
    if (this.pending && !this.batchOpen) return true;
    this.ensureWinners();
    return this.winners.get(e.guid) === e;
  }

  /**
   * Every asset, sorted by GUID. The same frozen array is returned until a scan or update changes
   * which files are the assets (the cook asks several times; at a million assets each copy and sort
   * cost seconds and tens of MiB).
   */
  all(): readonly AssetRecord[] {
    this.ensureWinners();
    this.sorted ??= Object.freeze(sortedByString([...this.winners.values()].map(thawRecord), (r) => r.guid));
    return this.sorted;
  }

  get size(): number {
    return this.pending ? this.pendingCount : this.winners.size;
  }

  /**
   * Names the assets exactly, or undefined: after a full scan, the cache files as that scan left
   * them saved (its snapshot's checksum and its journal's), which is what a fresh open of them, and
   * a scan that then reads nothing, will have; it stays so until an update changes anything.
   * Undefined before the first scan, when the cache could not be saved whole or what its files hold
   * is not known (a torn or dropped journal, until the next snapshot), and from an update's first
   * change on. With the same config, the same identity means the same records (the cook reuses its
   * plan on it: cook/planStore.ts).
   */
  get contentIdentity(): string | undefined {
    return this.identity;
  }

  /**
   * The last full scan's changes against the content it started from, when both have an identity
   * (`contentIdentity` before and after it) and the files changed were few: a cook reuses the plan
   * of `from` when no listed change touches what planning reads (cook/planStore.ts). Undefined
   * otherwise, and after any update since.
   */
  get lastScanChanges(): ScanChanges | undefined {
    return this.scanChanges;
  }

  /** The asset's imports in import-table order (targets may be missing from the registry); [] for an unknown GUID. */
  dependencies(guid: string): AssetDependency[] {
    return this.get(guid)?.dependencies ?? [];
  }

  /** The assets that import `guid`, sorted by GUID. Works for GUIDs no asset has (missing dependencies). */
  referrers(guid: string): Referrer[] {
    const m = this.referrerIndex().get(guid.toLowerCase());
    if (!m) return [];
    return sortedByString([...m].map(([g, type]) => ({ guid: g, type })), (r) => r.guid);
  }

  /**
   * Find an asset by GUID, package path (`/Game/X`), object path (`/Game/X.X`), virtual path
   * (`/Game/X.lasset`, `/Game/UI/Hud.rml`) or file path (absolute, or relative to the project or the working folder).
   * Throws ASSET_NOT_FOUND.
   */
  resolve(query: string): AssetRecord {
    const q = query.trim();
    if (/^[0-9a-fA-F]{32}$/.test(q)) {
      const r = this.get(q);
      if (r) return r;
    }
    if (q.startsWith('/')) {
      const hit = this.byPackagePath(q) ?? this.byVirtualPath(q);
      if (hit) return hit;
      const dot = q.lastIndexOf('.');
      if (dot > q.lastIndexOf('/')) {
        const pkg = this.byPackagePath(q.slice(0, dot));
        if (pkg && pkg.kind === 'package' && pkg.name === q.slice(dot + 1)) return pkg;
      }
    }
    const asFile = this.byFile(path.resolve(this.config.projectDir, q)) ?? this.byFile(path.resolve(q));
    if (asFile) return asFile;
    throw errors.assetNotFound(query, { hint: 'pass a GUID, /Game/Path/Name, /Game/Path/Name.Name, a virtual path or a file' });
  }

  /** Listen for changes; returns an unsubscribe function. Listener errors are logged, never thrown. */
  onChange(listener: RegistryListener): () => void {
    // A listener hears each change against the state before it: that needs the GUID map.
    this.ensureWinners();
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // ---- scanning ----

  /**
   * A full incremental pass over every content mount. `onProgress` hears how many files the walk
   * found and how many of those it reads (changed or new), at most every 100 ms and once at the end.
   * `keep`: the whole bytes of the small packages it reads go there too (a first cook hands them
   * to its workers instead of reading each file again; see keptSources.ts). `readers`: threads
   * already running that read the packages when there are many (a first cook's workers; see
   * readPool.ts); the records, problems and cache are the same as read here.
   */
  async scan(opts: { onProgress?: (p: ScanProgress) => void; keep?: KeptSources; readers?: ScanReaders } = {}): Promise<ScanResult> {
    const { result, change } = await this.mutex.run(() => this.doScan(opts.onProgress, opts.keep, opts.readers));
    this.notify(change);
    return result;
  }

  /**
   * Re-scan just these paths (files, sidecars, folders; absolute or relative to the project).
   * A path that no longer exists is removed, with everything under it if it was a folder.
   * Paths outside the content mounts are ignored. The watch daemon calls this once per batch.
   */
  async updateFiles(paths: readonly string[]): Promise<ScanResult & { change: RegistryChange }> {
    const { result, change } = await this.mutex.run(() => this.doUpdate(paths, true));
    this.notify(change);
    // The caller gets the change it made directly, no temporary listener needed.
    return { ...result, change };
  }

  /**
   * Save what changed since the last save: a journal frame, or the whole snapshot (atomically, then
   * the journal is emptied) when there is none yet or the journal has grown past a quarter of the
   * cache. Throws IO_FAILED; scan and updateFiles turn that into a warning.
   */
  async save(): Promise<void> {
    await this.mutex.run(() => this.persist(false));
  }

  /** Rewrite the snapshot whole and empty the journal. */
  async compact(): Promise<void> {
    await this.mutex.run(() => this.persist(true));
  }

  /** Close the journal's file handle (what was appended stays). The registry stays usable. */
  close(): void {
    if (this.journalFd !== undefined) fs.closeSync(this.journalFd);
    this.journalFd = undefined;
  }

  // ---- internals ----

  private async loadCache(): Promise<void> {
    let bytes: Buffer | undefined;
    try {
      bytes = await fsp.readFile(this.cacheFile);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.cacheUnusable(errors.cacheInvalid(this.cacheFile, `cannot be read (${(e as NodeJS.ErrnoException).code ?? e})`));
        return;
      }
    }
    let snapshot: string | undefined;
    if (bytes) {
      try {
        // Rows are checked here, but a package-only folder's entries are built only when
        // something asks for them (rowFolder.ts): a warm no-op scan matches them in the walk.
        const loaded = indexRegistryCache(bytes, this.cacheFile);
        this.snapshotDistinct = loaded.distinctGuids;
        for (const f of loaded.folders) {
          if (f.lazy && loaded.distinctGuids) {
            this.entries.setLazy(f.dir, new RowFolder(loaded.image, f));
            continue;
          }
          const row = { name: '' };
          for (const at of f.rows) {
            const e = entryAt(loaded.image, at, f.dirSep, true, row);
            this.entries.setIn(f.dir, row.name, e);
          }
        }
        // The trailer is the body's checksum, just checked.
        snapshot = bytes.toString('hex', bytes.byteLength - 8);
        this.cacheStatus = 'loaded';
        this.needsSnapshot = false;
      } catch (e) {
        this.entries.clear();
        this.cacheUnusable(isLuminaError(e) ? e : errors.cacheInvalid(this.cacheFile, String(e)));
        return;
      }
    }
    this.replayJournal();
    if (!this.needsSnapshot) this.snapshotSum = snapshot;
    // The loaded cache's name (a torn or dropped journal, or an unusable snapshot, leave none).
    this.knownAs = this.savedAs();
    await this.sweepOldTemps();
  }

  /**
   * Fold the journal into the loaded entries. A torn or damaged tail (a kill mid-append) is a
   * warning: the frames before it are kept, the tail is cut off so the next append follows a whole
   * frame, and the files it named are read again. Its bytes start `journalHash` when read whole.
   */
  private replayJournal(): void {
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(this.journalFile);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.dropJournal(`cannot be read (${(e as NodeJS.ErrnoException).code ?? e})`);
        return;
      }
      this.journalHash = createHash('sha1');
      this.journalBytes = 0;
      return;
    }
    const read = readJournal(bytes, this.journalFile);
    for (const f of read.frames) {
      for (const e of f.upserts) this.entries.set(e.file, e);
      for (const file of f.deletes) this.entries.delete(file);
      this.journalOps += f.upserts.length + f.deletes.length;
    }
    if (read.frames.length > 0 && this.cacheStatus === 'missing') this.cacheStatus = 'loaded';
    if (read.tail === undefined) {
      this.journalHash = createHash('sha1').update(bytes);
      this.journalBytes = bytes.byteLength;
      return;
    }
    const p: ScanProblem = { code: 'CACHE_INVALID', message: `cache journal has a torn tail (a run was killed while writing it): ${read.tail}`, file: this.journalFile, severity: 'warning' };
    this.log.warn({ code: p.code, file: p.file }, p.message);
    this.pendingProblems.push(p);
    try {
      fs.truncateSync(this.journalFile, read.goodBytes);
    } catch (e) {
      this.dropJournal(`cannot be cut back to its last whole frame (${(e as NodeJS.ErrnoException).code ?? e})`);
    }
  }

  /** Give up on the journal: what it held is read again, and the next save writes a whole snapshot. */
  private dropJournal(why: string): void {
    this.log.warn({ code: 'CACHE_INVALID', file: this.journalFile }, `cache journal ${why}; it is rewritten`);
    this.needsSnapshot = true;
    this.journalOps = 0;
    this.journalHash = undefined;
  }

  private cacheUnusable(e: LuminaLog): void {
    this.cacheStatus = 'rebuilt';
    // The journal continues the snapshot that was thrown away; the next save rewrites both.
    this.needsSnapshot = true;
    const p: ScanProblem = { code: e.code, message: `${e.message}; rebuilding it`, file: e.file, severity: 'warning' };
    this.log.warn({ code: p.code, file: p.file }, p.message);
    this.pendingProblems.push(p);
  }

  /** Temp files of a killed run; only old ones, so a concurrent writer's temp is left alone. */
  private async sweepOldTemps(): Promise<void> {
    const dir = path.dirname(this.cacheFile);
    const prefix = path.basename(this.cacheFile) + TEMP_MARKER;
    const names = await fsp.readdir(dir).catch(() => [] as string[]);
    const cutoff = Date.now() - 10 * 60_000;
    for (const n of names) {
      if (!n.startsWith(prefix)) continue;
      const s = statOrNull(path.join(dir, n));
      if (s && s.mtimeMs < cutoff) await fsp.rm(path.join(dir, n), { force: true }).catch(() => {});
    }
  }

  /** Save what changed (see `save`); `snapshot` forces a whole rewrite. Call inside the mutex. */
  private async persist(snapshot: boolean): Promise<void> {
    if (!snapshot && !this.needsSnapshot && this.unsaved.size === 0) return;
    const fold = snapshot || this.needsSnapshot || this.journalOps + this.unsaved.size > Math.max(1024, this.entries.size / 4);
    if (fold) await this.writeSnapshot();
    else this.appendFrame();
  }

  private async writeSnapshot(): Promise<void> {
    const records = [...this.entries.values()].map((e) => ({ record: thawRecord(e), sidecar: e.sidecar }));
    const bytes = encodeRegistryCache(records);
    // Until the journal is emptied below, what the files hold is not known.
    this.snapshotSum = undefined;
    this.journalHash = undefined;
    await writeFileAtomic(this.cacheFile, bytes);
    this.unsaved.clear();
    this.needsSnapshot = false;
    // The snapshot holds everything the journal did; replaying it over the snapshot would be harmless.
    try {
      if (this.journalFd !== undefined) fs.ftruncateSync(this.journalFd, 0);
      else fs.rmSync(this.journalFile, { force: true });
      this.journalOps = 0;
      this.snapshotSum = bytes.toString('hex', bytes.byteLength - 8);
      this.journalHash = createHash('sha1');
      this.journalBytes = 0;
    } catch (e) {
      throw errors.ioFailed(this.journalFile, 'truncate', e);
    }
  }

  /** One frame for everything unsaved: synchronous, so it is in the page cache before the call returns. */
  private appendFrame(): void {
    const upserts = [];
    const deletes: string[] = [];
    for (const file of this.unsaved) {
      const e = this.entries.get(file);
      if (e) upserts.push({ record: thawRecord(e), sidecar: e.sidecar });
      else deletes.push(file);
    }
    const frame = encodeJournalFrame(upserts, deletes);
    try {
      if (this.journalFd === undefined) {
        fs.mkdirSync(path.dirname(this.journalFile), { recursive: true });
        this.journalFd = fs.openSync(this.journalFile, 'a');
      }
      let at = 0;
      while (at < frame.byteLength) at += fs.writeSync(this.journalFd, frame, at);
      this.journalHash?.update(frame);
      this.journalBytes += frame.byteLength;
    } catch (e) {
      // Part of a frame may be there: the next save starts over with a whole snapshot.
      this.needsSnapshot = true;
      this.journalHash = undefined;
      throw errors.ioFailed(this.journalFile, 'write', e);
    }
    this.journalOps += upserts.length + deletes.length;
    this.unsaved.clear();
  }

  private async saveIfDirty(problems: ScanProblem[]): Promise<void> {
    if (!this.autoSave) return;
    try {
      await this.persist(false);
    } catch (e) {
      // A cache never fails a run.
      const log = isLuminaError(e) ? e.toLog() : { code: 'IO_FAILED', message: String(e), file: this.cacheFile };
      this.warn(problems, { code: log.code, message: `cache not saved: ${log.message}`, file: log.file, severity: 'warning' });
    }
  }

  private warn(problems: ScanProblem[], p: ScanProblem): void {
    problems.push(p);
    if (!this.logProblems) return;
    if (p.severity === 'warning') this.log.warn({ code: p.code, file: p.file }, p.message);
    else this.log.error({ code: p.code, file: p.file }, p.message);
  }

  private problemOf(e: unknown, file: string): ScanProblem {
    const log = isLuminaError(e) ? e.toLog() : errors.ioFailed(file, 'read', e).toLog();
    const p: ScanProblem = { code: log.code, message: log.message, file: log.file ?? file, severity: 'error' };
    if (log.hint) p.hint = log.hint;
    return p;
  }

  private newResult(): ScanResult {
    const problems = this.pendingProblems;
    this.pendingProblems = [];
    return { assets: 0, read: 0, cached: 0, rehashed: 0, removed: 0, problems, ms: 0 };
  }

  private async doScan(onProgress?: (p: ScanProgress) => void, keep?: KeptSources, readers?: ScanReaders): Promise<{ result: ScanResult; change: RegistryChange }> {
    const t0 = performance.now();
    const result = this.newResult();
    const gen = ++this.gen;
    const walked: WalkedFile[] = [];
    const batch: Batch = { upserts: [], removals: [] };
    this.batchOpen = true;
    this.scanChanges = undefined;
    this.changing = this.knownAs !== undefined ? [] : undefined;
    let lastDir: string | undefined;
    let inDir: ReadonlyMap<string, Entry> | undefined;
    /** The folder's rows when it is held unbuilt (rowFolder.ts) under this mount. */
    let rows: RowFolder | undefined;
    for (const m of this.content) {
      walkMount(m.dir, m, m.alias, {
        skipDirs: this.otherMountDirs(m.dir),
        onFile: (f) => walked.push(f),
        onProblem: (p) => this.warn(result.problems, this.problemOf(p.error, p.file)),
        // The common case of a warm scan, settled during the walk: the same as process()'s
        // stat match for a package, without a WalkedFile per unchanged file. The folder's
        // entries are looked up once per folder, then each file by name.
        unchanged: (dir, name, mtimeMs, size) => {
          if (dir !== lastDir) {
            lastDir = dir;
            const held = this.entries.slot(dir);
            rows = held instanceof RowFolder && held.mount.alias === m.alias && held.mount.dir === m.dir ? held : undefined;
            inDir = rows !== undefined ? undefined : this.entries.folder(dir);
          }
          if (rows !== undefined) {
            if (rows.matchNext(gen, name, mtimeMs, size)) {
              result.cached++;
              return true;
            }
            // Not the next row: build the folder (the rows matched so far are seen in it).
            rows = undefined;
            inDir = this.entries.folder(dir);
          }
          const e = inDir?.get(name);
          if (e === undefined || e.mtimeMs !== mtimeMs || e.size !== size || e.mount !== m.alias || e.mountDir !== m.dir) return false;
          this.keep(e, gen, batch);
          result.cached++;
          return true;
        },
      });
    }
    await this.process(walked, result, gen, onProgress, batch, keep, readers);
    // Reap: cache entries under a walked mount that this walk did not see. Entries under a
    // disabled plugin's folder are kept, and stay out of the registry. Entries under no folder
    // of this project's config (the project was copied or moved: the cache names absolute
    // paths) are dropped, or every copy would carry its origin's rows forever. A folder still
    // held as rows stays so only when the walk matched every row; otherwise it is built, and its
    // rows the walk did not see are dropped with the rest.
    for (const [dir, held] of [...this.entries.lazyFolders()]) {
      const f = held as RowFolder;
      if (f.allSeenIn(gen)) {
        f.gen = gen;
        f.live = true;
      } else if (f.cursorGen === gen || this.reapable(f.dirSep)) {
        this.entries.built(dir);
      }
    }
    for (const e of this.entries.builtValues()) {
      if (e.gen === gen || !this.reapable(e.file)) continue;
      this.dropEntry(e.file, e, batch, result);
    }
    return this.finish(batch, result, true, t0);
  }

  /** The file is still what `e` says: mark it seen in this batch, and live if it was not. */
  private keep(e: Entry, gen: number, batch: Batch): void {
    e.gen = gen;
    if (!e.live) {
      e.live = true;
      batch.upserts.push(e);
    }
  }

  private dropEntry(file: string, e: Entry, batch: Batch, result: ScanResult): void {
    this.noteChange(e, undefined);
    this.entries.delete(file);
    this.unsaved.add(file);
    result.removed++;
    if (e.live) batch.removals.push(e);
  }

  private async doUpdate(paths: readonly string[], wantChange: boolean): Promise<{ result: ScanResult; change: RegistryChange }> {
    // The change is told against the state before: build the GUID map first.
    this.ensureWinners();
    this.scanChanges = undefined;
    this.changing = undefined;
    this.batchOpen = true;
    const t0 = performance.now();
    const result = this.newResult();
    const gen = ++this.gen;
    const files = new Map<string, WalkedFile>();
    /** Paths that are gone (with everything under them) and folders re-walked (what they lack is gone). */
    const gone: string[] = [];
    const walkedDirs: string[] = [];
    for (const p of new Set(paths.map((x) => path.resolve(this.config.projectDir, x)))) {
      let target = p;
      if (target.toLowerCase().endsWith(SIDECAR_EXT)) {
        target = target.slice(0, -SIDECAR_EXT.length);
        if (assetKindOf(path.basename(target)) !== 'text') continue;
      }
      const hit = this.locate(target);
      if (!hit) continue;
      const mount = this.vfs.mountOf(target)!.mount;
      const st = fs.lstatSync(target, { throwIfNoEntry: false });
      if (st?.isDirectory()) {
        walkedDirs.push(target);
        walkMount(target, mount, hit.virtualPath, {
          skipDirs: this.otherMountDirs(mount.dir),
          onFile: (f) => files.set(f.file, f),
          onProblem: (x) => this.warn(result.problems, this.problemOf(x.error, x.file)),
        });
        continue;
      }
      const kind = assetKindOf(path.basename(target));
      if (st?.isFile() && kind) {
        const f: WalkedFile = { file: target, mount: hit.mount, mountDir: mount.dir, virtualPath: hit.virtualPath, kind, mtimeMs: st.mtimeMs, size: st.size };
        if (kind === 'text') f.sidecar = statOrNull(target + SIDECAR_EXT);
        files.set(target, f);
      } else if (!st) {
        gone.push(target);
      }
    }
    const batch = await this.process([...files.values()], result, gen);
    if (gone.length > 0 || walkedDirs.length > 0) {
      const under = (file: string, dirs: string[]) => dirs.some((d) => file === d || file.startsWith(d + path.sep));
      for (const e of this.entries.values()) {
        if (under(e.file, gone) || (e.gen !== gen && under(e.file, walkedDirs))) this.dropEntry(e.file, e, batch, result);
      }
    }
    return this.finish(batch, result, false, t0, wantChange);
  }

  /** Apply a scan's or an update's batch, save, and close its result. */
  private async finish(batch: Batch, result: ScanResult, allDuplicates: boolean, t0: number, wantChange = false): Promise<{ result: ScanResult; change: RegistryChange }> {
    const change = this.apply(batch, result, allDuplicates, wantChange);
    this.batchOpen = false;
    // Anything read, re-hashed or removed by an update: the assets are no longer named. A full scan
    // names what it leaves saved (contentIdentity): what a fresh open of the cache files, and a
    // scan that then reads nothing, will have.
    if (!allDuplicates && (result.read > 0 || result.removed > 0 || result.rehashed > 0)) this.identity = undefined;
    const from = this.knownAs;
    const changes = this.changing;
    this.changing = undefined;
    await this.saveIfDirty(result.problems);
    if (allDuplicates) this.identity = this.savedAs();
    this.knownAs = this.identity;
    if (allDuplicates && from !== undefined && this.identity !== undefined && changes !== undefined) this.scanChanges = { from, files: changes };
    sortProblems(result.problems);
    result.assets = this.size;
    result.ms = performance.now() - t0;
    return { result, change };
  }

  /** Where a disk path lives among the content mounts, or null (outside, or under /Intermediates). */
  private locate(abs: string): { mount: string; virtualPath: string } | null {
    const hit = this.vfs.mountOf(abs);
    if (!hit || !this.content.some((m) => m.alias === hit.mount.alias)) return null;
    // A folder of a disabled plugin nested inside a mount is not that mount's content.
    for (const d of this.otherMountDirs(hit.mount.dir)) if (abs === d || abs.startsWith(d + path.sep)) return null;
    return { mount: hit.mount.alias, virtualPath: hit.rel === '' ? hit.mount.alias : `${hit.mount.alias}/${hit.rel}` };
  }

  private otherMountDirs(own: string): Set<string> {
    const s = new Set(this.mountDirs);
    s.delete(path.resolve(own));
    return s;
  }

  private underWalkedMount(file: string): boolean {
    for (const m of this.content) if (file.startsWith(m.dir + path.sep)) return true;
    return false;
  }

  /** A cache entry a full scan drops when it was not seen: under a walked mount, or under no mount or plugin folder at all. */
  private reapable(file: string): boolean {
    if (this.underWalkedMount(file)) return true;
    for (const d of this.mountDirs) if (file.startsWith(d + path.sep)) return false;
    return true;
  }

  /**
   * Bring each file's cache entry up to date: no read on a stat match, a hash only when the mtime
   * moved but the size did not, a full read otherwise. A file that fails is dropped from the cache
   * and reported; the rest go on. Every file handled is marked with `gen`.
   */
  private async process(
    files: WalkedFile[],
    result: ScanResult,
    gen: number,
    onProgress?: (p: ScanProgress) => void,
    batch: Batch = { upserts: [], removals: [] },
    keep?: KeptSources,
    readers?: ScanReaders,
  ): Promise<Batch> {
    // result.cached already counts the files the walk settled (doScan's `unchanged`).
    const progress = { files: files.length + result.cached, toRead: 0, read: 0 };
    let lastReport = 0;
    const report = (force = false) => {
      const now = performance.now();
      if (!onProgress || (!force && now - lastReport < 100)) return;
      lastReport = now;
      onProgress({ ...progress });
    };
    /** Packages for the read threads (readPool.ts), when there are enough of them. */
    const poolFiles: WalkedFile[] = [];
    const readThreads = readers?.threads ?? this.readThreadsOpt ?? 0;
    const local: WalkedFile[] = [];
    for (const f of files) {
      const entry = this.entries.get(f.file);
      // Same file, alias and mount folder means the same virtual path.
      const samePlace = entry !== undefined && entry.mount === f.mount && entry.mountDir === f.mountDir;
      const sameSidecar =
        f.kind !== 'text' || (entry?.sidecar !== undefined && f.sidecar != null && entry.sidecar.mtimeMs === f.sidecar.mtimeMs && entry.sidecar.size === f.sidecar.size);
      if (samePlace && sameSidecar && entry.mtimeMs === f.mtimeMs && entry.size === f.size) {
        result.cached++;
        this.keep(entry, gen, batch);
        continue;
      }
      progress.toRead++;
      if (f.kind === 'package' && readThreads > 0) poolFiles.push(f);
      else local.push(f);
    }
    // Before the reads build any record: lean for a project this large, strict when this many
    // records are built (src/util/leanHeap.ts). Then the caller hears the counts (a cook ties its
    // own choices to the level).
    leanHeapFor(progress.files);
    leanHeapStrictFor(progress.toRead);
    report(true);
    // Past LEAN_HEAP_ASSETS the caller's threads are not used: a record read on a thread is thawed
    // from its batch's image, sharing GUID strings and dependency objects only within the batch
    // (the interner shares them across all), which a million-asset cook's memory cannot spare.
    if (poolFiles.length < this.readThreadsFrom || (readers !== undefined && poolFiles.length >= LEAN_HEAP_ASSETS)) {
      for (const f of poolFiles) local.push(f);
      poolFiles.length = 0;
    }
    keep?.begin(progress.toRead);
    /** A pooled package's job: just its hash when only the mtime moved (as below for the rest). */
    const toJob = (f: WalkedFile): ReadJob => {
      const e = this.entries.get(f.file);
      const hashOnly = e !== undefined && e.mount === f.mount && e.mountDir === f.mountDir && e.size === f.size;
      return { file: f.file, virtualPath: f.virtualPath, mount: f.mount, mtimeMs: f.mtimeMs, size: f.size, hashOnly };
    };

    // The caller's running threads, else threads of our own for this call.
    const own = poolFiles.length > 0 && readers === undefined ? new ReadThreads(readThreads) : undefined;
    const readsDone = poolFiles.length > 0
      ? readOnPool(poolFiles, toJob, readers ?? own!, (f, o) => {
          let done = true;
          try {
            const err = outcomeError(o);
            if (err !== undefined) throw err;
            if ('hash' in o) {
              const entry = this.entries.get(f.file)!;
              if (o.hash === thawRecord(entry).hash) this.touched(entry, f, gen, batch, result);
              else {
                // Changed after all: read whole with the rest below (rare: same size, new bytes).
                local.push(f);
                done = false;
              }
            } else if ('entry' in o) {
              const e = o.entry;
              // The image names the file, alias and mount folder the job gave; anything else would
              // be a codec bug, and then the record is taken as read.
              if (e.file === f.file && e.mount === f.mount && e.mountDir === f.mountDir) {
                e.gen = gen;
                e.live = true;
                this.upsertRead(f, e, batch, result);
              } else {
                this.upsertRead(f, this.entryOf(f, thawRecord(e), undefined, gen), batch, result);
              }
            } else if ('record' in o) {
              this.upsertRead(f, this.entryOf(f, o.record, undefined, gen), batch, result);
            }
          } catch (e) {
            this.readFailed(f, e, gen, batch, result);
          } finally {
            if (done) progress.read++;
            report();
          }
        }, { mainThreadReads: this.mainThreadReads, keep })
      : Promise.resolve();
    try {
      await readsDone;
    } finally {
      own?.close();
    }

    const queue = new PQueue({ concurrency: this.concurrency });
    let queued = 0;
    for (const f of local) {
      // Small packages are read synchronously and the queue settles by microtasks alone: without a
      // turn of the event loop now and then, a cold scan (an hour at a million files) would hold
      // off Ctrl-C, timers, progress and a daemon's HTTP server until its last read.
      if (++queued % YIELD_EVERY_READS === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      const entry = this.entries.get(f.file);
      const samePlace = entry !== undefined && entry.mount === f.mount && entry.mountDir === f.mountDir;
      const sameSidecar =
        f.kind !== 'text' || (entry?.sidecar !== undefined && f.sidecar != null && entry.sidecar.mtimeMs === f.sidecar.mtimeMs && entry.sidecar.size === f.sidecar.size);
      // Queue a bounded number of reads at a time: a cold scan of a million files queued every
      // read at once, a closure and a promise per file held for the whole scan.
      if (queue.size >= this.concurrency * 4) await queue.onSizeLessThan(this.concurrency * 2);
      void queue.add(async () => {
        try {
          if (samePlace && sameSidecar && entry.size === f.size && (await hashWholeFile(f.file, f.size)) === thawRecord(entry).hash) {
            this.touched(entry, f, gen, batch, result);
            return;
          }
          let record: AssetRecord;
          let sidecar: FileStat | undefined;
          if (f.kind === 'package') {
            record = await readPackageRecord(f, f, keep);
          } else {
            const t = await readTextRecord(f, f, this.mint);
            record = t.record;
            sidecar = t.sidecar;
            if (t.minted) this.log.info({ file: f.file + SIDECAR_EXT, asset: t.record.guid }, 'minted .lmeta sidecar');
          }
          this.upsertRead(f, this.entryOf(f, record, sidecar, gen), batch, result);
        } catch (e) {
          this.readFailed(f, e, gen, batch, result);
        } finally {
          progress.read++;
          report();
        }
      });
    }
    report(true);
    await queue.onIdle();
    report(true);
    // Its maps are as large as the set of GUIDs imported; the records keep what they share.
    this.interner = undefined;
    return batch;
  }

  /**
   * The identity of what the cache files hold now, when everything is saved and what they hold is
   * known (see `snapshotSum`), else undefined.
   */
  private savedAs(): string | undefined {
    if (this.snapshotSum === undefined || this.journalHash === undefined || this.needsSnapshot || this.unsaved.size > 0) return undefined;
    const journal = this.journalBytes === 0 ? '' : this.journalHash.copy().digest().readBigUInt64LE(0).toString(16);
    return `${this.snapshotSum}:${journal}`;
  }

  /** A file read again (`before` -> `after`) or gone during a full scan: kept for `lastScanChanges`. */
  private noteChange(before: Entry | undefined, after: Entry | undefined): void {
    const list = this.changing;
    if (list === undefined) return;
    if (list.length >= MAX_LISTED_CHANGES) {
      this.changing = undefined;
      return;
    }
    list.push({ before: before && thawRecord(before), after: after && thawRecord(after) });
  }

  /** Touched, not changed (same hash): keep the parsed record, remember the new mtime. */
  private touched(entry: Entry, f: WalkedFile, gen: number, batch: Batch, result: ScanResult): void {
    entry.mtimeMs = f.mtimeMs;
    thawRecord(entry).mtimeMs = f.mtimeMs;
    result.rehashed++;
    this.unsaved.add(f.file);
    this.keep(entry, gen, batch);
  }

  private entryOf(f: WalkedFile, record: AssetRecord, sidecar: FileStat | undefined, gen: number): Entry {
    // Records read from files share GUIDs, class names and dependency objects as thawed ones do.
    this.interner ??= new RecordInterner((g) => this.winners.get(g)?.guid);
    this.interner.record(record);
    return {
      file: f.file,
      guid: record.guid,
      mount: f.mount,
      mountDir: f.mountDir,
      kind: record.kind,
      mtimeMs: record.mtimeMs,
      size: record.size,
      sidecar,
      rec: record,
      at: -1,
      image: undefined,
      gen,
      live: true,
      snapshot: false,
    };
  }

  /** A file was read: `next` is its entry now. */
  private upsertRead(f: WalkedFile, next: Entry, batch: Batch, result: ScanResult): void {
    result.read++;
    const old = this.entries.get(f.file);
    this.noteChange(old, next);
    if (old?.live) batch.removals.push(old);
    this.entries.set(f.file, next);
    this.unsaved.add(f.file);
    batch.upserts.push(next);
  }

  /** A read failed: keep the last good entry (keepLastGood) or drop it, and report the file. */
  private readFailed(f: WalkedFile, e: unknown, gen: number, batch: Batch, result: ScanResult): void {
    result.read++;
    const old = this.entries.get(f.file);
    if (old && this.keepLastGood && old.mount === f.mount && old.mountDir === f.mountDir) {
      // Its recorded mtime and size stay the old ones, so every later look re-reads the file
      // (and reports it again) until it is fixed.
      old.gen = gen;
      if (!old.live) {
        old.live = true;
        batch.upserts.push(old);
      }
      const p = this.problemOf(e, f.file);
      p.hint = 'the last good version still ships until the file is fixed';
      this.warn(result.problems, p);
      return;
    }
    const p = this.problemOf(e, f.file);
    if (old) {
      this.noteChange(old, undefined);
      this.entries.delete(f.file);
      this.unsaved.add(f.file);
      if (old.live) batch.removals.push(old);
      p.guid = old.guid;
    }
    this.warn(result.problems, p);
  }

  /**
   * Apply a batch to the GUID tables and (when built) the indexes, and work out what changed for
   * listeners. `allDuplicates` reports every duplicate GUID (a full scan), else only those this
   * batch touched.
   */
  private apply(batch: Batch, result: ScanResult, allDuplicates: boolean, wantChange: boolean): RegistryChange {
    // The first batch after open starts empty: everything is added, no before-image is needed.
    let fresh = this.winners.size === 0;
    if (this.pending || this.builtMidBatch) {
      // The table holds what this batch did: count the assets from it, or build the map from it.
      this.sorted = null;
      const n = this.pending && this.listeners.size === 0 && !wantChange ? this.pendingAssets() : null;
      if (n !== null) {
        this.pendingCount = n;
        return { added: [], changed: [], removed: [] };
      }
      this.winners.clear();
      this.dupes.clear();
      this.refs = null;
      this.pending = true;
      this.builtMidBatch = false;
      this.batchOpen = false;
      this.ensureWinners();
      batch = { upserts: [], removals: [] };
      fresh = true;
      allDuplicates = true;
    }
    if (batch.upserts.length > 0 || batch.removals.length > 0) this.sorted = null;
    const before = new Map<string, Entry | undefined>();
    const touch = (guid: string) => {
      if (!fresh && !before.has(guid)) before.set(guid, this.winners.get(guid));
    };
    const touchedDupes = new Set<string>();
    for (const rec of batch.removals) {
      touch(rec.guid);
      const list = this.dupes.get(rec.guid);
      if (list) {
        const i = list.indexOf(rec);
        if (i >= 0) list.splice(i, 1);
        if (list.length === 1) this.dupes.delete(rec.guid);
        this.setWinner(list[0]);
        touchedDupes.add(rec.guid);
      } else if (this.winners.get(rec.guid) === rec) {
        this.winners.delete(rec.guid);
        this.unindex(rec);
      }
    }
    for (const rec of batch.upserts) {
      touch(rec.guid);
      const w = this.winners.get(rec.guid);
      if (!w) {
        this.winners.set(rec.guid, rec);
        this.index(rec);
        continue;
      }
      this.setWinner(this.addClaimant(rec, w));
      touchedDupes.add(rec.guid);
    }

    const change: RegistryChange = { added: [], changed: [], removed: [] };
    if (this.listeners.size > 0 || wantChange) {
      if (fresh) {
        change.added = [...this.winners.keys()];
      } else {
        for (const [guid, prev] of before) {
          const next = this.winners.get(guid);
          if (prev === next) continue;
          if (!prev) change.added.push(guid);
          else if (!next) change.removed.push(guid);
          else if (differs(thawRecord(prev), thawRecord(next))) change.changed.push(guid);
        }
      }
      change.added.sort(byString);
      change.changed.sort(byString);
      change.removed.sort(byString);
    }

    const dupGuids = [...(allDuplicates ? this.dupes.keys() : [...touchedDupes].filter((g) => this.dupes.has(g)))].sort(byString);
    for (const guid of dupGuids) {
      const list = this.dupes.get(guid)!;
      for (const loser of list.slice(1)) {
        this.warn(result.problems, this.problemOf(errors.duplicateGuid(guid, list[0].file, loser.file), loser.file));
      }
    }
    return change;
  }

  /**
   * While pending: the number of live entries when every one is an unchanged row of the loaded
   * snapshot (whose GUIDs are distinct, so they are as many assets, and no duplicate to report),
   * else null (the GUID map must be built to tell).
   */
  private pendingAssets(): number | null {
    if (!this.snapshotDistinct) return null;
    let n = 0;
    for (const [, held] of this.entries.lazyFolders()) if ((held as RowFolder).live) n += held.count;
    for (const e of this.entries.builtValues()) {
      if (!e.live) continue;
      if (!e.snapshot) return null;
      n++;
    }
    return n;
  }

  /** Build the GUID map from the table's live entries (each GUID's claimants sorted by file), once. */
  private ensureWinners(): void {
    if (!this.pending) return;
    this.pending = false;
    if (this.batchOpen) this.builtMidBatch = true;
    for (const e of this.entries.values()) {
      if (!e.live) continue;
      const w = this.winners.get(e.guid);
      if (w === undefined) {
        this.winners.set(e.guid, e);
        continue;
      }
      this.winners.set(e.guid, this.addClaimant(e, w));
    }
  }

  /**
   * Add `e` to the claimants of its GUID, whose asset so far is `w`; gives the asset now. The
   * claimants are sorted by file: the first is the asset (see the module note).
   */
  private addClaimant(e: Entry, w: Entry): Entry {
    const list = this.dupes.get(e.guid) ?? [w];
    let i = list.length;
    while (i > 0 && list[i - 1].file > e.file) i--;
    list.splice(i, 0, e);
    this.dupes.set(e.guid, list);
    return list[0];
  }

  private setWinner(rec: Entry): void {
    const prev = this.winners.get(rec.guid);
    if (prev === rec) return;
    if (prev) this.unindex(prev);
    this.winners.set(rec.guid, rec);
    this.index(rec);
  }

  private referrerIndex(): ReferrerIndex {
    this.ensureWinners();
    if (this.refs) return this.refs;
    this.refs = new Map();
    for (const e of this.winners.values()) this.index(e);
    return this.refs;
  }

  /** The folder a virtual folder path (`/Game/Props`) is on disk, or null outside the content mounts. */
  private diskPathOf(vdir: string): string | null {
    for (const m of this.content) {
      if (vdir === m.alias) return m.dir;
      if (vdir.startsWith(m.alias + '/')) return m.dir + path.sep + toDiskRel(vdir.slice(m.alias.length + 1));
    }
    return null;
  }

  private index(e: Entry): void {
    const refs = this.refs;
    if (!refs) return;
    const r = thawRecord(e);
    for (const d of r.dependencies) {
      let m = refs.get(d.guid);
      if (!m) refs.set(d.guid, (m = new Map()));
      if (m.get(r.guid) !== DependencyType.Hard) m.set(r.guid, d.type);
    }
  }

  private unindex(e: Entry): void {
    const refs = this.refs;
    if (!refs) return;
    const r = thawRecord(e);
    for (const d of r.dependencies) {
      const m = refs.get(d.guid);
      if (!m) continue;
      m.delete(r.guid);
      if (m.size === 0) refs.delete(d.guid);
    }
  }

  private notify(change: RegistryChange): void {
    if (change.added.length + change.changed.length + change.removed.length === 0) return;
    for (const l of this.listeners) {
      try {
        l(change);
      } catch (e) {
        this.log.error({ err: e }, 'registry change listener failed');
      }
    }
  }
}

/** A `/`-separated path relative to a mount as the disk spells it. */
function toDiskRel(rel: string): string {
  return path.sep === '/' ? rel : rel.split('/').join(path.sep);
}

function readdirOrEmpty(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/** By file, then code: parallel reads finish in any order, output should not. */
function sortProblems(problems: ScanProblem[]): void {
  problems.sort((a, b) => byString(a.file ?? '', b.file ?? '') || byString(a.code, b.code));
}

function differs(a: AssetRecord, b: AssetRecord): boolean {
  return a.hash !== b.hash || a.file !== b.file || a.virtualPath !== b.virtualPath || a.className !== b.className || a.flags !== b.flags;
}
