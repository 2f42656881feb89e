/**
 * Which shader permutations the shipped packages ask for: every export of class
 * `/Script/Engine.CMaterial` names its shader in `ShaderSource` (StrProperty, a virtual path) and
 * its defines in `ShaderDefines` (ArrayProperty of StrProperty).
 *
 * A package is read only when its content hash is not in `Intermediates/ShaderMaterials.json`
 * (the tables first; the whole file only when an export is a material), so a warm cook reads
 * nothing here. A package that cannot be parsed has no materials as far as this goes: the package
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
const CACHE_VERSION = 1;

export interface MaterialShader {
  /** `/Game/Materials/Rock.Rock` (or `/Game/Materials/Rock.SubMaterial`). */
  objectPath: string;
  /** `ShaderSource`, a virtual path. */
  source: string;
  /** `ShaderDefines` as written (checked later, where the error can name the define). */
  defines: string[];
}

interface PackageMaterials {
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

/** The materials of `packages`, reading only what the cache does not know. */
export async function scanMaterials(packages: readonly AssetRecord[], intermediatesDir: string): Promise<MaterialScan> {
  const file = path.join(intermediatesDir, MATERIALS_CACHE_FILE);
  const cache = loadCache(file);
  const next: Array<[string, PackageMaterials]> = [];
  const byPackage = new Map<string, { materials: MaterialShader[]; error?: LuminaError }>();
  const none: MaterialShader[] = [];
  let read = 0;
  let dirty = false;
  for (const r of packages) {
    if (r.kind !== 'package') continue;
    let entry = cache.get(r.guid);
    if (!entry || entry.hash !== r.hash) {
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
  // Unchanged when nothing was read and every cached package is still asked for (same count).
  if (dirty || cache.size !== new Set(next.map(([g]) => g)).size) {
    try {
      fs.mkdirSync(intermediatesDir, { recursive: true });
      writeFileAtomicSync(file, JSON.stringify({ version: CACHE_VERSION, packages: Object.fromEntries(next) }));
    } catch {
      // A cache never fails a cook; the next one reads again.
    }
  }
  return { byPackage, read };
}

function loadCache(file: string): Map<string, PackageMaterials> {
  try {
    const c = JSON.parse(fs.readFileSync(file, 'utf8')) as { version?: number; packages?: Record<string, PackageMaterials> };
    if (c?.version !== CACHE_VERSION || !c.packages || typeof c.packages !== 'object') return new Map();
    const m = new Map<string, PackageMaterials>();
    for (const [guid, e] of Object.entries(c.packages)) if (e && typeof e.hash === 'string' && Array.isArray(e.materials)) m.set(guid, e);
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
    pkg.exports.forEach((e, i) => {
      if (e.className !== MATERIAL_CLASS || out.error) return;
      const m = materialOf(decodeExport(pkg, i), `${r.packagePath}.${e.objectName}`);
      if ('message' in m) out.error = m;
      else if (m.source !== undefined) out.materials.push({ objectPath: `${r.packagePath}.${e.objectName}`, source: m.source, defines: m.defines });
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
