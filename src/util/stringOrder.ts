/**
 * Sorting many strings in JS string order (UTF-16 code units, what `a < b` compares) without a
 * comparator per pair. A comparison sort of a million scattered heap strings (pak paths, GUIDs)
 * spends most of its time on cache misses and comparator calls: 20 comparisons per string, each
 * chasing two strings through the heap, made a 1M-entry pak's path sort ~60x 100k's.
 *
 * Here the strings are copied once into one contiguous array of code units, and sorted by
 * fixed-width keys: each level packs the next few units of every string of a group (as ranks in
 * the alphabet the strings use) and the string's index into one 64-bit word, and sorts those
 * words natively (BigUint64Array.sort, no JS calls); only strings whose keys tie go on to the
 * next level, after skipping the units the whole group shares. Equal strings keep their input
 * order, as Array.prototype.sort's stable sort would.
 */
import { endianness } from 'node:os';

/** Below this many strings a comparator sort is cheaper than building the arrays. */
const SMALL_SORT = 64;
/** Groups this small are finished by insertion sort on the units. */
const SMALL_GROUP = 16;
/** Longest total packStrings joins into one string (V8 caps a string near 2^29 units). */
const MAX_JOIN = 2 ** 28;
const NOT_LATIN1 = /[^\x00-\xff]/;
/** The packed words are read back as (lo, hi) pairs of 32-bit words. */
const LITTLE_ENDIAN = endianness() === 'LE';

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Strings copied into one array of UTF-16 units: string i is units[start[i]..start[i + 1]). */
export interface PackedStrings {
  /** One byte a unit when every unit is below 256, else two. */
  units: Uint8Array | Uint16Array;
  start: Uint32Array;
}

/** Copy `strings` into one array: one native join and one native write, where a charCodeAt per unit would chase each string. */
export function packStrings(strings: readonly string[], maxJoin = MAX_JOIN): PackedStrings {
  const n = strings.length;
  const start = new Uint32Array(n + 1);
  for (let i = 0; i < n; i++) start[i + 1] = start[i] + strings[i].length;
  // One joined string only while it stays under V8's string length limit (~2^29 units).
  if (start[n] > maxJoin) return packEach(strings, start);
  const joined = strings.join('');
  const wide = NOT_LATIN1.test(joined);
  const units = wide ? new Uint16Array(joined.length) : new Uint8Array(joined.length);
  Buffer.from(units.buffer, units.byteOffset, units.byteLength).write(joined, wide ? 'utf16le' : 'latin1');
  return { units, start };
}


/** packStrings for totals too long to join: string by string (slower, but any size). */
function packEach(strings: readonly string[], start: Uint32Array): PackedStrings {
  const wide = strings.some((s) => NOT_LATIN1.test(s));
  const units = wide ? new Uint16Array(start[strings.length]) : new Uint8Array(start[strings.length]);
  for (let i = 0; i < strings.length; i++) {
    const s = strings[i];
    for (let k = 0, p = start[i]; k < s.length; k++, p++) units[p] = s.charCodeAt(k);
  }
  return { units, start };
}

/** The indices of `strings` in string order (equal strings in index order). */
export function stringOrder(strings: readonly string[]): Uint32Array {
  const n = strings.length;
  if (n < SMALL_SORT || n > 2 ** 31 || !LITTLE_ENDIAN) {
    const order = new Uint32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    return order.sort((x, y) => byString(strings[x], strings[y]) || x - y);
  }
  return packedOrder(packStrings(strings)).order;
}

/**
 * The indices of packed strings in string order (equal strings in index order), and the first k
 * at which order[k] is the same string as order[k - 1] (-1: none), found on the way.
 */
export function packedOrder(packed: PackedStrings): { order: Uint32Array; repeat: number } {
  const { units, start } = packed;
  const n = start.length - 1;
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  if (n < 2) return { order, repeat: -1 };
  if (n > 2 ** 31 || !LITTLE_ENDIAN) {
    order.sort((x, y) => compareFrom(x, y, 0, units, start) || x - y);
    let k = 1;
    while (k < n && compareFrom(order[k - 1], order[k], 0, units, start) !== 0) k++;
    return { order, repeat: k < n ? k : -1 };
  }
  // Ranks 1..A of the units present (0 is "past the end", below every unit): a 16-letter alphabet
  // (hex) packs 4 bits a unit, paths ~6, so each level compares more of the string.
  const rank = new Uint16Array(units.BYTES_PER_ELEMENT === 1 ? 0x100 : 0x10000);
  for (let i = 0; i < units.length; i++) rank[units[i]] = 1;
  let letters = 0;
  for (let u = 0; u < rank.length; u++) if (rank[u] !== 0) rank[u] = ++letters;
  const bits = Math.max(1, Math.ceil(Math.log2(letters + 1)));
  const idxBits = Math.max(1, Math.ceil(Math.log2(n)));
  const idxScale = 2 ** idxBits;
  const hiUnits = Math.floor(32 / bits);
  const loUnits = Math.floor((32 - idxBits) / bits);
  const perLevel = hiUnits + loUnits;

  const keys = new BigUint64Array(n);
  const words = new Uint32Array(keys.buffer);
  /** Groups left to order: [lo, hi, depth] triples; every string of a group has the same first `depth` units. */
  const tasks: number[] = [0, n, 0];
  let repeat = n;
  while (tasks.length > 0) {
    let depth = tasks.pop()!;
    const hi = tasks.pop()!;
    const lo = tasks.pop()!;
    if (hi - lo <= SMALL_GROUP) {
      insertionSort(order, lo, hi, depth, units, start);
      for (let k = lo + 1; k < hi && k < repeat; k++) if (compareFrom(order[k - 1], order[k], depth, units, start) === 0) repeat = k;
      continue;
    }
    depth += sharedRun(order, lo, hi, depth, units, start);
    for (let j = lo; j < hi; j++) {
      const x = order[j];
      let p = start[x] + depth;
      const end = start[x + 1];
      let h = 0;
      for (let k = 0; k < hiUnits; k++, p++) h = (h << bits) | (p < end ? rank[units[p]] : 0);
      let l = 0;
      for (let k = 0; k < loUnits; k++, p++) l = (l << bits) | (p < end ? rank[units[p]] : 0);
      // Little-endian: the low word holds the index under the last units, the high word the first units.
      words[2 * j] = l * idxScale + x;
      words[2 * j + 1] = h; // stored mod 2^32: a key using all 32 bits is negative as an int
    }
    keys.subarray(lo, hi).sort();
    let runStart = lo;
    let runHi = words[2 * lo + 1];
    let runLo = Math.floor(words[2 * lo] / idxScale);
    for (let j = lo; j <= hi; j++) {
      const h = j < hi ? words[2 * j + 1] : -1;
      const l = j < hi ? Math.floor(words[2 * j] / idxScale) : -1;
      if (j < hi) order[j] = words[2 * j] - l * idxScale;
      if (h === runHi && l === runLo) continue;
      // A run of equal keys: the same units so far, so on to the next ones unless they ended
      // within this key (then they are equal and already in index order). A string of exactly
      // depth + perLevel units may still be a prefix of the others: that is the next level's.
      if (j - runStart > 1) {
        if (start[order[runStart] + 1] - start[order[runStart]] >= depth + perLevel) tasks.push(runStart, j, depth + perLevel);
        else if (runStart + 1 < repeat) repeat = runStart + 1;
      }
      runStart = j;
      runHi = h;
      runLo = l;
    }
  }
  return { order, repeat: repeat < n ? repeat : -1 };
}

/** How many units from `depth` on every string of order[lo..hi) shares with the first. */
function sharedRun(order: Uint32Array, lo: number, hi: number, depth: number, units: Uint8Array | Uint16Array, start: Uint32Array): number {
  const f = order[lo];
  const fAt = start[f] + depth;
  let shared = start[f + 1] - fAt;
  for (let j = lo + 1; j < hi && shared > 0; j++) {
    const x = order[j];
    const at = start[x] + depth;
    const len = Math.min(shared, start[x + 1] - at);
    let m = 0;
    while (m < len && units[fAt + m] === units[at + m]) m++;
    shared = m;
  }
  return shared;
}

/** Order order[lo..hi) (all sharing their first `depth` units) by the rest, stably. */
function insertionSort(order: Uint32Array, lo: number, hi: number, depth: number, units: Uint8Array | Uint16Array, start: Uint32Array): void {
  for (let j = lo + 1; j < hi; j++) {
    const x = order[j];
    let k = j;
    while (k > lo && compareFrom(order[k - 1], x, depth, units, start) > 0) {
      order[k] = order[k - 1];
      k--;
    }
    order[k] = x;
  }
}

function compareFrom(a: number, b: number, depth: number, units: Uint8Array | Uint16Array, start: Uint32Array): number {
  let p = start[a] + depth;
  let q = start[b] + depth;
  const pe = start[a + 1];
  const qe = start[b + 1];
  for (; p < pe && q < qe; p++, q++) {
    const d = units[p] - units[q];
    if (d !== 0) return d;
  }
  return pe - p - (qe - q);
}

/** A sorted copy of `items` by `key` in string order (stable: the order `[...items].sort(by key)` gives). */
export function sortedByString<T>(items: readonly T[], key: (item: T) => string): T[] {
  if (items.length < SMALL_SORT) return [...items].sort((a, b) => byString(key(a), key(b)));
  const order = stringOrder(items.map(key));
  const sorted = new Array<T>(order.length);
  for (let k = 0; k < order.length; k++) sorted[k] = items[order[k]];
  return sorted;
}
