/**
 * Housekeeping of `Saved/Cooked`: small outputs rewritten only when their bytes change, and the
 * sweep of files no cook produced any more (and of temp files whose writer is gone).
 *
 * The sweep walks the whole folder (60k files at 100k assets), so a cook skips it when it cannot
 * find anything: `Intermediates/CookedOutputs.json` (the "swept" marker) records the set of
 * outputs the last sweep left, and every write into the folder removes the marker first
 * (cookAsset.ts, trackSweptMarker), so a run killed mid-write, a daemon batch or any other writer
 * makes the next full cook walk again. A full cook that found the marker before it wrote
 * anything, and ships the same set of outputs, knows its own writes all completed (in place, or
 * temp files it removed), so the folder still holds exactly that set. The marker also records the
 * AssetRegistry.bin those outputs gave, so an unchanged registry is read back, not re-encoded.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../src/log/logger.js';
import { TEMP_MARKER, tempOwnerPid, writeFileAtomic } from '../src/util/atomicWrite.js';
import { createTextHasher, hashHex, xxh64, xxh64Text } from '../src/util/hash.js';
import { pidAlive } from '../src/util/pidAlive.js';
import type { AssetRecord } from '../src/registry/types.js';
import { REGISTRY_VERSION } from '../src/format/cookedRegistry.js';
import { trackSweptMarker, writeOutput } from './cookAsset.js';

export const SWEPT_MARKER_FILE = 'CookedOutputs.json';
const SWEPT_VERSION = 1;

/** What the marker holds. */
export interface SweptMarker {
  v: number;
  /** Hash of the shipped outputs' paths (and GUIDs): the set of files the sweep left. */
  outputs: string;
  /** Hash of what AssetRegistry.bin is made of (each shipped record's GUID, content hash and path). */
  registryInputs: string;
  /** xxh64 (hex) and size of the AssetRegistry.bin written for those inputs. */
  registryXxh64: string;
  registrySize: number;
}

/**
 * Read the marker of `cookedDir` and start watching it (the next write into the folder removes
 * it). Call before the cook writes anything; undefined when there is none (or it is unreadable).
 */
export function readSweptMarker(cookedDir: string, intermediatesDir: string): SweptMarker | undefined {
  const file = path.join(intermediatesDir, SWEPT_MARKER_FILE);
  trackSweptMarker(cookedDir, file);
  try {
    const m = JSON.parse(fs.readFileSync(file, 'utf8')) as SweptMarker;
    if (m?.v !== SWEPT_VERSION || typeof m.outputs !== 'string' || typeof m.registryInputs !== 'string' || typeof m.registryXxh64 !== 'string' || typeof m.registrySize !== 'number') return undefined;
    return m;
  } catch {
    return undefined;
  }
}

/** Write the marker after a sweep (or a cook that proved one unnecessary); the next write into the folder removes it again. */
export async function writeSweptMarker(cookedDir: string, intermediatesDir: string, m: Omit<SweptMarker, 'v'>): Promise<void> {
  const file = path.join(intermediatesDir, SWEPT_MARKER_FILE);
  await writeFileAtomic(file, Buffer.from(JSON.stringify({ v: SWEPT_VERSION, ...m }), 'utf8'));
  trackSweptMarker(cookedDir, file);
}

/**
 * The two fingerprints of a set of shipped records: `outputs` (which files the cook keeps under
 * Saved/Cooked: GUID and path) and `registryInputs` (what AssetRegistry.bin is a function of: a
 * record's name, class, flags and dependencies come from its content, its package path from its
 * place, so GUID, content hash and path). Hashing ~60 bytes per asset costs a few ms at 60k.
 */
export function shippedFingerprints(records: readonly AssetRecord[]): { outputs: string; registryInputs: string } {
  const outputs = createTextHasher();
  for (const rec of records) outputs.update(`${rec.guid}\t${rec.virtualPath}\n`);
  return { outputs: outputs.digestHex(), registryInputs: registryInputsFingerprint(records) };
}

/**
 * shippedFingerprints' `registryInputs` alone: `r<registry version>.<records>.<sum>`, the sum (mod
 * 2^64, hex) of each record's term (the xxh64 of its GUID, kind, content hash and path). A sum, so
 * a plan carried over an edit (the same GUIDs at the same paths, a few content hashes changed)
 * gets its value from the changed records alone (carriedRegistryInputs), not from every record
 * again (~5-15 ms at 20k assets).
 */
export function registryInputsFingerprint(records: readonly AssetRecord[]): string {
  let sum = 0n;
  for (const rec of records) sum += registryInputsTerm(rec);
  return `r${REGISTRY_VERSION}.${records.length}.${hashHex(BigInt.asUintN(64, sum))}`;
}

function registryInputsTerm(rec: AssetRecord): bigint {
  return xxh64Text(`${rec.guid}\t${rec.kind}\t${rec.hash}\t${rec.virtualPath}\n`);
}

/**
 * The registryInputs of a shipped set after some of its records changed (`before` -> `after`, each
 * pair one record of the set, same GUID and path), from the set's registryInputs before: what
 * registryInputsFingerprint of the set after gives. Undefined when `before` is not of that form
 * (an older cook's fingerprint): the caller hashes every record.
 */
export function carriedRegistryInputs(before: string, changed: ReadonlyArray<{ before: AssetRecord; after: AssetRecord }>): string | undefined {
  const m = /^r(\d+)\.(\d+)\.([0-9a-f]{16})$/.exec(before);
  if (!m || Number(m[1]) !== REGISTRY_VERSION) return undefined;
  let sum = BigInt(`0x${m[3]}`);
  for (const c of changed) sum += registryInputsTerm(c.after) - registryInputsTerm(c.before);
  return `r${REGISTRY_VERSION}.${m[2]}.${hashHex(BigInt.asUintN(64, sum))}`;
}

/** The AssetRegistry.bin on disk when it is exactly the one the marker recorded; else undefined. */
export function registryFromMarker(file: string, m: SweptMarker | undefined, registryInputs: string): Uint8Array | undefined {
  if (!m || m.registryInputs !== registryInputs) return undefined;
  try {
    const bytes = fs.readFileSync(file);
    return bytes.byteLength === m.registrySize && hashHex(xxh64(bytes)) === m.registryXxh64 ? bytes : undefined;
  } catch {
    return undefined;
  }
}

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
