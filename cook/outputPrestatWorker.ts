/**
 * The thread of cook/outputPrestat.ts: lstat each record's output and set its bit when it is a
 * regular file of the recorded size and mtime, exactly what CookCache.probe compares.
 */
import { workerData } from 'node:worker_threads';
import { lstatInto, type LstatNumbers } from '../src/util/fastLstat.js';
import { recordOutput, type RecordOutput } from './cookCacheCodec.js';
import { PRESTAT_SHIFT, type PrestatJob } from './outputPrestat.js';

const { arena, offsets, cookedDir, bits } = workerData as PrestatJob;
const b = Buffer.from(arena.buffer, arena.byteOffset, arena.byteLength);
const flags = new Uint8Array(bits);
const out: RecordOutput = { nameAt: 0, nameLength: 0, size: 0, mtimeMs: 0 };
const st: LstatNumbers = { mtimeMs: 0, size: 0, isFile: false };
const prefix = cookedDir + '/';
for (let i = 0; i < offsets.length; i++) {
  const at = offsets[i];
  if (!recordOutput(b, at, out)) continue;
  // The path the pass stats (cookedPathFor of the record whose cooked file this is).
  const file = prefix + b.toString('utf8', out.nameAt, out.nameAt + out.nameLength);
  if (!lstatInto(file, st) || !st.isFile || st.size !== out.size || st.mtimeMs !== out.mtimeMs) continue;
  const k = at >>> PRESTAT_SHIFT;
  Atomics.or(flags, k >>> 3, 1 << (k & 7));
}
