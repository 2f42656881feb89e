/**
 * Pak sources from a folder laid out by virtual path (the cook output `Saved/Cooked/<virtual path>`):
 * a file that starts with the LCKD magic is copied in as a cooked package, any other file is
 * compressed. Sniffing the magic rather than the extension keeps non-package files (the registry,
 * text assets) correct whatever they are named.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { errors } from '../src/errors.js';
import { TEMP_MARKER } from '../src/util/atomicWrite.js';
import { COOKED_MAGIC } from '../src/format/cookedPackage.js';
import { comparePathBytes, validateVirtualPath } from './pakFormat.js';
import type { PakSource } from './writePak.js';

/** Does `file` start with the LCKD magic (a cooked package)? */
async function startsWithLckd(file: string): Promise<boolean> {
  const fh = await fsp.open(file, 'r');
  try {
    const b = Buffer.alloc(4);
    const { bytesRead } = await fh.read(b, 0, 4, 0);
    return bytesRead === 4 && b.readUInt32LE(0) === COOKED_MAGIC;
  } finally {
    await fh.close();
  }
}

/**
 * Every regular file under `dir` with its place under `dir` ("/Game/A.lasset"), one folder read at
 * a time and yielded in path byte order (what listFiles returns, without holding the list: at a
 * million cooked files that list was ~340 MB). Nothing is opened. A name with the temp marker is
 * skipped (a write in progress).
 */
export async function* walkFiles(dir: string): AsyncGenerator<{ path: string; file: string }> {
  yield* walk(path.resolve(dir), '');
}

async function* walk(d: string, prefix: string): AsyncGenerator<{ path: string; file: string }> {
  let names;
  try {
    names = await fsp.readdir(d, { withFileTypes: true });
  } catch (e) {
    throw errors.ioFailed(d, 'readdir', e);
  }
  // A folder sorts as its name plus "/", the way every path under it does: then walking the sorted
  // names depth first gives the whole tree in path byte order ("a.b" before "a/x" before "a0").
  const items: Array<{ key: string; name: string; dir: boolean }> = [];
  for (const n of names) {
    if (n.name.includes(TEMP_MARKER)) continue;
    if (n.isDirectory()) items.push({ key: `${n.name}/`, name: n.name, dir: true });
    else if (n.isFile()) items.push({ key: n.name, name: n.name, dir: false });
  }
  items.sort((a, b) => comparePathBytes(a.key, b.key));
  for (const it of items) {
    const file = path.join(d, it.name);
    const p = `${prefix}/${it.name}`;
    if (it.dir) yield* walk(file, p);
    else {
      validateVirtualPath(p, file);
      yield { path: p, file };
    }
  }
}

/** Every regular file under `dir` with its place under `dir` ("/Game/A.lasset"), sorted by path bytes; nothing is opened. */
export async function listFiles(dir: string): Promise<Array<{ path: string; file: string }>> {
  const out: Array<{ path: string; file: string }> = [];
  for await (const f of walkFiles(dir)) out.push(f);
  return out;
}

/** A listed file as a pak source: cooked when it starts with the LCKD magic, else a file to compress. */
export async function sourceOf(f: { path: string; file: string }): Promise<PakSource> {
  return { path: f.path, kind: (await startsWithLckd(f.file)) ? 'cooked' : 'file', file: f.file };
}

/** Every regular file under `dir` as a source whose path is its place under `dir` ("/Game/A.lasset"). */
export async function collectSources(dir: string): Promise<PakSource[]> {
  const out: PakSource[] = [];
  for (const f of await listFiles(dir)) out.push(await sourceOf(f));
  return out;
}
