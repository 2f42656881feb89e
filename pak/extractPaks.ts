/**
 * Extracting a set of mounted paks into a folder, and streaming one path out of them. Entries
 * stream in windows (PakReader.readChunks), so memory stays bounded whatever an entry's size, and
 * each file is committed atomically only after its hash checked out.
 *
 * Every path is checked before anything is created: no `..` escape, no segment longer than a file
 * name may be, no file that another entry needs as a folder, and no folder on the way that is a
 * symlink or not a folder. Folders are then made one level at a time under `--out` (never
 * `mkdir -p` through what is there), so nothing is ever created outside it.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { errors, isLuminaError } from '../src/errors.js';
import { withAtomicFile, writeFully } from '../src/util/atomicWrite.js';
import { MountedPaks, type MountOptions } from './MountedPaks.js';

export interface ExtractResult {
  files: number;
  bytes: number;
  /** The output folder, absolute. */
  out: string;
}

/** Longest file name (one path segment) in bytes on the filesystems we run on (NAME_MAX). */
const NAME_MAX = 255;

/** True when `target` lies strictly inside `root` (`/out/..foo` does; `/out/../foo` does not). */
function isInside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}

async function lstatOrUndefined(p: string): Promise<fs.Stats | undefined> {
  try {
    return await fsp.lstat(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw errors.ioFailed(p, 'stat', e);
  }
}

/** Make `--out` (and its parents, which the user named) unless it is there; it must be a folder. */
async function prepareOutDir(root: string): Promise<void> {
  const st = await lstatOrUndefined(root);
  if (st?.isSymbolicLink()) {
    // A symlink the user passed as --out is followed, but it must lead to a folder.
    let real: fs.Stats;
    try {
      real = await fsp.stat(root);
    } catch (e) {
      throw errors.ioFailed(root, 'use as the output folder', e);
    }
    if (!real.isDirectory()) throw errors.ioFailed(root, 'use as the output folder', new Error('it links to a file, not a folder'));
    return;
  }
  if (st !== undefined) {
    if (!st.isDirectory()) throw errors.ioFailed(root, 'use as the output folder', new Error('it is a file, not a folder'));
    return;
  }
  try {
    await fsp.mkdir(root, { recursive: true });
  } catch (e) {
    throw errors.ioFailed(root, 'create the output folder', e);
  }
}

/**
 * Check every path of the mount against the output folder before anything is written, and return
 * the folders to create (outermost first). Throws PAK_PATH_INVALID naming the pak and the entry.
 */
async function planFolders(m: MountedPaks, paths: readonly string[], root: string): Promise<string[]> {
  const files = new Set(paths);
  const pakOf = (p: string) => m.pakEntry(p)?.pak.file ?? m.paks.map((k) => k.file).join(', ');
  const seen = new Map<string, 'missing' | 'folder'>();
  const toMake: string[] = [];
  for (const p of paths) {
    const segments = p.slice(1).split('/');
    const long = segments.find((s) => Buffer.byteLength(s, 'utf8') > NAME_MAX);
    if (long !== undefined) throw errors.pakPathInvalid(pakOf(p), p, `has a segment of ${Buffer.byteLength(long, 'utf8')} bytes, longer than a file name may be (${NAME_MAX})`);
    const target = path.join(root, ...segments);
    if (!isInside(root, target)) throw errors.pakPathInvalid(pakOf(p), p, 'escapes the output folder');
    let dir = root;
    let virtual = '';
    for (const s of segments.slice(0, -1)) {
      dir = path.join(dir, s);
      virtual += `/${s}`;
      if (files.has(virtual)) throw errors.pakPathInvalid(pakOf(p), p, `needs "${virtual}" as a folder, but the paks also hold a file there`);
      const known = seen.get(dir);
      if (known !== undefined) continue;
      // Below a folder that is still to be made, nothing exists yet.
      const parentMissing = seen.get(path.dirname(dir)) === 'missing';
      const st = parentMissing ? undefined : await lstatOrUndefined(dir);
      if (st?.isSymbolicLink()) throw errors.pakPathInvalid(pakOf(p), p, 'escapes the output folder through a symlink');
      if (st !== undefined && !st.isDirectory()) throw errors.pakPathInvalid(pakOf(p), p, `needs ${dir} to be a folder, but it is a file`);
      seen.set(dir, st === undefined ? 'missing' : 'folder');
      if (st === undefined) toMake.push(dir);
    }
    const st = seen.get(path.dirname(target)) === 'missing' ? undefined : await lstatOrUndefined(target);
    if (st?.isDirectory()) throw errors.pakPathInvalid(pakOf(p), p, `would replace the folder ${target}`);
  }
  return toMake;
}

/** Write one path's content to `target` atomically; the entry's hash is checked before the rename. */
async function extractOne(m: MountedPaks, p: string, target: string): Promise<number> {
  return withAtomicFile(target, async (fh) => {
    let n = 0;
    for await (const chunk of m.chunks(p)) {
      await writeFully(fh, chunk);
      n += chunk.byteLength;
    }
    return n;
  });
}

/**
 * Write every live path of the paks under `outDir`. Refuses (PAK_PATH_INVALID, before writing
 * anything) a path that escapes the folder, goes through a symlink, or collides with another
 * path; filesystem failures are IO_FAILED naming the file.
 */
export async function extractPaks(paks: readonly string[], outDir: string, opts: MountOptions = {}): Promise<ExtractResult> {
  const root = path.resolve(outDir);
  const m = await MountedPaks.mount(paks, opts);
  try {
    const list = await m.list();
    await prepareOutDir(root);
    const toMake = await planFolders(m, list, root);
    for (const dir of toMake) {
      try {
        // Not recursive: its parent was checked (or made) just before, so this cannot follow a link.
        await fsp.mkdir(dir);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw errors.ioFailed(dir, 'create folder', e);
        if (!(await fsp.lstat(dir)).isDirectory()) throw errors.ioFailed(dir, 'create folder', e);
      }
    }
    let files = 0;
    let bytes = 0;
    for (const p of list) {
      const target = path.join(root, ...p.slice(1).split('/'));
      try {
        bytes += await extractOne(m, p, target);
      } catch (e) {
        if (isLuminaError(e)) throw e;
        throw errors.ioFailed(target, 'write', e);
      }
      files++;
    }
    return { files, bytes, out: root };
  } finally {
    await m.close();
  }
}

/**
 * Stream the content of one virtual path to `out` (stdout for `pak cat`), window by window with
 * backpressure. The entry hash is checked after the last window: on a mismatch the bytes already
 * written stay written and the error says the entry is corrupt.
 */
export async function catPath(paks: readonly string[], virtualPath: string, out: NodeJS.WritableStream, opts: MountOptions = {}): Promise<number> {
  const m = await MountedPaks.mount(paks, opts);
  try {
    let n = 0;
    for await (const chunk of m.chunks(virtualPath)) {
      if (!out.write(chunk)) await waitDrain(out);
      n += chunk.byteLength;
    }
    return n;
  } finally {
    await m.close();
  }
}

/** Resolve on 'drain'; reject when the stream errors or closes first (a reader that went away). */
function waitDrain(out: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (e?: unknown) => {
      out.off('drain', onDrain);
      out.off('error', onError);
      out.off('close', onClose);
      if (e) reject(e);
      else resolve();
    };
    const onDrain = () => done();
    const onError = (e: unknown) => done(e);
    const onClose = () => done(Object.assign(new Error('output closed'), { code: 'EPIPE' }));
    out.on('drain', onDrain);
    out.on('error', onError);
    out.on('close', onClose);
  });
}
