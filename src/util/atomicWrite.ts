/**
 * Outputs are committed atomically: write a temp file beside the target, fsync it, rename it over
 * the target, then fsync the folder so the rename itself survives a power cut. A crash at any
 * point leaves either the old file or the new one under the final name, never a half-written one.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import crypto from 'node:crypto';
import { errors, isLuminaError } from '../errors.js';
import { pidAlive } from './pidAlive.js';

/** Temp files carry this marker so a later run can sweep what a killed run left behind. */
export const TEMP_MARKER = '.lctmp-';

export function tempPathFor(target: string): string {
  return path.join(path.dirname(target), `${path.basename(target)}${TEMP_MARKER}${process.pid}-${crypto.randomBytes(4).toString('hex')}`);
}

async function fsyncDir(dir: string): Promise<void> {
  let fh: fsp.FileHandle | undefined;
  try {
    fh = await fsp.open(dir, 'r');
    await fh.sync();
  } catch {
    // Some filesystems refuse fsync on directories; the rename is still atomic there.
  } finally {
    await fh?.close();
  }
}

/** Write `data` (one buffer or several, written in order) to `target` atomically. */
export async function writeFileAtomic(target: string, data: Uint8Array | readonly Uint8Array[]): Promise<void> {
  await withAtomicFile(target, async (fh) => {
    for (const part of data instanceof Uint8Array ? [data] : data) await writeFully(fh, part);
  });
}

/**
 * Write all of `b` to `fh`, at `position` or else at the file's current offset: a write may take
 * fewer bytes than it was given, and the rest goes in further writes.
 */
export async function writeFully(fh: fsp.FileHandle, b: Uint8Array, position?: number): Promise<void> {
  for (let done = 0; done < b.byteLength; ) {
    done += (await fh.write(b, done, b.byteLength - done, position === undefined ? null : position + done)).bytesWritten;
  }
}

/**
 * Open a temp file for `target`, let `fill` write into it, then fsync and rename. When `fill`
 * throws, the temp file is removed and the target is untouched.
 */
export async function withAtomicFile<T>(target: string, fill: (fh: fsp.FileHandle, tempPath: string) => Promise<T>): Promise<T> {
  const { staged, result } = await stageAtomicFile(target, fill);
  await commitStaged([staged]);
  return result;
}

/**
 * A temp file written for `target` and still open, neither fsynced nor renamed: commitStaged
 * makes it the target, discardStaged removes it.
 */
export interface StagedFile {
  readonly target: string;
  readonly temp: string;
  /** Open until commitStaged or discardStaged closes it. */
  fh: fsp.FileHandle | undefined;
}

/**
 * Open a temp file for `target` and let `fill` write into it; the file stays open and unsynced
 * until commitStaged. When `fill` throws, the temp file is removed and the target is untouched.
 * Several files staged this way commit together: their fsyncs run at once (one journal commit
 * where they land in the same one) and each folder is fsynced once, after the renames.
 */
export async function stageAtomicFile<T>(target: string, fill: (fh: fsp.FileHandle, tempPath: string) => Promise<T>): Promise<{ staged: StagedFile; result: T }> {
  const temp = tempPathFor(target);
  let fh: fsp.FileHandle | undefined;
  try {
    await fsp.mkdir(path.dirname(target), { recursive: true });
    fh = await fsp.open(temp, 'w', 0o644);
    const result = await fill(fh, temp);
    return { staged: { target, temp, fh }, result };
  } catch (e) {
    await fh?.close().catch(() => {});
    await fsp.rm(temp, { force: true }).catch(() => {});
    if (isLuminaError(e)) throw e;
    throw errors.ioFailed(target, 'write', e);
  }
}

/**
 * Make staged files their targets: every temp fsynced (all at once) and closed, then renamed over
 * its target in the order given, then each folder fsynced once so the renames survive a power
 * cut. A crash at any point leaves each target either old or new, never half-written. On a
 * failure the temps not yet renamed are removed and the error names the target that failed.
 */
export async function commitStaged(files: readonly StagedFile[]): Promise<void> {
  let at = 0;
  try {
    await Promise.all(
      files.map(async (f) => {
        try {
          await f.fh!.sync();
        } catch (e) {
          throw errors.ioFailed(f.target, 'write', e);
        }
      }),
    );
    for (const f of files) {
      const fh = f.fh!;
      f.fh = undefined;
      try {
        await fh.close();
      } catch (e) {
        throw errors.ioFailed(f.target, 'write', e);
      }
    }
    for (; at < files.length; at++) {
      try {
        await fsp.rename(files[at].temp, files[at].target);
      } catch (e) {
        throw errors.ioFailed(files[at].target, 'write', e);
      }
    }
  } catch (e) {
    await discardStaged(files.slice(at));
    throw e;
  }
  for (const dir of new Set(files.map((f) => path.dirname(f.target)))) await fsyncDir(dir);
}

/** Close and remove staged files that will not be committed. */
export async function discardStaged(files: readonly StagedFile[]): Promise<void> {
  for (const f of files) {
    const fh = f.fh;
    f.fh = undefined;
    await fh?.close().catch(() => {});
    await fsp.rm(f.temp, { force: true }).catch(() => {});
  }
}

/** Copy `source` to `target` atomically: the copy is fsynced under a temp name, then renamed. */
export async function copyFileAtomic(source: string, target: string): Promise<void> {
  await withAtomicFile(target, async (_fh, tmp) => {
    // copyFile opens the temp path with O_TRUNC, so it fills the same inode the handle holds and
    // the handle's fsync in withAtomicFile covers the copy.
    try {
      await fsp.copyFile(source, tmp);
    } catch (e) {
      throw errors.ioFailed(source, 'read', e);
    }
  });
}

/** Synchronous variant for small files written at exit paths (daemon.json, lock files). */
export function writeFileAtomicSync(target: string, data: Uint8Array | string, mode = 0o644): void {
  const tmp = tempPathFor(target);
  try {
    fs.mkdirSync(path.dirname(target), { recursive: true });
    const fd = fs.openSync(tmp, 'w', mode);
    try {
      fs.writeFileSync(fd, data);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.chmodSync(tmp, mode);
    fs.renameSync(tmp, target);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw errors.ioFailed(target, 'write', e);
  }
}

/** The pid a temp file's name carries (`<name>.lctmp-<pid>-...`), or undefined. */
export function tempOwnerPid(name: string): number | undefined {
  const at = name.lastIndexOf(TEMP_MARKER);
  if (at < 0) return undefined;
  const m = /^(\d+)-/.exec(name.slice(at + TEMP_MARKER.length));
  return m ? Number(m[1]) : undefined;
}

/**
 * Remove temp files a killed run left in `dir` (not recursive). A temp whose writer is still
 * running (its pid is in the name) is left alone, so a cook beside a live daemon never pulls a
 * file out from under it. Returns how many were removed.
 */
export async function sweepTempFiles(dir: string): Promise<number> {
  let names: string[];
  try {
    names = await fsp.readdir(dir);
  } catch {
    return 0;
  }
  let n = 0;
  for (const name of names) {
    if (!name.includes(TEMP_MARKER)) continue;
    const pid = tempOwnerPid(name);
    if (pid !== undefined && pidAlive(pid)) continue;
    await fsp.rm(path.join(dir, name), { force: true });
    n++;
  }
  return n;
}
