/**
 * The last full cook's shader result, kept in `Intermediates/ShaderCook.memo`, so a cook whose
 * shader inputs are all what that result was made from takes it instead of scanning the shipped
 * packages' materials again (at 100k assets: ~56k table lookups, a sort of ~11.5k material
 * packages and ~11.5k asks, 0.25-0.45 s of every no-op) and reading each permutation's code.
 *
 * The key names everything the shader cook's output is a function of:
 * - the shipped packages, their records (content hashes, paths, files) and chunks, in order: the
 *   caller's `packagesIdentity` (the full cook gives its plan's key when everything planned
 *   ships: that key names the registry's content, the config and the planning code);
 * - the chunks, the config's `shaders` settings and config file;
 * - every tracked shader file's content (virtual path, file, hash, includes, sidecar entries and
 *   problems) and the include folders;
 * - the compiler and the validator (names, versions, executables);
 * - the materials table file's identity (size, mtime, ctime, inode): the scan that made the
 *   result left it so, and a table written since (by another cook, a daemon) is a miss;
 * - the shader cook's own code (this module's and its neighbours' bytes): a new version of the
 *   tool never takes an older one's result.
 * Only a result without problems is kept (nothing reported, nothing left uncached), and it is
 * taken only while the shader cache still holds every entry it used (one readdir), so the cook's
 * counts (`cached`) stay true and the prune still runs.
 *
 * Layout (a checked side file, src/util/checkedFile.ts): u32 magic "LSCM", u32 version, u32 file
 * length, u32 JSON length, the JSON (key, compiler id, permutation count, store keys, chunk names
 * and sizes), each chunk's ShaderCache.bin, the whole ShaderCache.bin, xxh64. A file that does
 * not check out is none.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ShaderRegistry } from '../../src/registry/ShaderRegistry.js';
import { writeFileAtomicSync } from '../../src/util/atomicWrite.js';
import { newCheckedFile, openCheckedFile, sealCheckedFile } from '../../src/util/checkedFile.js';
import { codeIdentity } from '../../src/util/codeIdentity.js';
import { hashString } from '../../src/util/hash.js';
import { canonicalJson } from '../cookCache.js';
import type { ShaderCompiler } from './compiler.js';

export const SHADER_COOK_MEMO_FILE = 'ShaderCook.memo';
const MAGIC = 0x4d43534c; // "LSCM"
const VERSION = 1;
const HEADER = 16;

/** The shader cook's modules, beside this one (the same extension: .ts under tsx, .js when built). */
const CODE = ['./shaderCookMemo', './cookShaders', './materials', './compiler', './ShaderStore', '../../src/format/shaderCache', '../../src/registry/ShaderRegistry', '../../src/registry/shaderSources'];

/** A hash of the shader cook's code, once per process; null when a module cannot be read (then nothing is kept or taken). */
const shaderCode = (): string | null => codeIdentity(import.meta.url, CODE);

function stampOf(file: string): string | undefined {
  const st = fs.statSync(file, { throwIfNoEntry: false });
  return st && `${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}`;
}

export interface ShaderCookMemoInputs {
  packagesIdentity: string;
  chunks: readonly string[];
  config: { configFile: string; shaders: unknown };
  shaders: ShaderRegistry;
  /** What detectCompiler found (or the compiler given): the compiler, or why there is none. */
  compiler: ShaderCompiler | string;
}

/**
 * Everything but the materials table's identity, hashed (see the module comment); undefined when
 * the code cannot be named.
 */
export function shaderCookInputs(i: ShaderCookMemoInputs): string | undefined {
  const code = shaderCode();
  if (code === null) return undefined;
  const c = i.compiler;
  const compiler = typeof c === 'string' ? { none: c } : { kind: c.kind, exe: c.exe, id: c.id, validatorId: c.validatorId, validatorExe: c.validatorExe, languages: [...c.languages].sort() };
  // Content, not stat times: a touched file that reads the same keeps the result.
  const sources = i.shaders.all().map((r) => [r.virtualPath, r.file, r.mount, r.kind, r.language, r.hash, r.includes, r.entries ?? null, r.sidecarError ?? null, r.sidecar?.hash ?? null]);
  return hashString(canonicalJson({ v: VERSION, code, packages: i.packagesIdentity, chunks: i.chunks, configFile: i.config.configFile, settings: i.config.shaders, includeDirs: i.shaders.includeDirs, sources, compiler }));
}

/** The key of `inputs` with the materials table as it is on disk now; undefined without a table. */
export function shaderCookMemoKey(inputs: string, tableFile: string): string | undefined {
  const stamp = stampOf(tableFile);
  return stamp === undefined ? undefined : hashString(`${inputs}\0${stamp}`);
}

export interface ShaderCookMemo {
  compiler: string;
  permutations: number;
  /** The shader cache entries the result's code came from. */
  storeKeys: string[];
  chunkBytes: Map<string, Uint8Array>;
  allBytes: Uint8Array;
  /**
   * A memo carried over edits (cookShaders' `carried`): packages (GUID -> content hash) whose
   * content has no materials though the materials table still names their content before.
   */
  noMaterials?: Record<string, string>;
}

/** The memo kept under `key`, or undefined (none, another key, damaged). */
export function readShaderCookMemo(intermediatesDir: string, key: string): ShaderCookMemo | undefined {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(path.join(intermediatesDir, SHADER_COOK_MEMO_FILE));
  } catch {
    return undefined;
  }
  const b = openCheckedFile(bytes, MAGIC, VERSION, HEADER, (x) => x.readUInt32LE(8));
  if (!b) return undefined;
  try {
    const jsonEnd = HEADER + b.readUInt32LE(12);
    const j = JSON.parse(b.toString('utf8', HEADER, jsonEnd)) as { key: string; compiler: string; permutations: number; storeKeys: string[]; chunks: Array<[string, number]>; all: number; noMaterials?: Record<string, string> };
    if (j.key !== key) return undefined;
    let at = jsonEnd;
    const chunkBytes = new Map<string, Uint8Array>();
    for (const [name, size] of j.chunks) {
      chunkBytes.set(name, b.subarray(at, at + size));
      at += size;
    }
    const allBytes = b.subarray(at, at + j.all);
    if (at + j.all !== b.byteLength - 8) return undefined;
    const noMaterials = j.noMaterials && typeof j.noMaterials === 'object' ? { noMaterials: j.noMaterials } : {};
    return { compiler: j.compiler, permutations: j.permutations, storeKeys: j.storeKeys, chunkBytes, allBytes, ...noMaterials };
  } catch {
    return undefined;
  }
}

/** Keep `memo` under `key` (crash-safe); a memo that cannot be written is none. */
export function writeShaderCookMemo(intermediatesDir: string, key: string, memo: ShaderCookMemo): void {
  const chunks = [...memo.chunkBytes];
  const json = Buffer.from(
    JSON.stringify({
      key,
      compiler: memo.compiler,
      permutations: memo.permutations,
      storeKeys: memo.storeKeys,
      chunks: chunks.map(([name, b]) => [name, b.byteLength]),
      all: memo.allBytes.byteLength,
      ...(memo.noMaterials ? { noMaterials: memo.noMaterials } : {}),
    }),
    'utf8',
  );
  let size = HEADER + json.byteLength + memo.allBytes.byteLength;
  for (const [, b] of chunks) size += b.byteLength;
  const out = newCheckedFile(MAGIC, VERSION, size);
  out.writeUInt32LE(size + 8, 8);
  out.writeUInt32LE(json.byteLength, 12);
  let at = HEADER;
  out.set(json, at);
  at += json.byteLength;
  for (const [, b] of chunks) {
    out.set(b, at);
    at += b.byteLength;
  }
  out.set(memo.allBytes, at);
  try {
    writeFileAtomicSync(path.join(intermediatesDir, SHADER_COOK_MEMO_FILE), sealCheckedFile(out));
  } catch {
    // A cache never fails a cook: the next one scans.
  }
}
