/**
 * The cook cache: guid -> what the last cook of that asset wrote, keyed by its cook key
 * (cook/cookKey.ts). An entry is reused when its key matches and its output is still there with
 * the recorded size and mtime. The key's parts are stored too, so a miss says WHY (`new`, `output`,
 * or the first key part that changed: `content`, `format`, `settings`, ...).
 *
 * On disk it is a snapshot plus a journal, both in `Intermediates/`:
 * - `CookCache.bin`: the folded state, rewritten atomically (temp + fsync + rename) only when the
 *   journal has grown past a fraction of the cache (`compact`), so no batch ever rewrites it whole.
 *   Entries are packed binary records (cookCacheCodec.ts), kept packed in memory and decoded only
 *   when asked for: a million entries are ~150 MB, not a JSON text and objects of ~600 MB; an
 *   xxh64 footer says the file is whole. A `CookCache.json` of older versions is read once and
 *   replaced by the next save;
 * - `CookCache.journal`: each change (set, delete, pak record) as a binary op (cookJournal.ts: a set
 *   is the entry's record as the arena holds it), in checksummed frames appended as each asset
 *   finishes (a first cook: as each batch of the cook workers' results does). Ctrl-C or kill -9
 *   keeps every finished asset: the page cache has the frame as soon as `write` returns. A torn
 *   last frame (a kill mid-write) is dropped and cut off on load. The JSON-lines journal of
 *   earlier versions is replayed once and folded into the snapshot at load.
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
import { lstatInto, type LstatNumbers } from '../src/util/fastLstat.js';
import { LEAN_HEAP_ASSETS } from '../src/util/leanHeap.js';
import { createXxh64, initHash, xxh64 } from '../src/util/hash.js';
import { Arena, decodeHead, encodeHead, partsMatch, probeRecord, readEntry, recordBytes, recordCookMs, recordGuid, StringTable, writeEntry, type HitView } from './cookCacheCodec.js';
import { FrameBuilder, journalHead, readCookJournal, type JournalOp } from './cookJournal.js';
import { OutputPrestat } from './outputPrestat.js';
import { changedPart, COOK_FORMAT_VERSION, sameParts, type CookKey, type CookKeyPart, type CookKeyParts } from './cookKey.js';

export { COOK_FORMAT_VERSION, canonicalJson, settingsHashes } from './cookKey.js';
export { emptyHitView, type HitView } from './cookCacheCodec.js';

export const CACHE_FILE_NAME = 'CookCache.bin';
export const JOURNAL_FILE_NAME = 'CookCache.journal';
/** The JSON snapshot of version 3, read when there is no binary one (and then replaced by it). */
export const LEGACY_CACHE_FILE_NAME = 'CookCache.json';
// 3: entries carry the cook key's parts; a journal beside the snapshot (JSON).
const LEGACY_MANIFEST_VERSION = 3;
// 4: binary snapshot of packed records (cookCacheCodec.ts), same journal.
const MANIFEST_VERSION = 4;

export type RecookReason = 'new' | 'output' | CookKeyPart;

/** Below this many entries the outputs are not statted ahead (prestatOutputs): at 20k assets (12k outputs) an earlier form of it gained nothing measurable. */
const PRESTAT_MIN_ENTRIES = 32768;

/**
 * Whether a cache of `entries` has its outputs statted ahead: from PRESTAT_MIN_ENTRIES, and not in
 * a lean-heap project (LEAN_HEAP_ASSETS), where memory matters more: at 1M assets (552k entries)
 * the thread and its offsets added ~53 MiB to a one-file cook's peak RSS (1.75 -> 1.80 GiB) and no
 * measurable time. `LUMINA_PRESTAT_OUTPUTS=1` always, `=0` never.
 */
export function prestatWanted(entries: number, mode: string | undefined = process.env.LUMINA_PRESTAT_OUTPUTS): boolean {
  if (mode === '0' || entries === 0) return false;
  return mode === '1' || (entries >= PRESTAT_MIN_ENTRIES && entries < LEAN_HEAP_ASSETS);
}

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

/** One line of the JSON journal of versions before the binary one (cookJournal.ts), replayed once. */
type LegacyJournalOp = { s: string; e: CacheEntry } | { d: string } | { p: string; r: PakRecord | null };

export type CacheCheck = { hit: true; entry: CacheEntry } | { hit: false; reason: RecookReason };

export class CookCache {
  /** guid -> offset of its record in `arena` (cookCacheCodec.ts). */
  private readonly index = new Map<string, number>();
  private arena = new Arena();
  /** Where the arena's first record is (after the head of a loaded snapshot; 0 in an arena built here). */
  private arenaStart = 0;
  private table = new StringTable();
  /** Bytes of records in the arena no longer indexed (overwritten or deleted): dropped by compact. */
  private dead = 0;
  private readonly paks = new Map<string, PakRecord>();
  readonly journalFile: string;
  /** The JSON snapshot of versions before 4: read when there is no binary one, removed by the next compaction. */
  readonly legacyFile: string;
  private fd: number | undefined;
  /** The open journal has its head (cookJournal.ts): read from its size when opened, false once emptied. */
  private journalHead = false;
  /** A legacy JSON snapshot was read: the next save writes the binary one (and removes the JSON). */
  private legacyPending = false;
  /** Lines in the journal now: what a compaction would fold. */
  private journalOps = 0;
  /** check()'s stat numbers, reused for every output. */
  private readonly stat: LstatNumbers = { mtimeMs: 0, size: 0, isFile: false };
  /** The journal's next frame: the changes not written yet (one, or a batch held by holdJournal). */
  private readonly frame = new FrameBuilder();
  private holding = false;
  /** The outputs statted on another thread for one pass (prestatOutputs), by record offset. */
  private prestat: OutputPrestat | undefined;

  private constructor(
    readonly file: string,
    readonly cookedDir: string,
  ) {
    this.journalFile = path.join(path.dirname(file), JOURNAL_FILE_NAME);
    this.legacyFile = path.join(path.dirname(file), LEGACY_CACHE_FILE_NAME);
  }

  /**
   * Load snapshot + journal. Never throws for a bad cache: a missing file is an empty cache, an
   * unreadable snapshot is an empty cache plus a CACHE_INVALID warning in `warning` (and its journal
   * is discarded with it). `readOnly`: for a reader that does not hold the project lock (patch
   * after its cook): changes nothing on disk (no torn tail cut, no journal removed) and never writes.
   */
  static async load(file: string, cookedDir: string, opts: { readOnly?: boolean } = {}): Promise<{ cache: CookCache; warning?: LuminaError }> {
    await initHash();
    let cache = new CookCache(file, cookedDir);
    let warning: LuminaError | undefined;
    let bytes: Buffer | undefined;
    let from = file;
    try {
      bytes = await readShared(file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') warning = errors.cacheInvalid(file, `cannot be read (${(e as NodeJS.ErrnoException).code ?? e}); cooking everything`);
    }
    if (bytes === undefined && warning === undefined) {
      // A cache written before the binary snapshot: read once, replaced by the next compaction.
      from = cache.legacyFile;
      try {
        bytes = await fsp.readFile(from);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') warning = errors.cacheInvalid(from, `cannot be read (${(e as NodeJS.ErrnoException).code ?? e}); cooking everything`);
      }
    }
    if (bytes !== undefined) {
      try {
        if (from === file) cache.loadSnapshot(bytes);
        else cache.loadLegacy(bytes.toString('utf8'));
      } catch (e) {
        cache = new CookCache(file, cookedDir);
        warning = errors.cacheInvalid(from, `${(e as Error).message}; cooking everything`);
      }
    }
    if (warning) {
      if (opts.readOnly) return { cache, warning };
      // The journal continues a snapshot we threw away: replaying it alone would be half a cache.
      await fsp.rm(cache.journalFile, { force: true }).catch(() => {});
      return { cache, warning };
    }
    if (cache.replayJournal(opts.readOnly === true) === 'legacy' && !opts.readOnly) {
      // A JSON journal of an earlier version: binary frames must not follow its lines, so it is
      // folded into the snapshot now (once), which empties it.
      try {
        await cache.compact();
      } catch {
        // Without it the next append would follow JSON: drop it (costs re-cooks only).
        await fsp.rm(cache.journalFile, { force: true }).catch(() => {});
      }
    }
    return { cache };
  }

  /** Take a binary snapshot as the arena: only the GUIDs are read now, entries are decoded on use. */
  private loadSnapshot(bytes: Buffer): void {
    if (bytes.byteLength < 20) throw new Error('snapshot is truncated');
    const body = bytes.byteLength - 8;
    if (bytes.readBigUInt64LE(body) !== xxh64(bytes.subarray(0, body))) throw new Error('snapshot checksum does not match (damaged file)');
    const head = decodeHead(bytes, { version: MANIFEST_VERSION, formatVersion: COOK_FORMAT_VERSION });
    this.table = head.table;
    for (const [k, p] of head.paks) this.paks.set(k, p);
    let at = head.recordsAt;
    for (let i = 0; i < head.entries; i++) {
      if (at >= body) throw new Error('snapshot is truncated');
      const { guid, next } = recordGuid(bytes, this.table, at);
      if (next > body) throw new Error('snapshot is truncated');
      if (this.index.has(guid)) this.dead += recordBytes(bytes, this.index.get(guid)!);
      this.index.set(guid, at);
      at = next;
    }
    if (at !== body) throw new Error('snapshot has bytes after its last entry');
    this.arena = new Arena(bytes, body);
    this.arenaStart = head.recordsAt;
  }

  /** The JSON snapshot (version 3) of caches written before the binary one. */
  private loadLegacy(text: string): void {
    const m = JSON.parse(text) as { version: number; entries: Record<string, unknown>; paks?: Record<string, unknown> };
    if (!m || typeof m !== 'object' || m.version !== LEGACY_MANIFEST_VERSION || typeof m.entries !== 'object' || m.entries === null) {
      throw new Error(`manifest version ${m?.version} is not ${LEGACY_MANIFEST_VERSION}`);
    }
    for (const [guid, e] of Object.entries(m.entries)) {
      if (!isEntry(e)) throw new Error(`entry ${guid} is malformed`);
      this.put(guid, e);
    }
    for (const [chunk, p] of Object.entries(m.paks ?? {})) if (isPakRecord(p)) this.paks.set(chunk, p);
    // Nothing on disk is in the binary form yet: the next save folds it whatever the journal's size.
    this.journalOps = Math.max(this.journalOps, 1);
    this.legacyPending = true;
  }

  /** Returns the offset of the entry's record. */
  private put(guid: string, e: CacheEntry): number {
    return this.place(guid, writeEntry(this.arena, this.table, guid, e));
  }

  /** Index `guid` at the arena record at `at`; the record it replaces becomes dead bytes. Returns `at`. */
  private place(guid: string, at: number): number {
    const old = this.index.get(guid);
    if (old !== undefined) this.dead += recordBytes(this.arena.buf, old);
    this.index.set(guid, at);
    return at;
  }

  private remove(guid: string): boolean {
    const old = this.index.get(guid);
    if (old === undefined) return false;
    this.dead += recordBytes(this.arena.buf, old);
    this.index.delete(guid);
    return true;
  }

  /**
   * Fold the journal into memory; cut a torn tail so the next append starts after a whole frame.
   * 'legacy': it was a JSON journal (replayed here; the caller folds it into the snapshot).
   */
  private replayJournal(readOnly: boolean): 'legacy' | undefined {
    let buf: Buffer;
    try {
      buf = fs.readFileSync(this.journalFile);
    } catch {
      return undefined;
    }
    const read = readCookJournal(buf);
    if (read.legacy) {
      this.replayLegacyJournal(buf, readOnly);
      return 'legacy';
    }
    let good = read.goodBytes;
    for (const frame of read.frames) {
      let ok = true;
      for (const op of frame.ops) {
        if (!(ok = this.applyOp(buf, op))) break;
        if (op.kind !== 'string') this.journalOps++;
      }
      // An op that does not apply (a string id out of turn, a malformed record) ends the journal
      // at its frame, like a frame that does not check out; what applied before it stays.
      if (!ok) {
        good = frame.at;
        break;
      }
    }
    if (good < buf.length && !readOnly) this.cutJournal(good);
    return undefined;
  }

  /** Cut the journal after its last good byte, or start it over when that cannot be done. */
  private cutJournal(good: number): void {
    try {
      fs.truncateSync(this.journalFile, good);
    } catch {
      // Next append would follow garbage: start the journal over instead (costs re-cooks only).
      this.index.clear();
      this.arena = new Arena();
      this.arenaStart = 0;
      this.dead = 0;
      this.paks.clear();
      fs.rmSync(this.journalFile, { force: true });
      this.journalOps = 0;
    }
  }

  private applyOp(buf: Buffer, op: JournalOp): boolean {
    switch (op.kind) {
      case 'string': {
        // Ids are given in order; one the table has already must be the same string (a journal
        // replayed over a snapshot that folded it).
        const have = this.table.list.length;
        if (op.id < have) return this.table.list[op.id] === op.value;
        return op.id === have && this.table.id(op.value) === op.id;
      }
      case 'set': {
        const a = this.arena;
        a.reserve(op.bytes);
        const at = a.used;
        buf.copy(a.buf, at, op.at, op.at + op.bytes);
        let e: CacheEntry;
        try {
          e = readEntry(a.buf, this.table, at);
        } catch {
          return false;
        }
        if (outsideCooked(e.cookedFile)) return false;
        a.used = at + op.bytes;
        this.place(op.guid, at);
        return true;
      }
      case 'delete':
        this.remove(op.guid);
        return true;
      case 'pak':
        if (op.record) this.paks.set(op.name, op.record);
        else this.paks.delete(op.name);
        return true;
    }
  }

  /** A JSON-lines journal (versions before the binary one): each whole line that applies, in order. */
  private replayLegacyJournal(buf: Buffer, readOnly: boolean): void {
    let at = 0;
    let good = 0;
    while (at < buf.length) {
      const nl = buf.indexOf(0x0a, at);
      if (nl < 0) break; // a line without its newline was cut by a kill
      let op: LegacyJournalOp | undefined;
      try {
        op = JSON.parse(buf.toString('utf8', at, nl)) as LegacyJournalOp;
      } catch {
        op = undefined;
      }
      if (!op || !this.applyLegacyOp(op)) break;
      this.journalOps++;
      at = nl + 1;
      good = at;
    }
    if (good < buf.length && !readOnly) this.cutJournal(good);
  }

  private applyLegacyOp(op: LegacyJournalOp): boolean {
    if ('s' in op && typeof op.s === 'string' && isEntry(op.e)) this.put(op.s, op.e);
    else if ('d' in op && typeof op.d === 'string') this.remove(op.d);
    else if ('p' in op && typeof op.p === 'string' && (op.r === null || isPakRecord(op.r))) {
      if (op.r) this.paks.set(op.p, op.r);
      else this.paks.delete(op.p);
    } else return false;
    return true;
  }

  /**
   * The frame holds a change: write it now (synchronous, so it is in the page cache before the
   * next asset starts), or, while held (holdJournal), with the rest at flushJournal.
   */
  private appended(): void {
    if (!this.holding) this.writeFrame();
  }

  private writeFrame(): void {
    if (this.frame.empty) return;
    try {
      if (this.fd === undefined) {
        fs.mkdirSync(path.dirname(this.journalFile), { recursive: true });
        this.fd = fs.openSync(this.journalFile, 'a');
        this.journalHead = fs.fstatSync(this.fd).size > 0;
      }
      if (!this.journalHead) {
        writeAll(this.fd, journalHead());
        this.journalHead = true;
      }
      writeAll(this.fd, this.frame.seal());
      this.journalOps += this.frame.changes;
    } catch (e) {
      throw errors.ioFailed(this.journalFile, 'write', e);
    } finally {
      this.frame.reset();
    }
  }

  /**
   * Hold the journal's changes until flushJournal writes them in one go: a full cook settles the
   * results of a batch of the cook workers together (their outputs are all on disk already). A
   * kill in between loses those entries, never describes a file that is not there: their assets
   * cook again. Nothing may overwrite an output while lines are held (a delete must be written
   * before its overwrite).
   */
  holdJournal(): void {
    this.holding = true;
  }

  /** Write the held changes (one frame, one write) and append directly again. */
  flushJournal(): void {
    this.holding = false;
    this.writeFrame();
  }

  get size(): number {
    return this.index.size;
  }

  /** About `entries` new entries are coming (a cook's misses): the arena makes room for them at once. */
  expectEntries(entries: number): void {
    if (entries > 0) this.arena.expect(entries);
  }

  /** The entry of `guid`, decoded from its record (a new object per call). */
  peek(guid: string): CacheEntry | undefined {
    const e = this.decoded(guid);
    // Never vouch for a path outside the cooked folder, whatever the file said.
    return e && !outsideCooked(e.cookedFile) ? e : undefined;
  }

  private decoded(guid: string): CacheEntry | undefined {
    const at = this.index.get(guid);
    return at === undefined ? undefined : readEntry(this.arena.buf, this.table, at);
  }

  /** The entry's `cookMs` alone (no strings decoded): what the cook cost table reads of every entry. */
  cookMs(guid: string): number | undefined {
    const at = this.index.get(guid);
    return at === undefined ? undefined : recordCookMs(this.arena.buf, at);
  }

  /** Every entry, by GUID (unordered), decoded one at a time. */
  *list(): IterableIterator<[string, CacheEntry]> {
    for (const guid of [...this.index.keys()]) {
      const e = this.peek(guid);
      if (e) yield [guid, e];
    }
  }

  /**
   * Is the asset's last cook still valid? `want` gives the current key's parts (from whether the
   * last cook found a texture export and which export classes it saw, which the entry remembers);
   * the same parts are the same key (cookKey.ts `sameParts`), so no key is hashed here.
   * `cookedFile` is where it ships now (relative, from the registry), `output` that file's absolute
   * path (default: joined here). Stats the output file (size and mtime must match).
   */
  check(guid: string, want: (texture: boolean, classes: readonly string[] | undefined) => CookKeyParts, cookedFile: string, output?: string): CacheCheck {
    const e = this.decoded(guid);
    if (!e) return { hit: false, reason: 'new' };
    // A renamed or moved asset keeps its GUID but ships under a new path. Equal to the registry's
    // path, the entry's is inside the cooked folder (what peek checks with outsideCooked).
    if (e.cookedFile !== cookedFile) return { hit: false, reason: 'output' };
    const parts = want(e.texture, e.classes);
    if (!sameParts(e.parts, parts)) return { hit: false, reason: changedPart(e.parts, parts) ?? 'format' };
    // Synchronous: a stat of a cached inode is a few microseconds, the promise round trip several
    // times that, and a no-op re-cook of 20k assets is mostly these stats. lstatInto allocates
    // nothing (no fs.Stats and its four Dates per output); an output that became a symlink is
    // not the file the cook wrote, so it is a miss.
    const st = this.stat;
    if (!lstatInto(output ?? path.join(this.cookedDir, e.cookedFile), st) || !st.isFile || st.size !== e.cookedSize || st.mtimeMs !== e.cookedMtimeMs) return { hit: false, reason: 'output' };
    return { hit: true, entry: e };
  }

  /**
   * `check` for a no-op's pass over every asset, without decoding the entry: true when the entry
   * holds (the same key parts, cooked file, and an output of the recorded size and mtime, statted
   * here like `check` does), with what the hit needs read into `v` (numbers and hash bytes, no
   * strings). False is not a miss: ask `check`, which decodes the entry and says why (or finds a hit
   * this one could not prove, such as a non-ASCII path).
   */
  probe(guid: string, want: (texture: boolean, classes: readonly string[] | undefined) => CookKeyParts, cookedFile: string, output: string, v: HitView): boolean {
    const at = this.index.get(guid);
    if (at === undefined) return false;
    const b = this.arena.buf;
    if (!probeRecord(b, this.table, at, cookedFile, v) || !partsMatch(b, this.table, v, want(v.texture, v.classes))) return false;
    // Statted ahead by prestatOutputs' thread (this record, at this output path): no lstat here.
    if (this.prestat?.matched(at) && output.length === this.cookedDir.length + 1 + cookedFile.length && output.startsWith(this.cookedDir) && output.endsWith(cookedFile) && output.charCodeAt(this.cookedDir.length) === 0x2f) return true;
    const st = this.stat;
    return lstatInto(output, st) && st.isFile && st.size === v.cookedSize && st.mtimeMs === v.cookedMtimeMs;
  }

  /**
   * Stat every entry's output on another thread now (cook/outputPrestat.ts), for the pass over
   * cache hits of a full cook that starts soon (cookProject: open, scan, plan, cook): `probe` then
   * takes a match from it instead of its own lstat. Only when prestatWanted (32k entries up to a
   * lean-heap project). Ends at
   * endPrestat (after the pass), a compaction, or close.
   */
  prestatOutputs(): void {
    if (!prestatWanted(this.index.size)) return;
    this.endPrestat();
    this.prestat = OutputPrestat.start(this.arena.buf, this.arena.used, this.index.values(), this.cookedDir);
  }

  /** Tests only: the prestat's thread is done. */
  async prestatDone(): Promise<void> {
    await this.prestat?.done;
  }

  /** The prestat's pass is over: from now on every probe stats its output itself. */
  endPrestat(): void {
    this.prestat?.stop();
    this.prestat = undefined;
  }

  /**
   * Record a cook whose output is already on disk: its size and mtime as the writer saw them
   * (`file`, from the written file's descriptor), else read from it here.
   */
  set(guid: string, key: CookKey, entry: Omit<CacheEntry, 'key' | 'parts' | 'cookedSize' | 'cookedMtimeMs'>, file?: { size: number; mtimeMs: number }): CacheEntry {
    const st = file ?? fs.statSync(path.join(this.cookedDir, entry.cookedFile));
    // Every key spelled out, in one order, instead of a spread into the literal: V8 builds a spread
    // of a caller's object with a hidden class of its own per call, and the record writer and the
    // journal's JSON.stringify then read each entry through the slow, megamorphic path.
    const full: CacheEntry = {
      key: key.key,
      parts: key.parts,
      cookedFile: entry.cookedFile,
      rawSize: entry.rawSize,
      xxh64: entry.xxh64,
      cookedXxh64: entry.cookedXxh64,
      sourceSize: entry.sourceSize,
      strippedExports: entry.strippedExports,
      nulledRefs: entry.nulledRefs,
      texture: entry.texture,
      classes: entry.classes,
      cookMs: entry.cookMs,
      cookedSize: st.size,
      cookedMtimeMs: st.mtimeMs,
    };
    const strings = this.table.list.length;
    const at = this.put(guid, full);
    // Strings the record added to the table go first: the record names them by index.
    for (let i = strings; i < this.table.list.length; i++) this.frame.string(i, this.table.list[i]);
    this.frame.set(this.arena.buf, at);
    this.appended();
    return full;
  }

  /**
   * Forget an entry whose output is about to be overwritten in place (or is gone), before the
   * overwrite: the journal must never hold an entry describing bytes no longer on disk.
   */
  delete(guid: string): void {
    if (!this.remove(guid)) return;
    this.frame.delete(guid);
    this.appended();
  }

  /** Drop entries for which `keep` is false. */
  prune(keep: (guid: string) => boolean): number {
    let n = 0;
    for (const guid of [...this.index.keys()]) {
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
    this.frame.pak(pakFile, record ?? null);
    this.appended();
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
    if (!force && !this.legacyPending && this.journalOps < Math.max(1024, this.index.size / 4)) return;
    await this.compact();
  }

  /**
   * Write the snapshot (the live records; when some are dead, packed into a fresh arena that
   * replaces the old one in memory too), then empty the journal.
   */
  async compact(): Promise<void> {
    await initHash();
    // Records may move: the prestat's bits name records by offset.
    this.endPrestat();
    // With no dead record the arena is already the snapshot, in the index's order (a record is only
    // ever appended, and one that replaces or drops another leaves it dead): written as it is. A
    // cold million-asset cook's arena is ~120 MB, and a packed copy stood beside it at the loop's end.
    if (this.dead > 0) {
      const live = Buffer.allocUnsafe(Math.max(1 << 16, this.arena.used - this.dead));
      let used = 0;
      const old = this.arena.buf;
      for (const [guid, at] of this.index) {
        const n = recordBytes(old, at);
        old.copy(live, used, at, at + n);
        this.index.set(guid, used);
        used += n;
      }
      this.arena = new Arena(live, used);
      this.arenaStart = 0;
      this.dead = 0;
    }
    const head = encodeHead(MANIFEST_VERSION, COOK_FORMAT_VERSION, this.table, new Map([...this.paks].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))), this.index.size);
    const records = this.arena.buf.subarray(this.arenaStart, this.arena.used);
    const h = createXxh64();
    h.update(head);
    h.update(records);
    const footer = Buffer.alloc(8);
    footer.writeBigUInt64LE(h.digest());
    await writeFileAtomic(this.file, [head, records, footer]);
    if (this.legacyPending) {
      await fsp.rm(this.legacyFile, { force: true }).catch(() => {});
      this.legacyPending = false;
    }
    // Replaying what the snapshot already holds is harmless, so a kill right here loses nothing.
    try {
      if (this.fd !== undefined) fs.ftruncateSync(this.fd, 0);
      else fs.rmSync(this.journalFile, { force: true });
    } catch (e) {
      throw errors.ioFailed(this.journalFile, 'truncate', e);
    }
    this.journalOps = 0;
    this.journalHead = false;
  }

  /** Close the journal (what was appended stays). */
  close(): void {
    this.endPrestat();
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}

function writeAll(fd: number, bytes: Buffer): void {
  for (let at = 0; at < bytes.byteLength; ) at += fs.writeSync(fd, bytes, at, bytes.byteLength - at);
}

/**
 * The file's bytes in shared memory: the snapshot becomes the arena, whose records the outputs'
 * stat thread (cook/outputPrestat.ts) reads in place instead of a copy.
 */
async function readShared(file: string): Promise<Buffer> {
  const fh = await fsp.open(file, 'r');
  try {
    const { size } = await fh.stat();
    const buf = Buffer.from(new SharedArrayBuffer(size));
    let at = 0;
    while (at < size) {
      const { bytesRead } = await fh.read(buf, at, size - at, at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    return at === size ? buf : buf.subarray(0, at);
  } finally {
    await fh.close();
  }
}

/** A stored cooked path with a `..` segment would name a file outside the cooked folder. */
function outsideCooked(cookedFile: string): boolean {
  return cookedFile.split('/').includes('..');
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
    !outsideCooked(o.cookedFile) &&
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
