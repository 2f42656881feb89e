import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../config/loadConfig.js';
import type { Property } from '../../src/format/packageTypes.js';

export async function tempDir(prefix: string): Promise<string> {
  return fsp.mkdtemp(path.join(os.tmpdir(), `lc-samples-${prefix}-`));
}

export async function removeDir(dir: string | undefined): Promise<void> {
  if (dir) await fsp.rm(dir, { recursive: true, force: true });
}

/** Every file under `root`, as sorted forward-slash relative paths. */
export function listFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else out.push(path.relative(root, full).split(path.sep).join('/'));
    }
  };
  walk(root);
  return out.sort();
}

/**
 * The project's own files: everything under `root` except the folders a cook writes (its config's
 * `savedDir` and `intermediatesDir`), so a check of the committed sample does not depend on
 * whether `npm run cook:sample` ran first. The generator's listing compares against this.
 */
export function listProjectFiles(root: string): string[] {
  const { config } = loadConfig(root);
  const outputs = [config.savedDir, config.intermediatesDir].map((d) => path.relative(root, d).split(path.sep).join('/') + '/');
  return listFiles(root).filter((f) => !outputs.some((o) => f.startsWith(o)));
}

/** sha256 over every relative path and its bytes, in sorted order. */
export function hashTree(root: string): string {
  const h = createHash('sha256');
  for (const rel of listFiles(root)) {
    h.update(rel).update('\0');
    const bytes = fs.readFileSync(path.join(root, rel));
    h.update(String(bytes.byteLength)).update('\0').update(bytes);
  }
  return h.digest('hex');
}

/** Every property in a stream, nested struct fields and struct array elements included. */
export function* walkProperties(props: readonly Property[]): Generator<Property> {
  for (const p of props) {
    yield p;
    if (p.type === 'StructProperty' && Array.isArray(p.value) && p.value.length && typeof p.value[0] === 'object') {
      yield* walkProperties(p.value as Property[]);
    }
    if (p.type === 'ArrayProperty' && p.innerType === 'StructProperty') {
      for (const el of p.value as unknown[]) if (Array.isArray(el) && el.length && typeof el[0] === 'object') yield* walkProperties(el as Property[]);
    }
  }
}

/** GUIDs a stream soft-references (SoftObjectProperty values and arrays of them), nulls excluded. */
export function softGuids(props: readonly Property[]): string[] {
  const out: string[] = [];
  for (const p of walkProperties(props)) {
    if (p.type === 'SoftObjectProperty') out.push(p.value);
    if (p.type === 'ArrayProperty' && p.innerType === 'SoftObjectProperty') out.push(...(p.value as string[]));
  }
  return out.filter((g) => g !== '00000000000000000000000000000000');
}

/** PackageIndex values in a stream (ObjectProperty and arrays of them). */
export function objectRefs(props: readonly Property[]): number[] {
  const out: number[] = [];
  for (const p of walkProperties(props)) {
    if (p.type === 'ObjectProperty') out.push(p.value);
    if (p.type === 'ArrayProperty' && p.innerType === 'ObjectProperty') out.push(...(p.value as number[]));
  }
  return out;
}

/** PNG signature and IHDR (with its CRC checked by the caller's decoder); throws if absent. */
export function pngHeader(bytes: Uint8Array): { width: number; height: number; bitDepth: number; colorType: number } {
  const sig = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (!sig.every((b, i) => bytes[i] === b)) throw new Error('no PNG signature');
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.readUInt32BE(8) !== 13 || b.toString('latin1', 12, 16) !== 'IHDR') throw new Error('first chunk is not IHDR');
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20), bitDepth: b[24], colorType: b[25] };
}
