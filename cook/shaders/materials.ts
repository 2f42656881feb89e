/**
 * Which shader permutations the shipped packages ask for: every export of class
 * `/Script/Engine.CMaterial` names its shader in `ShaderSource` (StrProperty, a virtual path) and
 * its defines in `ShaderDefines` (ArrayProperty of StrProperty).
 *
 * A package is read only when its content hash is not in `Intermediates/ShaderMaterials.json`
 * (the tables first; the whole file only when an export is a material), so a warm cook reads
 * nothing here, nor when a cook worker just parsed it (it returns the package's materials with
 * its outcome: `known`), so a cold cook reads only what it did not cook. A package that cannot be parsed has no materials as far as this goes: the package
 * cook reports it, once. A material whose properties have the wrong types is an error naming the
 * package and the property.
 */
import fs from 'node:fs';
import path from 'node:path';
import { errors, isLuminaError, type LuminaError } from '../../src/errors.js';
import { decodeExport, parsePackage, parsePackageTables, readPackageFile, readPackageTables } from '../../src/format/packageReader.js';
import type { LoadedPackage, Property } from '../../src/format/packageTypes.js';
import type { AssetRecord } from '../../src/registry/types.js';
import { writeFileAtomicSync } from '../../src/util/atomicWrite.js';

export const MATERIAL_CLASS = '/Script/Engine.CMaterial';
export const MATERIALS_CACHE_FILE = 'ShaderMaterials.json';
/** 2: a package without materials is just its hash (most are: a third of the file's parse at 1). Version 1 is still read. */
const CACHE_VERSION = 2;

export interface MaterialShader {
  /** `/Game/Materials/Rock.Rock` (or `/Game/Materials/Rock.SubMaterial`). */
  objectPath: string;
  /** `ShaderSource`, a virtual path. */
  source: string;
  /** `ShaderDefines` as written (checked later, where the error can name the define). */
  defines: string[];
}

/** One package's materials as the scan (and its cache) keeps them. */
export interface PackageMaterials {
  /** xxh64 (hex) of the package bytes they were read from. */
  hash: string;
  materials: MaterialShader[];
  /** A material property of the wrong type: reported each cook until the package is fixed. */
  error?: { message: string; field: string };
}

export interface MaterialScan {
  /** By package GUID: the packages that have materials or a material error (others have none). */
  byPackage: Map<string, { materials: MaterialShader[]; error?: LuminaError }>;
  /** Packages read (not found in the cache). */
  read: number;
}

/**
 * Materials known from a cook's own parse, by package GUID: a package with none (most) is just the
 * hash of its bytes, which keeps a million-asset cook's map small.
 */
export type KnownMaterials = ReadonlyMap<string, PackageMaterials | string>;

/** How a cook records a package's materials in a {@link KnownMaterials} map. */
export function knownEntry(m: PackageMaterials): PackageMaterials | string {
  return m.materials.length === 0 && !m.error ? m.hash : m;
}

export interface ScanMaterialsOptions {
  /**
   * Materials already known from the bytes a cook just parsed (by package GUID; a cook worker
   * returns them with its outcome), taken when their hash is the record's: such a package is not
   * read again here.
   */
  known?: KnownMaterials;
  /**
   * Read only packages whose primary class is a material (the cook's early scan, beside the
   * cook: the rest come from the workers); packages neither cached nor known are left out.
   */
  materialClassOnly?: boolean;
  /** The cache file as this cook's last scan left it (see MaterialsMemo). */
  memo?: MaterialsMemo;
}

/**
 * The cache a scan loaded or wrote, with the file's identity then: a full cook scans twice (the
 * early shader compiles, then what ships) and its second scan parses nothing while the file is as
 * the first left it (5-6 MB of JSON at 100k assets). Held by the caller for one cook only.
 */
export interface MaterialsMemo {
  last?: { file: string; stamp: string; cache: ReadonlyMap<string, PackageMaterials> };
}

/** The materials of `packages`, reading only what the cache (or `known`) does not know. */
export async function scanMaterials(packages: readonly AssetRecord[], intermediatesDir: string, opts: ScanMaterialsOptions = {}): Promise<MaterialScan> {
  const file = path.join(intermediatesDir, MATERIALS_CACHE_FILE);
  const cache = loadCache(file, opts.memo);
  const next: Array<[string, PackageMaterials]> = [];
  const byPackage = new Map<string, { materials: MaterialShader[]; error?: LuminaError }>();
  const none: MaterialShader[] = [];
  let read = 0;
  let dirty = false;
  for (const r of packages) {
    if (r.kind !== 'package') continue;
    let entry = cache.get(r.guid);
    if (!entry || entry.hash !== r.hash) {
      const known = opts.known?.get(r.guid);
      if (known === r.hash) {
        dirty = true;
        entry = { hash: known, materials: [] };
      } else if (typeof known === 'object' && known.hash === r.hash) {
        dirty = true;
        entry = known;
      }
    }
    if (!entry || entry.hash !== r.hash) {
      if (opts.materialClassOnly && r.className !== MATERIAL_CLASS) continue;
      read++;
      dirty = true;
      entry = await readMaterials(r);
      if (read % YIELD_EVERY === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    next.push([r.guid, entry]);
    // Most packages hold no material: they are left out (what the cook asks of them is nothing).
    if (!entry.error && entry.materials.length === 0) continue;
    byPackage.set(r.guid, {
      materials: entry.materials.length ? entry.materials : none,
      error: entry.error && errors.cookFailed(r.file, `${entry.error.field}: ${entry.error.message}`),
    });
  }
  // Unchanged when nothing was read and every cached package is still asked for: each was found
  // in the cache, so the same count (GUIDs are unique) is the same set.
  if (dirty || cache.size !== next.length) {
    try {
      fs.mkdirSync(intermediatesDir, { recursive: true });
      const packages: Record<string, PackageMaterials | string> = {};
      for (const [guid, e] of next) packages[guid] = knownEntry(e);
      writeFileAtomicSync(file, JSON.stringify({ version: CACHE_VERSION, packages }));
      remember(opts.memo, file, new Map(next));
    } catch {
      // A cache never fails a cook; the next one reads again.
    }
  }
  return { byPackage, read };
}

function stampOf(file: string): string | undefined {
  const st = fs.statSync(file, { throwIfNoEntry: false });
  return st && `${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}`;
}

function remember(memo: MaterialsMemo | undefined, file: string, cache: ReadonlyMap<string, PackageMaterials>): void {
  if (!memo) return;
  const stamp = stampOf(file);
  memo.last = stamp === undefined ? undefined : { file, stamp, cache };
}

function loadCache(file: string, memo?: MaterialsMemo): ReadonlyMap<string, PackageMaterials> {
  try {
    const last = memo?.last;
    if (last && last.file === file && last.stamp === stampOf(file)) return last.cache;
    const stamp = stampOf(file);
    const c = JSON.parse(fs.readFileSync(file, 'utf8')) as { version?: number; packages?: Record<string, PackageMaterials | string> };
    if ((c?.version !== CACHE_VERSION && c?.version !== 1) || !c.packages || typeof c.packages !== 'object') return new Map();
    const m = new Map<string, PackageMaterials>();
    const none: MaterialShader[] = [];
    for (const [guid, e] of Object.entries(c.packages)) {
      if (typeof e === 'string') m.set(guid, { hash: e, materials: none });
      else if (e && typeof e.hash === 'string' && Array.isArray(e.materials)) m.set(guid, e);
    }
    if (memo) memo.last = stamp === undefined ? undefined : { file, stamp, cache: m };
    return m;
  } catch {
    return new Map();
  }
}

/**
 * Packages up to this size are read whole, synchronously, in one read: their tables and (for a
 * material) their exports come from the same bytes. A cold cook scans every shipped package
 * here, most of a few KiB, and the promise API's open/read/read/close round trips per file cost
 * the main thread several times a sync read (measured at 20k assets: ~0.7 s of main-thread time,
 * materials opened twice). Larger ones (textures) read only their tables first.
 */
const WHOLE_READ_MAX = 256 << 10;
/** Packages scanned between yields to the event loop, so the cook's worker messages keep flowing while a cold scan runs beside it. */
const YIELD_EVERY = 64;

async function readMaterials(r: AssetRecord): Promise<PackageMaterials> {
  const out: PackageMaterials = { hash: r.hash, materials: [] };
  try {
    let pkg: LoadedPackage;
    if (r.size <= WHOLE_READ_MAX) {
      let bytes: Buffer;
      try {
        bytes = fs.readFileSync(r.file);
      } catch {
        return out; // unreadable: its own cook reports it
      }
      if (!parsePackageTables(bytes, r.file).exports.some((e) => e.className === MATERIAL_CLASS)) return out;
      pkg = parsePackage(bytes, r.file);
    } else {
      const tables = await readPackageTables(r.file, r.size);
      if (!tables.exports.some((e) => e.className === MATERIAL_CLASS)) return out;
      pkg = await readPackageFile(r.file);
    }
    return materialsOfPackage(pkg, r.packagePath, r.hash);
  } catch (e) {
    if (!isLuminaError(e)) throw e;
    // Unreadable package: its own cook reports it.
  }
  return out;
}

/**
 * The materials of a parsed package (`hash`: of the bytes it was parsed from), exactly as the scan
 * would read them: a cook worker calls this on the package it cooks, so the scan does not read
 * the file again. A package that cannot be decoded has none (its own cook reports it).
 */
export function materialsOfPackage(pkg: LoadedPackage, packagePath: string, hash: string): PackageMaterials {
  const out: PackageMaterials = { hash, materials: [] };
  try {
    pkg.exports.forEach((e, i) => {
      if (e.className !== MATERIAL_CLASS || out.error) return;
      const m = materialOf(decodeExport(pkg, i), `${packagePath}.${e.objectName}`);
      if ('message' in m) out.error = m;
      else if (m.source !== undefined) out.materials.push({ objectPath: `${packagePath}.${e.objectName}`, source: m.source, defines: m.defines });
    });
  } catch (e) {
    if (!isLuminaError(e)) throw e;
    // Unreadable package: its own cook reports it.
  }
  out.materials.sort((a, b) => (a.objectPath < b.objectPath ? -1 : a.objectPath > b.objectPath ? 1 : 0));
  return out;
}

function materialOf(props: Property[], objectPath: string): { source?: string; defines: string[] } | { message: string; field: string } {
  let source: string | undefined;
  const defines: string[] = [];
  for (const p of props) {
    if (p.name === 'ShaderSource') {
      if (p.type !== 'StrProperty') return { field: 'ShaderSource', message: `material ${objectPath} has ShaderSource of type ${p.type}, not StrProperty` };
      source = p.value;
    } else if (p.name === 'ShaderDefines') {
      if (p.type !== 'ArrayProperty' || p.innerType !== 'StrProperty') {
        return { field: 'ShaderDefines', message: `material ${objectPath} has ShaderDefines that is not an ArrayProperty of StrProperty` };
      }
      defines.push(...(p.value as string[]));
    }
  }
  if (source === undefined && defines.length) return { field: 'ShaderDefines', message: `material ${objectPath} has ShaderDefines but no ShaderSource` };
  return { source, defines };
}
