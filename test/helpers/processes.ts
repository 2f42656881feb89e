/** Watching real processes from tests: has a pid gone, wait for a file a child writes. */
import fs from 'node:fs';

/** The process is gone: no such pid, or a zombie nobody has reaped yet (it runs no more code). */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/**
 * Poll until `check()` is true. Not a timing assertion: the cap only stops a broken test from
 * hanging the suite, and is far above anything a loaded machine needs.
 */
export async function waitFor(check: () => boolean, what: string, capMs = 30_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > capMs) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The pids listed one per line in `file` (missing file: none). */
export function readPids(file: string): number[] {
  try {
    return fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((n) => Number.isInteger(n) && n > 0);
  } catch {
    return [];
  }
}
