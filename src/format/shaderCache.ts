/**
 * `ShaderCache.bin` (FORMAT.md, "Shaders and the shader cache"): the SPIR-V of every shader
 * permutation a pak's content needs, found at run time by a 64-bit key computed from the
 * permutation alone, so the runtime never needs the sources.
 *
 *   u32 magic `LSHC`, u32 version 1, FString compiler, u32 count,
 *   per permutation sorted by key: u64 key, FString source, FString entry, u8 stage,
 *     u32 defineCount, defineCount FStrings, u32 codeSize (multiple of 4), codeSize bytes SPIR-V
 *   u64 xxh64 of everything before it
 *
 * Encoding sorts by key (ties, which only a hash collision makes, by the permutation's text) and
 * sorts each permutation's defines by bytes, so the same permutations always give the same bytes.
 */
import { errors } from '../errors.js';
import { xxh64 } from '../util/hash.js';
import { BinaryReader } from './BinaryReader.js';
import { BinaryWriter } from './BinaryWriter.js';

export const SHADER_CACHE_MAGIC = 0x4348534c; // 'LSHC'
export const SHADER_CACHE_VERSION = 1;
/** The first word of every SPIR-V module. */
export const SPIRV_MAGIC = 0x07230203;
export const SHADER_CACHE_ENTRY = 'ShaderCache.bin';

export const SHADER_STAGES = ['vertex', 'fragment', 'compute'] as const;
export type ShaderStage = (typeof SHADER_STAGES)[number];

/** What identifies a permutation: the runtime's lookup key is computed from exactly this. */
export interface PermutationId {
  /** Virtual path of the compiled source, `/Engine/Shaders/Lit.hlsl`. */
  source: string;
  entry: string;
  stage: ShaderStage;
  /** `NAME` or `NAME=VALUE`, sorted by bytes. */
  defines: readonly string[];
}

export interface ShaderPermutation extends PermutationId {
  key: bigint;
  /** SPIR-V words, little-endian. */
  code: Uint8Array;
}

export interface ShaderCacheFile {
  compiler: string;
  permutations: ShaderPermutation[];
}

const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/** Defines in the order the key and the file use: sorted by their UTF-8 bytes, duplicates kept once. */
export function sortDefines(defines: Iterable<string>): string[] {
  return [...new Set(defines)].sort(byBytes);
}

/** The text the key hashes: `source \n entry \n stage` then `\n define` per define (sorted). */
export function permutationText(p: PermutationId): string {
  let s = `${p.source}\n${p.entry}\n${p.stage}`;
  for (const d of sortDefines(p.defines)) s += `\n${d}`;
  return s;
}

/** The runtime lookup key: xxh64 (seed 0) of {@link permutationText}. Call `initHash()` first. */
export function permutationKey(p: PermutationId): bigint {
  return xxh64(Buffer.from(permutationText(p), 'utf8'));
}

/** A permutation for messages: `/Engine/Shaders/Lit.hlsl PSMain (fragment) [TINT=1]`. */
export function describePermutation(p: PermutationId): string {
  const d = p.defines.length ? ` [${p.defines.join(' ')}]` : ' [no defines]';
  return `${p.source} ${p.entry} (${p.stage})${d}`;
}

/** Encode a shader cache. Keys are recomputed from each permutation, so a stale key cannot be written. */
export function encodeShaderCache(cache: ShaderCacheFile): Uint8Array {
  const list = cache.permutations.map((p) => {
    const defines = sortDefines(p.defines);
    const id = { source: p.source, entry: p.entry, stage: p.stage, defines };
    return { ...id, key: permutationKey(id), text: permutationText(id), code: p.code };
  });
  list.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : byBytes(a.text, b.text)));
  const w = new BinaryWriter(64 + list.reduce((n, p) => n + p.code.byteLength + 64, 0));
  w.u32(SHADER_CACHE_MAGIC).u32(SHADER_CACHE_VERSION).fstring(cache.compiler).u32(list.length);
  for (const p of list) {
    if (p.code.byteLength % 4 !== 0) throw new RangeError(`${describePermutation(p)}: SPIR-V size ${p.code.byteLength} is not a multiple of 4`);
    w.u64(p.key).fstring(p.source).fstring(p.entry).u8(SHADER_STAGES.indexOf(p.stage)).u32(p.defines.length);
    for (const d of p.defines) w.fstring(d);
    w.u32(p.code.byteLength).bytes(p.code);
  }
  const body = w.finish();
  const out = new Uint8Array(body.byteLength + 8);
  out.set(body);
  new DataView(out.buffer).setBigUint64(body.byteLength, xxh64(body), true);
  return out;
}

/**
 * Decode and check a shader cache: magic, version, every count and size against the file, the
 * stage, SPIR-V magic and word alignment, key order, each key against its permutation, and the
 * trailing checksum. Throws SHADER_CACHE_INVALID naming the field and offset.
 */
export function decodeShaderCache(bytes: Uint8Array, file: string): ShaderCacheFile {
  if (bytes.byteLength < 24) throw errors.shaderCacheInvalid(file, 'magic', `file is ${bytes.byteLength} bytes, shorter than an empty shader cache (24)`, 0);
  const bodyEnd = bytes.byteLength - 8;
  const r = new BinaryReader(bytes.subarray(0, bodyEnd), file, 0, bytes.byteLength);
  const fail = (field: string, why: string, at: number): never => {
    throw errors.shaderCacheInvalid(file, field, why, at);
  };
  const magic = r.u32('magic');
  if (magic !== SHADER_CACHE_MAGIC) fail('magic', `0x${magic.toString(16)} is not LSHC`, 0);
  const version = r.u32('version');
  if (version !== SHADER_CACHE_VERSION) fail('version', `version ${version} is not ${SHADER_CACHE_VERSION}`, 4);
  const compiler = r.fstring('compiler');
  const countAt = r.offset;
  const count = r.u32('count');
  // Each permutation takes at least 8 + 4 + 4 + 1 + 4 + 4 bytes: a count that cannot fit is a lie.
  if (count * 25 > r.remaining) fail('count', `${count} permutations cannot fit in ${r.remaining} bytes`, countAt);
  const permutations: ShaderPermutation[] = [];
  let prev: bigint | undefined;
  for (let i = 0; i < count; i++) {
    const at = r.offset;
    const key = r.u64(`permutations[${i}].key`);
    const source = r.fstring(`permutations[${i}].source`);
    const entry = r.fstring(`permutations[${i}].entry`);
    const stageAt = r.offset;
    const stageByte = r.u8(`permutations[${i}].stage`);
    if (stageByte >= SHADER_STAGES.length) fail(`permutations[${i}].stage`, `${stageByte} is not 0 (vertex), 1 (fragment) or 2 (compute)`, stageAt);
    const dcAt = r.offset;
    const defineCount = r.u32(`permutations[${i}].defineCount`);
    if (defineCount * 4 > r.remaining) fail(`permutations[${i}].defineCount`, `${defineCount} defines cannot fit in ${r.remaining} bytes`, dcAt);
    const defines: string[] = [];
    for (let d = 0; d < defineCount; d++) defines.push(r.fstring(`permutations[${i}].defines[${d}]`));
    const sizeAt = r.offset;
    const codeSize = r.u32(`permutations[${i}].codeSize`);
    if (codeSize % 4 !== 0 || codeSize < 20) fail(`permutations[${i}].codeSize`, `${codeSize} is not a SPIR-V size (a multiple of 4, at least the 20-byte header)`, sizeAt);
    const codeAt = r.offset;
    const code = r.bytesView(codeSize, `permutations[${i}].code`);
    const word0 = new DataView(code.buffer, code.byteOffset, 4).getUint32(0, true);
    if (word0 !== SPIRV_MAGIC) fail(`permutations[${i}].code`, `starts with 0x${word0.toString(16)}, not the SPIR-V magic 0x07230203`, codeAt);
    const p: ShaderPermutation = { key, source, entry, stage: SHADER_STAGES[stageByte], defines, code };
    const sorted = sortDefines(defines);
    if (sorted.length !== defines.length || sorted.some((d, k) => d !== defines[k])) fail(`permutations[${i}].defines`, 'are not sorted by bytes without repeats', dcAt);
    const want = permutationKey(p);
    if (want !== key) fail(`permutations[${i}].key`, `0x${key.toString(16)} is not the key of ${describePermutation(p)} (0x${want.toString(16)})`, at);
    if (prev !== undefined && key < prev) fail(`permutations[${i}].key`, 'permutations are not sorted by key', at);
    prev = key;
    permutations.push(p);
  }
  if (r.remaining !== 0) fail('checksum', `${r.remaining} bytes follow the last permutation`, r.offset);
  const stored = new DataView(bytes.buffer, bytes.byteOffset + bodyEnd, 8).getBigUint64(0, true);
  const actual = xxh64(bytes.subarray(0, bodyEnd));
  if (stored !== actual) fail('checksum', `stored xxh64 ${stored.toString(16)} does not match the contents (${actual.toString(16)})`, bodyEnd);
  return { compiler, permutations };
}

/** True when `bytes` start with the shader cache magic (for `inspect` and `pak cat` to pick a decoder). */
export function isShaderCache(bytes: Uint8Array): boolean {
  return bytes.byteLength >= 4 && new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true) === SHADER_CACHE_MAGIC;
}
