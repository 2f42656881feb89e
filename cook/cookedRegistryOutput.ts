/**
 * `Saved/Cooked/AssetRegistry.bin`, written by a full cook from the one it replaces where that one
 * cannot differ: a one-file change re-encoded every entry of it (at 12k assets ~40 ms, at a million
 * seconds) to get, mostly, the same bytes.
 *
 * An asset's entry is a function of its GUID, name and package path (compared against the old
 * entry's bytes) and of its package's content (class, flags, dependencies). Which content each old
 * entry was made from is kept beside it, in `Intermediates/CookedRegistryHashes.bin`:
 *
 *   "LRGH" u32 version, u32 entries, u32 registry size, u64 registry xxh64   (little-endian)
 *   per asset entry of that registry, in its order: the package's xxh64, 8 bytes (its hex digits' bytes)
 *   u64 xxh64 of everything before it
 *
 * It names the registry it describes by size and hash, so one that belongs to another file (a
 * crash between the two writes, a registry written by an older cook) serves nothing; each of its
 * claims ("entry k was made from content h") stays true whatever happens later, so it needs no
 * fsync. The bytes are exactly `encodeCookedRegistry`'s either way.
 */
import fs from 'node:fs';
import path from 'node:path';
import { encodeCookedRegistry, encodeCookedRegistryReusing, type CookedRegistryText } from '../src/format/cookedRegistry.js';
import type { AssetRecord } from '../src/registry/types.js';
import { tempPathFor } from '../src/util/atomicWrite.js';
import { newCheckedFile, openCheckedFile, sealCheckedFile } from '../src/util/checkedFile.js';
import { xxh64 } from '../src/util/hash.js';
import { sortedByString } from '../src/util/stringOrder.js';
import { writeOutput } from './cookAsset.js';

export const REGISTRY_HASHES_FILE = 'CookedRegistryHashes.bin';
const MAGIC = 0x4847524c; // "LRGH"
const VERSION = 1;
const HEADER = 24;
const HASH_RE = /^[0-9a-f]{16}$/;

/**
 * Encode the registry of `records` (shipped, any order) and write it to `registryFile` when its
 * bytes changed; keep the content hashes of its entries for the next cook. Requires `initHash()`.
 * Throws IO_FAILED when the registry cannot be written (the sidecar is best effort).
 */
export function writeCookedRegistry(registryFile: string, intermediatesDir: string, records: readonly AssetRecord[]): Uint8Array {
  let packages: AssetRecord[] = [];
  const texts: CookedRegistryText[] = [];
  for (const r of records) {
    if (r.kind === 'package') packages.push(r);
    else texts.push({ guid: r.guid, path: r.virtualPath });
  }
  // The registry's asset order, which the sidecar follows.
  let sorted = true;
  for (let i = 1; i < packages.length && sorted; i++) sorted = packages[i - 1].guid <= packages[i].guid;
  if (!sorted) packages = sortedByString(packages, (p) => p.guid);

  let prev: Buffer | undefined;
  try {
    prev = fs.readFileSync(registryFile);
  } catch {
    // None yet.
  }
  const prevXxh64 = prev && xxh64(prev);
  const hashesFile = path.join(intermediatesDir, REGISTRY_HASHES_FILE);
  const known = prev && readHashes(hashesFile, prev.byteLength, prevXxh64!);
  const bytes = known
    ? encodeCookedRegistryReusing(packages, texts, prev!, (a, k) => hexAt(known.hashes, 8 * k, a.hash))
    : encodeCookedRegistry(packages, texts);
  const bytesXxh64 = xxh64(bytes);
  // Rewritten only when its bytes change, so its mtime means something.
  if (!(prev && prev.byteLength === bytes.byteLength && prevXxh64 === bytesXxh64)) writeOutput(registryFile, bytes);
  prev = undefined;

  const next = hashesBytes(packages, bytes.byteLength, bytesXxh64);
  try {
    if (!next) fs.rmSync(hashesFile, { force: true });
    else if (!known?.file.equals(next)) writeQuietly(hashesFile, next);
  } catch {
    // A cache: the next cook encodes every entry.
  }
  return bytes;
}

/** The sidecar's hashes when it describes the registry of this size and hash, else undefined. */
function readHashes(file: string, registrySize: number, registryXxh64: bigint): { file: Buffer; hashes: Uint8Array } | undefined {
  let b: Buffer;
  try {
    b = fs.readFileSync(file);
  } catch {
    return undefined;
  }
  if (b.byteLength >= HEADER && (b.readUInt32LE(12) !== registrySize || b.readBigUInt64LE(16) !== registryXxh64)) return undefined;
  const checked = openCheckedFile(b, MAGIC, VERSION, HEADER, (h) => HEADER + 8 * h.readUInt32LE(8) + 8);
  if (!checked) return undefined;
  return { file: checked, hashes: checked.subarray(HEADER, HEADER + 8 * checked.readUInt32LE(8)) };
}

/** The sidecar of a registry whose asset entries are `packages`, in order; undefined when a hash is not 16 hex digits. */
function hashesBytes(packages: readonly AssetRecord[], registrySize: number, registryXxh64: bigint): Buffer | undefined {
  const out = newCheckedFile(MAGIC, VERSION, HEADER + 8 * packages.length);
  out.writeUInt32LE(packages.length, 8);
  out.writeUInt32LE(registrySize, 12);
  out.writeBigUInt64LE(registryXxh64, 16);
  for (let i = 0; i < packages.length; i++) {
    const h = packages[i].hash;
    if (!HASH_RE.test(h)) return undefined;
    out.write(h, HEADER + 8 * i, 8, 'hex');
  }
  return sealCheckedFile(out);
}

/** Do the 8 bytes at `at` spell `hex` (16 hex digits)? */
function hexAt(bytes: Uint8Array, at: number, hex: string): boolean {
  if (hex.length !== 16 || at + 8 > bytes.byteLength) return false;
  for (let i = 0; i < 8; i++) {
    const hi = hex.charCodeAt(2 * i);
    const lo = hex.charCodeAt(2 * i + 1);
    const v = (nibble(hi) << 4) | nibble(lo);
    if (v < 0 || bytes[at + i] !== v) return false;
  }
  return true;
}

function nibble(c: number): number {
  return c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -256;
}

/** Temp file + rename, no fsync (see the module comment). */
function writeQuietly(file: string, data: Uint8Array): void {
  const tmp = tempPathFor(file);
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(tmp, data);
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
}
