/**
 * Housekeeping of `Saved/Cooked`: small outputs rewritten only when their bytes change, and the
 * sweep of files no cook produced any more (and of temp files whose writer is gone).
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../src/log/logger.js';
import { TEMP_MARKER, tempOwnerPid } from '../src/util/atomicWrite.js';
import { xxh64 } from '../src/util/hash.js';
import { pidAlive } from '../src/util/pidAlive.js';
import { writeOutput } from './cookAsset.js';

/** Rewrite a small output only when its bytes change, so its mtime means something. */
export async function writeIfChanged(file: string, bytes: Uint8Array): Promise<void> {
  try {
    const old = await fsp.readFile(file);
    if (old.byteLength === bytes.byteLength && xxh64(old) === xxh64(bytes)) return;
  } catch {
    // Not there yet.
  }
  writeOutput(file, bytes);
}

/** A temp file whose writer is still running (this cook's own, or a daemon's). */
function liveTemp(name: string): boolean {
  const pid = tempOwnerPid(name);
  return pid !== undefined && pidAlive(pid);
}

/** Delete files under the cooked folder that this cook did not produce (and temp files of killed runs). */
export async function removeStale(dir: string, keep: ReadonlySet<string>, log: Logger): Promise<number> {
  let removed = 0;
  const walk = async (d: string): Promise<boolean> => {
    let ents;
    try {
      ents = await fsp.readdir(d, { withFileTypes: true });
    } catch {
      return false;
    }
    let left = ents.length;
    await Promise.all(
      ents.map(async (e) => {
        const p = path.join(d, e.name);
        if (e.isDirectory()) {
          if (await walk(p)) left--;
        } else if (e.name.includes(TEMP_MARKER) ? !liveTemp(e.name) : !keep.has(p)) {
          await fsp.rm(p, { force: true });
          removed++;
          left--;
        }
      }),
    );
    if (left === 0 && d !== dir) {
      await fsp.rmdir(d).catch(() => {});
      return true;
    }
    return false;
  };
  await walk(dir);
  if (removed) log.info({ removed, dir }, 'removed stale cooked files');
  return removed;
}
