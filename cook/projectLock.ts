/**
 * One writer per project: `Intermediates/lumina.lock` names the process that writes the project's
 * outputs and caches (a `cook`, a `patch`, or a watch daemon). A second writer gets PROJECT_LOCKED
 * naming the holder, instead of two processes interleaving the cook cache journal and the paks.
 *
 * The lock is a file created with O_EXCL holding `{ pid, holder, startedAt }`. A lock whose pid is
 * gone (a kill -9, a crash) is stale and taken over. Within one process a held lock is tracked in
 * memory, so a second Cooker in the same process (a test, an embedding tool) is refused too.
 */
import fs from 'node:fs';
import path from 'node:path';
import { errors } from '../src/errors.js';
import { pidAlive } from '../src/util/pidAlive.js';

export const LOCK_FILE_NAME = 'lumina.lock';

export type LockHolder = 'cook' | 'watch';

interface LockInfo {
  pid: number;
  holder: LockHolder;
  startedAt: string;
}

/** Lock files this process holds (absolute paths). */
const held = new Set<string>();

export class ProjectLock {
  private released = false;

  private constructor(readonly file: string) {}

  /**
   * Take the project's lock or throw PROJECT_LOCKED naming the live holder. A stale lock (its
   * process is gone) is removed and taken.
   */
  static acquire(intermediatesDir: string, holder: LockHolder): ProjectLock {
    const file = path.join(intermediatesDir, LOCK_FILE_NAME);
    try {
      fs.mkdirSync(intermediatesDir, { recursive: true });
    } catch (e) {
      throw errors.ioFailed(intermediatesDir, 'create', e);
    }
    const info: LockInfo = { pid: process.pid, holder, startedAt: new Date().toISOString() };
    for (let attempt = 0; attempt < 50; attempt++) {
      if (held.has(file)) throw errors.projectLocked(file, readInfo(file) ?? { pid: process.pid, holder });
      try {
        fs.writeFileSync(file, JSON.stringify(info) + '\n', { flag: 'wx', mode: 0o644 });
        held.add(file);
        return new ProjectLock(file);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw errors.ioFailed(file, 'create', e);
      }
      const other = readInfo(file);
      if (other === undefined && attempt < 10) {
        // Created but not filled in yet by a writer starting right now: look again shortly.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
        continue;
      }
      if (other && other.pid !== process.pid && pidAlive(other.pid)) throw errors.projectLocked(file, other);
      // Stale (its process is gone, or it stayed unreadable): remove it and try again. Should
      // another writer take it in between, the next round sees that one alive and refuses.
      try {
        fs.rmSync(file, { force: true });
      } catch (e) {
        throw errors.ioFailed(file, 'remove', e);
      }
    }
    throw errors.projectLocked(file, readInfo(file) ?? { pid: 0, holder });
  }

  /** Release (idempotent). Removes the file only when it is still ours. */
  release(): void {
    if (this.released) return;
    this.released = true;
    held.delete(this.file);
    const info = readInfo(this.file);
    if (info && info.pid === process.pid) fs.rmSync(this.file, { force: true });
  }
}

function readInfo(file: string): LockInfo | undefined {
  try {
    const o = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<LockInfo>;
    if (!Number.isInteger(o.pid) || (o.holder !== 'cook' && o.holder !== 'watch')) return undefined;
    return { pid: o.pid!, holder: o.holder, startedAt: String(o.startedAt ?? '') };
  } catch {
    return undefined;
  }
}
