/**
 * A folder of the loaded registry cache held as its rows in the cache bytes, not as entries
 * (EntryTable's LazyFolder).
 *
 * Why: a warm no-op scan of 50k packages built an entry, a name string and a map slot per file at
 * open only to compare each with one lstat and throw nothing away; that load was about a third of
 * the scan. Here the warm walk compares a folder's listing with the folder's rows in order
 * (`matchNext`: the exact name bytes, mtime and size, nothing allocated). The rows are in name
 * order (the cache is sorted by file path) and the listing comes in byte order from libuv's
 * scandir, which agree for ASCII names; only package-only folders with ASCII names under one mount
 * are held this way (registryCache.ts `indexRegistryCache`). Anything else (a new, missing or
 * changed file, another order, a lookup by the rest of the registry) builds the folder's entries
 * (`materialize`) and the scan goes on as for any built folder: a mismatch costs time, never a
 * wrong answer.
 *
 * What the walk settled is kept here, so a build at any time gives the entries the registry would
 * hold had it built them at load: rows matched in the current walk (`cursor` of them in walk
 * `cursorGen`) are seen in that walk and live, the others keep the folder's `gen` and `live`.
 */
import { compareRowName, entryAt, relNameStart, rowMatches, type CacheEntry, type CacheFolderRows, type CacheImage, type RowName } from './registryCache.js';
import type { LazyFolder } from './entryTable.js';

export class RowFolder implements LazyFolder<CacheEntry> {
  /** Rows matched, in order, by the walk `cursorGen`. */
  cursor = 0;
  cursorGen = -1;
  /** The last scan in which every row was seen (as an entry's `gen`). */
  gen = 0;
  /** Whether the rows are live (found by a scan under their mount), as an entry's `live`. */
  live = false;
  readonly count: number;
  /** Entries `find` made before the folder was built, by row: `materialize` gives the same objects. */
  private made: Map<number, CacheEntry> | undefined;
  /** Where a row's file name starts in its relative path (`find`). */
  private nameFrom: number | undefined;
  /** The row `find` found last. */
  private lastFound = -1;

  constructor(
    readonly image: CacheImage,
    private readonly rows: CacheFolderRows,
  ) {
    this.count = rows.rows.length;
  }

  get dirSep(): string {
    return this.rows.dirSep;
  }

  /** The mount every row was found under (alias and folder), as the cache names it. */
  get mount(): { alias: string; dir: string } {
    return this.image.mounts[this.rows.mountIndex];
  }

  /**
   * In walk `gen`: whether the next row in order is the package `name` with this mtime and size.
   * True moves on to the row after it; false leaves the folder to be built.
   */
  matchNext(gen: number, name: string, mtimeMs: number, size: number): boolean {
    if (this.cursorGen !== gen) {
      this.cursorGen = gen;
      this.cursor = 0;
    }
    const i = this.cursor;
    if (i >= this.count || !rowMatches(this.image, this.rows.rows[i], name, mtimeMs, size)) return false;
    this.cursor = i + 1;
    return true;
  }

  /** Whether walk `gen` matched every row. */
  allSeenIn(gen: number): boolean {
    return this.cursorGen === gen && this.cursor === this.count;
  }

  /**
   * The entry of the row named `name` (binary search: the rows are in name order), without
   * building the folder, or undefined. Its `gen` and `live` are what the walks settled now; the
   * folder's build later gives this same object (a thawed record stays the one record).
   */
  find(name: string): CacheEntry | undefined {
    const rows = this.rows.rows;
    if (rows.length === 0) return undefined;
    // Every row of the folder has the same folder part: its name starts at the same place.
    const from = (this.nameFrom ??= relNameStart(this.image, rows[0]));
    // Asked in name order (a stored plan lists its records by file), the answer is a few rows on.
    for (let i = this.lastFound + 1, end = Math.min(rows.length, i + 4); i < end; i++) {
      const c = compareRowName(this.image, rows[i], from, name);
      if (c === 0) return this.entryOfRow(i);
      if (c > 0) break;
    }
    let lo = 0;
    let hi = rows.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = compareRowName(this.image, rows[mid], from, name);
      if (c === 0) return this.entryOfRow(mid);
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    // Our encoder sorts the rows, but nothing checks that at load: a miss is confirmed row by row.
    for (let i = 0; i < rows.length; i++) if (compareRowName(this.image, rows[i], from, name) === 0) return this.entryOfRow(i);
    return undefined;
  }

  private entryOfRow(i: number): CacheEntry {
    this.lastFound = i;
    let e = this.made?.get(i);
    if (e === undefined) {
      e = entryAt(this.image, this.rows.rows[i], this.rows.dirSep, true, { name: '' });
      (this.made ??= new Map()).set(i, e);
    }
    this.settle(e, i);
    return e;
  }

  /** Every row as an entry, in name order, with what the walks settled (see the module note). */
  materialize(): Map<string, CacheEntry> {
    const names = new Map<string, CacheEntry>();
    const dirSep = this.rows.dirSep;
    const rows = this.rows.rows;
    const out: RowName = { name: '' };
    const made = this.made;
    this.made = undefined;
    for (let i = 0; i < rows.length; i++) {
      const found = made?.get(i);
      const e = found ?? entryAt(this.image, rows[i], dirSep, true, out);
      if (found !== undefined) out.name = found.file.slice(dirSep.length);
      this.settle(e, i);
      names.set(out.name, e);
    }
    return names;
  }

  /** Row `i`'s entry as the walks left it: matched in the current walk, else the folder's state. */
  private settle(e: CacheEntry, i: number): void {
    if (i < this.cursor && this.cursorGen > this.gen) {
      e.gen = this.cursorGen;
      e.live = true;
    } else {
      e.gen = this.gen;
      e.live = this.live;
    }
  }
}
