/**
 * What changed between two pak sets, by resolved virtual path (priorities and tombstones applied
 * within each set) and content identity (rawSize, xxh64). No entry bytes are read.
 */
import { comparePathBytes } from './pakFormat.js';
import { MountedPaks } from './MountedPaks.js';

export interface PakDiff {
  /** Full virtual paths, each list sorted by bytes. */
  added: string[];
  changed: string[];
  removed: string[];
}

/** Diff the set `a` (before) against `b` (after). */
export async function diffPaks(a: readonly string[], b: readonly string[]): Promise<PakDiff> {
  const [ma, mb] = [await MountedPaks.mount(a), await MountedPaks.mount(b)];
  try {
    const before = ma.pakListing();
    const after = mb.pakListing();
    const added: string[] = [];
    const changed: string[] = [];
    const removed: string[] = [];
    for (const [p, hit] of after) {
      const was = before.get(p);
      if (was === undefined) added.push(p);
      else if (was.entry.rawSize !== hit.entry.rawSize || was.entry.xxh64 !== hit.entry.xxh64) changed.push(p);
    }
    for (const p of before.keys()) if (!after.has(p)) removed.push(p);
    return { added: added.sort(comparePathBytes), changed: changed.sort(comparePathBytes), removed: removed.sort(comparePathBytes) };
  } finally {
    await Promise.all([ma.close(), mb.close()]);
  }
}
