/**
 * lstat of the files a walk finds, without a `fs.Stats` per file.
 *
 * Why: a warm no-op scan is one lstat per file. Node 20's `fs.lstatSync` builds a Stats object
 * with four Date objects for every call (the dates are not lazy before Node 22); over 50k files
 * that garbage drove most of the scan's GC, and measured in the scan (open + warm scan of 50k,
 * A/B interleaved, load ~9) the whole scan took 553 ms of CPU with lstatSync against 419 ms with
 * this. The same native lstat `fs.lstatSync` calls is reached through `process.binding('fs')`,
 * which hands back the numbers in one shared Float64Array and allocates nothing.
 *
 * `process.binding` is deprecated (DEP0111, documentation-only) and its layout is internal, so
 * it is used only after a check at load time: the binding must exist and give exactly what
 * `fs.lstatSync` gives for a real file (size, mtimeMs to the bit, file type). Otherwise, or if
 * anything about it throws, every call goes through `fs.lstatSync`, as before. Only paths built
 * from readdir names come here (no validation needed: they cannot hold NUL bytes); paths from
 * users go through `fs.lstatSync`.
 */
import fs from 'node:fs';

/** What the registry keeps of a stat. */
export interface LstatNumbers {
  mtimeMs: number;
  size: number;
  isFile: boolean;
}

interface FsBinding {
  lstat(path: string, bigint: boolean, req: undefined, fourth: object): Float64Array | undefined;
}

/**
 * The binding's sync lstat takes a fourth argument that changed meaning within the Node versions
 * this runs on (engines: >= 20.11): older ones want a context object they write an error into
 * (and crash on anything else), newer ones a throw-if-no-entry flag (only `false` means "no").
 * An object suits both: the older return undefined on any error, the newer throw; either way the
 * caller below sees "not there".
 */
const ERROR_CONTEXT = {};

/** The binding's stat numbers for `file`, or undefined when it cannot be statted. */
function rawLstat(b: FsBinding, file: string): Float64Array | undefined {
  try {
    return b.lstat(file, false, undefined, ERROR_CONTEXT);
  } catch {
    return undefined;
  }
}

// Indexes into the binding's stat array (Node's kFsStatsFieldsNumber layout): mode, size, mtime sec + nsec.
const MODE = 1;
const SIZE = 8;
const MTIME_SEC = 12;
const MTIME_NSEC = 13;
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;

/**
 * Fill `out` with the stat of `file` (not following a symlink) and return true, or return false
 * when it is gone or cannot be statted (the walk treats both as "not there"). `out` is the
 * caller's to reuse, so a walk allocates nothing per file here.
 */
export function lstatInto(file: string, out: LstatNumbers): boolean {
  if (binding !== null) {
    const v = rawLstat(binding, file);
    if (v === undefined) return false;
    // Node's own formula (msFromTimeSpec), so the double is the one lstatSync would give.
    out.mtimeMs = v[MTIME_SEC] * 1e3 + v[MTIME_NSEC] / 1e6;
    out.size = v[SIZE];
    out.isFile = (v[MODE] & S_IFMT) === S_IFREG;
    return true;
  }
  let s: fs.Stats;
  try {
    s = fs.lstatSync(file);
  } catch {
    return false;
  }
  out.mtimeMs = s.mtimeMs;
  out.size = s.size;
  out.isFile = s.isFile();
  return true;
}

/** Whether `lstatInto` uses the binding (for tests and the bench's notes). */
export function lstatFastPath(): boolean {
  return binding !== null;
}

/** The binding when it checks out against fs.lstatSync on a real file, else null. */
function probe(): FsBinding | null {
  try {
    const b = (process as unknown as { binding?: (name: string) => unknown }).binding?.('fs') as FsBinding | undefined;
    if (typeof b?.lstat !== 'function') return null;
    const file = process.execPath;
    const want = fs.lstatSync(file);
    const v = rawLstat(b, file);
    if (!(v instanceof Float64Array) || v.length <= MTIME_NSEC) return null;
    const mtimeMs = v[MTIME_SEC] * 1e3 + v[MTIME_NSEC] / 1e6;
    if (mtimeMs !== want.mtimeMs || v[SIZE] !== want.size || ((v[MODE] & S_IFMT) === S_IFREG) !== want.isFile()) return null;
    if (rawLstat(b, `${file}\u0001missing`) !== undefined) return null;
    return b;
  } catch {
    return null;
  }
}

// LUMINA_PLAIN_LSTAT=1 rules the binding out (to compare, or to diagnose a stat that looks wrong).
const binding = process.env.LUMINA_PLAIN_LSTAT === '1' ? null : probe();
