/**
 * readdir with entry types for the folders a walk enters, without an `fs.Dirent` per entry.
 *
 * Why: `fs.readdirSync(dir, { withFileTypes: true })` gets names and types from its native call
 * as two arrays, then builds a Dirent (name, parentPath, path, type) for each entry; over a 50k-
 * file warm scan those objects were most of the walk's garbage. The same native call is reached
 * through `process.binding('fs')` (as fastLstat.ts does for lstat), and the two arrays are used
 * as they come.
 *
 * The binding is internal, so it is used only when it checks out: `fs.readdirSync` itself must
 * call it the way it is called here (path, encoding, withFileTypes: three arguments, errors
 * thrown; older Node 20 releases passed an error context instead and abort on three), and the
 * first folder read through it must give exactly the names and types `fs.readdirSync` gives for
 * that folder. Otherwise, or when `LUMINA_PLAIN_READDIR=1`, every call goes through
 * `fs.readdirSync`. An entry whose type the filesystem does not report (DT_UNKNOWN, some network
 * and older filesystems) is lstat'ed, as `fs.readdirSync` does.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Entry types, as libuv and fs.constants number them. */
export const DIRENT_UNKNOWN = 0;
export const DIRENT_FILE = 1;
export const DIRENT_DIR = 2;
/** Anything else (symlink, fifo, socket, device). */
const DIRENT_OTHER = 3;

/** A folder's entries: `types[i]` is the type of `names[i]` (DIRENT_FILE, DIRENT_DIR or another). */
export interface DirList {
  names: string[];
  types: number[];
}

interface FsBinding {
  readdir(path: string, encoding: string, withFileTypes: boolean): [string[], number[]] | undefined;
}

/** `fs.readdirSync`'s own answer, as a DirList. */
function publicList(dir: string): DirList {
  const ents = fs.readdirSync(dir, { withFileTypes: true });
  const names = new Array<string>(ents.length);
  const types = new Array<number>(ents.length);
  for (let i = 0; i < ents.length; i++) {
    const d = ents[i];
    names[i] = d.name;
    types[i] = d.isFile() ? DIRENT_FILE : d.isDirectory() ? DIRENT_DIR : DIRENT_OTHER;
  }
  return { names, types };
}

/** The entries of `dir` with their types. Throws what `fs.readdirSync` throws (ENOENT, EACCES...). */
export function readdirTypes(dir: string): DirList {
  // fs.readdirSync refuses a NUL in a path; the binding would read the path cut at it.
  if (binding === null || dir.includes('\u0000')) return publicList(dir);
  const raw = binding.readdir(dir, 'utf8', true);
  if (!Array.isArray(raw) || !Array.isArray(raw[0]) || !Array.isArray(raw[1])) {
    binding = null;
    return publicList(dir);
  }
  const names = raw[0];
  const types = raw[1];
  for (let i = 0; i < types.length; i++) {
    const t = types[i];
    if (t === DIRENT_FILE || t === DIRENT_DIR) continue;
    types[i] = t === DIRENT_UNKNOWN ? typeByLstat(dir + path.sep + names[i]) : DIRENT_OTHER;
  }
  if (!checked) {
    checked = true;
    if (!sameList({ names, types }, publicList(dir))) {
      binding = null;
      return publicList(dir);
    }
  }
  return { names, types };
}

/** Whether `readdirTypes` uses the binding (for tests and the bench's notes). */
export function readdirFastPath(): boolean {
  return binding !== null;
}

function typeByLstat(file: string): number {
  try {
    const s = fs.lstatSync(file);
    return s.isFile() ? DIRENT_FILE : s.isDirectory() ? DIRENT_DIR : DIRENT_OTHER;
  } catch {
    // Gone since the listing: the walk's own lstat will see that.
    return DIRENT_OTHER;
  }
}

function sameList(a: DirList, b: DirList): boolean {
  if (a.names.length !== b.names.length) return false;
  for (let i = 0; i < a.names.length; i++) if (a.names[i] !== b.names[i] || a.types[i] !== b.types[i]) return false;
  return true;
}

/** The binding when `fs.readdirSync` calls it with three arguments and lets it throw, else null. */
function probe(): FsBinding | null {
  // Elsewhere fs.readdirSync also rewrites the path (toNamespacedPath on Windows).
  if (path.sep !== '/') return null;
  try {
    const src = Function.prototype.toString.call(fs.readdirSync);
    // The call this module makes, as fs.readdirSync makes it: no error context, no request.
    if (!/binding\.readdir\(\s*pathModule\.toNamespacedPath\(path\),\s*options\.encoding,\s*!!options\.withFileTypes,?\s*\)/.test(src)) return null;
    const b = (process as unknown as { binding?: (name: string) => unknown }).binding?.('fs') as FsBinding | undefined;
    return typeof b?.readdir === 'function' ? b : null;
  } catch {
    return null;
  }
}

// The first folder read through the binding is compared with fs.readdirSync's answer (`checked`).
let checked = false;
let binding: FsBinding | null = process.env.LUMINA_PLAIN_READDIR === '1' ? null : probe();
