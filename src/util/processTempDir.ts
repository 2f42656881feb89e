/**
 * Scratch folders owned by this process: `<root>/<prefix><pid>-XXXXXX`, removed at exit. A process
 * that never reaches 'exit' (kill -9, a test runner's forked worker torn down) leaves its folder
 * behind, so the first folder made under a root and prefix also removes the folders of pids that
 * are gone; a daemon or CI machine that cooks for weeks keeps its temp folder clean.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pidAlive } from './pidAlive.js';

const mine = new Set<string>();
const swept = new Set<string>();
let exitHooked = false;

/** A new folder for this process under `root`; removed on exit. */
export function makeProcessTempDir(root: string, prefix: string): string {
  const key = `${root}\0${prefix}`;
  if (!swept.has(key)) {
    swept.add(key);
    sweepDeadProcessDirs(root, prefix);
  }
  const dir = fs.mkdtempSync(path.join(root, `${prefix}${process.pid}-`));
  mine.add(dir);
  if (!exitHooked) {
    exitHooked = true;
    process.on('exit', () => {
      for (const d of mine) removeProcessTempDir(d);
    });
  }
  return dir;
}

/** Remove a folder made by makeProcessTempDir now (it is then not removed again at exit). */
export function removeProcessTempDir(dir: string): void {
  mine.delete(dir);
  try {
    fs.rmSync(dir, { recursive: true, force: true });
  } catch {
    // a folder that cannot be removed costs only space; the next sweep tries again
  }
}

/** Remove `<root>/<prefix><pid>-*` folders whose process is gone. */
export function sweepDeadProcessDirs(root: string, prefix: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(root);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && !pidAlive(pid)) {
      try {
        fs.rmSync(path.join(root, name), { recursive: true, force: true });
      } catch {
        // another process's sweep got there first, or no permission: leave it
      }
    }
  }
}
