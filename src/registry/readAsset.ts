/**
 * Turning one file into an AssetRecord: a package's asset from its tables, a text asset's identity
 * from its `.lmeta` sidecar.
 *
 * Hashing and parsing share one pass. The record carries the xxh64 of the whole file (the cook keys
 * on it, and "touched but unchanged" is decided by it), so every file whose stat changed is read
 * once, start to end, with positional reads into a pooled buffer. The tables sit at the start of the
 * file (FORMAT.md: header, imports, exports, object data), so they are parsed from that first
 * chunk with the same table-only parser `readPackageTables` uses; the object data is hashed, never
 * decoded. Only when the tables are larger than the first chunk does a second, table-only read
 * (`readPackageTables`) happen. A cold scan therefore costs one open + one read per small package.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { asLuminaError, errors, LuminaError } from '../errors.js';
import { findAssetExport, parsePackageTables, readPackageTables } from '../format/packageReader.js';
import { NULL_GUID, type PackageTables } from '../format/packageTypes.js';
import { writeFileAtomic } from '../util/atomicWrite.js';
import { createXxh64, hashHex, xxh64 } from '../util/hash.js';
import type { AssetDependency, AssetRecord } from './types.js';
import { dependencyList } from './dependencyList.js';
import { SIDECAR_EXT, statOrNull, type FileStat } from './walkMount.js';
import { readAt } from '../util/readAt.js';

const CHUNK = 256 * 1024;
const PACKAGE_EXT = '.lasset';
const PACKAGE_EXT_RE = /\.lasset$/i;
const pool: Buffer[] = [];

/**
 * The same number, as V8's small integer when it is one: the walk's sizes arrive as heap numbers
 * (read from a Float64Array), and a record and its entry each kept a 16-byte box for theirs.
 */
/** The imports as a record's dependency list (one array kind for every record: dependencyList.ts). */
function dependenciesOf(imports: ReadonlyArray<{ guid: string; type: AssetDependency['type'] }>): AssetDependency[] {
  const list = dependencyList(imports.length);
  for (let i = 0; i < imports.length; i++) list[i] = { guid: imports[i].guid, type: imports[i].type };
  return list;
}

function smallInt(n: number): number {
  return n >= 0 && n < 2 ** 31 ? n | 0 : n;
}

/** Borrow a read buffer; concurrent reads each get their own, and they are reused across files. */
function takeBuffer(): Buffer {
  return pool.pop() ?? Buffer.allocUnsafe(CHUNK);
}

function giveBuffer(b: Buffer): void {
  if (pool.length < 64) pool.push(b);
}

/** Where a read hands the whole bytes of a package it read in one piece (keptSources.ts, or a read worker's batch). */
export interface SourceSink {
  /** `whole` is a pooled buffer, reused once the call returns: copy what you keep. */
  offer(file: string, whole: Uint8Array): void;
}

export interface Located {
  file: string;
  virtualPath: string;
  mount: string;
}

/** xxh64 of a whole file plus its first bytes (up to CHUNK), read with positional reads. */
async function hashFile(file: string, size: number, withHead: (head: Buffer) => void): Promise<string> {
  const buf = takeBuffer();
  // Most packages fit one chunk. Read those synchronously: open/read/close through the promise
  // API cost ~60 µs of main-thread time a file against ~6 µs for the sync calls (20k-asset cold
  // scan: 1.6 s -> see npm run bench), and the main thread, not the disk, is the bottleneck.
  if (size <= CHUNK) {
    try {
      return hashSmallFile(file, size, buf, withHead);
    } catch (e) {
      throw asLuminaError(e, file, 'read');
    } finally {
      giveBuffer(buf);
    }
  }
  let fh: fsp.FileHandle | undefined;
  try {
    fh = await fsp.open(file, 'r');
    if (size === 0) {
      withHead(buf.subarray(0, 0));
      return hashHex(xxh64(buf.subarray(0, 0)));
    }
    let hasher: ReturnType<typeof createXxh64> | undefined;
    for (let pos = 0; pos < size; ) {
      const want = Math.min(CHUNK, size - pos);
      const got = await readAt(fh, buf.subarray(0, want), pos);
      // The file shrank after it was stat'ed: report it; the next scan sees the new size.
      if (got < want) throw errors.packageTruncated(file, 'file', pos + got, size - pos - got, pos + got);
      const chunk = buf.subarray(0, want);
      if (pos === 0) {
        withHead(chunk);
        if (want === size) return hashHex(xxh64(chunk));
        hasher = createXxh64();
      }
      hasher!.update(chunk);
      pos += want;
    }
    return hashHex(hasher!.digest());
  } catch (e) {
    throw asLuminaError(e, file, 'read');
  } finally {
    await fh?.close();
    giveBuffer(buf);
  }
}

function hashSmallFile(file: string, size: number, buf: Buffer, withHead: (head: Buffer) => void): string {
  const fd = fs.openSync(file, 'r');
  try {
    for (let got = 0; got < size; ) {
      const n = fs.readSync(fd, buf, got, size - got, got);
      if (n === 0) throw errors.packageTruncated(file, 'file', got, size - got, got);
      got += n;
    }
  } finally {
    fs.closeSync(fd);
  }
  const head = buf.subarray(0, size);
  withHead(head);
  return hashHex(xxh64(head));
}

/** Hash only: for a file whose stat changed, to tell a touch from an edit. */
export function hashWholeFile(file: string, size: number): Promise<string> {
  return hashFile(file, size, () => {});
}

/**
 * Read a package's asset record: hash the file and parse its tables. Throws LuminaError. `keep`
 * gets the file's bytes when this one read held all of them (the bytes the hash is of).
 */
export async function readPackageRecord(at: Located, stat: FileStat, keep?: SourceSink): Promise<AssetRecord> {
  let tables: PackageTables | undefined;
  let headError: unknown;
  const hash = await hashFile(at.file, stat.size, (head) => {
    // Now: the head is a pooled buffer, reused by the next read once this call returns.
    if (keep && head.byteLength === stat.size) keep.offer(at.file, head);
    try {
      tables = parsePackageTables(head, at.file, stat.size);
    } catch (e) {
      headError = e;
    }
  });
  if (!tables) {
    // Tables longer than the first chunk: read them alone. Any other failure is the real error.
    const truncatedHead = headError instanceof LuminaError && headError.code === 'PACKAGE_TRUNCATED' && headError.field === 'tables';
    if (!truncatedHead) throw headError;
    tables = await readPackageTables(at.file, stat.size);
  }
  const i = findAssetExport(tables);
  const stem = path.basename(at.file).replace(/\.lasset$/i, '');
  if (i < 0) throw errors.assetMissing(at.file, stem);
  const exp = tables.exports[i];
  if (exp.objectGuid === NULL_GUID) throw errors.packageInvalid(at.file, `export[${i}].objectGuid`, tables.header.exportTableOffset, 'the asset export has a null GUID');
  // name and packagePath as slices of virtualPath, as thawRecord makes them (V8 keeps a slice as a
  // pointer into its parent): one path string per record, not three. Same values: the virtual
  // path's last part is the file's name.
  const vp = at.virtualPath;
  const end = vp.length - PACKAGE_EXT.length;
  const name = PACKAGE_EXT_RE.test(vp) ? vp.slice(vp.lastIndexOf('/') + 1, end) : undefined;
  const sliced = name === stem;
  return {
    guid: exp.objectGuid,
    name: sliced ? name : stem,
    className: exp.className ?? '',
    packagePath: sliced ? vp.slice(0, end) : vp.replace(PACKAGE_EXT_RE, ''),
    virtualPath: at.virtualPath,
    file: at.file,
    mount: at.mount,
    kind: 'package',
    flags: exp.assetFlags,
    dependencies: dependenciesOf(tables.imports),
    mtimeMs: stat.mtimeMs,
    size: smallInt(stat.size),
    hash,
  };
}

/** Parse a `.lmeta` sidecar's text: `{"guid": "<32 hex>"}`. Throws LMETA_INVALID naming the key. */
export function parseSidecar(text: string, sidecarFile: string): string {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw errors.lmetaInvalid(sidecarFile, `not valid JSON: ${(e as Error).message}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw errors.lmetaInvalid(sidecarFile, 'must be a JSON object');
  const guid = (raw as Record<string, unknown>).guid;
  if (guid === undefined) throw errors.lmetaInvalid(sidecarFile, '"guid" is required', 'guid');
  if (typeof guid !== 'string' || !/^[0-9a-fA-F]{32}$/.test(guid)) throw errors.lmetaInvalid(sidecarFile, '"guid" must be 32 hex digits', 'guid');
  if (guid === NULL_GUID) throw errors.lmetaInvalid(sidecarFile, '"guid" may not be all zero', 'guid');
  return guid.toLowerCase();
}

export interface TextRead {
  record: AssetRecord;
  /** The sidecar's stat after reading (or minting) it. */
  sidecar: FileStat;
  minted: boolean;
}

/**
 * Read a text asset: hash the text, take the GUID from `<file>.lmeta`. A missing sidecar is minted
 * (random GUID, atomic write) when `mint` is set, else LMETA_MISSING: under `--ci` nothing is ever
 * written into the source tree.
 */
export async function readTextRecord(at: Located, stat: FileStat, mint: boolean): Promise<TextRead> {
  const sidecarFile = at.file + SIDECAR_EXT;
  const hash = await hashWholeFile(at.file, stat.size);
  let text: string | null;
  try {
    text = await fsp.readFile(sidecarFile, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw asLuminaError(e, sidecarFile, 'read');
    text = null;
  }
  let guid: string;
  let minted = false;
  if (text === null) {
    if (!mint) throw errors.lmetaMissing(at.file);
    guid = crypto.randomBytes(16).toString('hex');
    await writeFileAtomic(sidecarFile, Buffer.from(`${JSON.stringify({ guid }, null, 2)}\n`, 'utf8'));
    minted = true;
  } else {
    guid = parseSidecar(text, sidecarFile);
  }
  const sidecar = statOrNull(sidecarFile);
  if (!sidecar) throw errors.lmetaMissing(at.file);
  const name = path.basename(at.file);
  return {
    record: {
      guid,
      name,
      className: `Text${path.extname(name).toLowerCase()}`,
      packagePath: at.virtualPath,
      virtualPath: at.virtualPath,
      file: at.file,
      mount: at.mount,
      kind: 'text',
      flags: 0,
      dependencies: dependencyList(0),
      mtimeMs: stat.mtimeMs,
      size: smallInt(stat.size),
      hash,
    },
    sidecar,
    minted,
  };
}
