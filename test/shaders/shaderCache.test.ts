import { beforeAll, describe, expect, it } from 'vitest';
import { decodeShaderCache, encodeShaderCache, permutationKey, type ShaderPermutation } from '../../src/format/shaderCache.js';
import { initHash, xxh64 } from '../../src/util/hash.js';
import { LuminaError } from '../../src/errors.js';

/** A minimal word-aligned module that starts with the SPIR-V magic (the codec does not validate further). */
function spirv(words: number): Uint8Array {
  const b = new Uint8Array(words * 4);
  const v = new DataView(b.buffer);
  v.setUint32(0, 0x07230203, true);
  for (let i = 1; i < words; i++) v.setUint32(i * 4, i * 0x01010101, true);
  return b;
}

const perm = (source: string, entry: string, stage: ShaderPermutation['stage'], defines: string[], words = 5): ShaderPermutation => ({ key: 0n, source, entry, stage, defines, code: spirv(words) });

beforeAll(initHash);

describe('ShaderCache.bin', () => {
  it('keys are the xxh64 of the text FORMAT.md spells out', () => {
    const text = '/Engine/Shaders/Lit.hlsl\nPSMain\nfragment\nA=1\nB';
    expect(permutationKey({ source: '/Engine/Shaders/Lit.hlsl', entry: 'PSMain', stage: 'fragment', defines: ['B', 'A=1'] })).toBe(xxh64(Buffer.from(text, 'utf8')));
    expect(permutationKey({ source: '/S/Shaders/C.glsl', entry: 'main', stage: 'compute', defines: [] })).toBe(xxh64(Buffer.from('/S/Shaders/C.glsl\nmain\ncompute', 'utf8')));
  });

  it('writes the exact layout: header, permutations sorted by key, defines sorted, checksum', () => {
    const perms = [perm('/Game/Shaders/A.hlsl', 'VSMain', 'vertex', ['Z', 'A=2']), perm('/Game/Shaders/B.glsl', 'main', 'compute', [], 6)];
    const bytes = encodeShaderCache({ compiler: 'glslang 12.0.0', permutations: perms });
    const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    expect(Buffer.from(bytes.subarray(0, 4)).toString('latin1')).toBe('LSHC');
    expect(v.getUint32(4, true)).toBe(1);
    expect(v.getUint32(8, true)).toBe(14);
    expect(Buffer.from(bytes.subarray(12, 26)).toString()).toBe('glslang 12.0.0');
    expect(v.getUint32(26, true)).toBe(2);
    expect(v.getBigUint64(bytes.byteLength - 8, true)).toBe(xxh64(bytes.subarray(0, bytes.byteLength - 8)));
    const back = decodeShaderCache(bytes, 'ShaderCache.bin');
    expect(back.compiler).toBe('glslang 12.0.0');
    const keys = back.permutations.map((p) => p.key);
    expect([...keys].sort((a, b) => (a < b ? -1 : 1))).toEqual(keys);
    const a = back.permutations.find((p) => p.entry === 'VSMain')!;
    expect(a.defines).toEqual(['A=2', 'Z']);
    expect(a.key).toBe(permutationKey(a));
    expect(a.stage).toBe('vertex');
    expect(back.permutations.find((p) => p.entry === 'main')!.code).toEqual(spirv(6));
  });

  it('is deterministic whatever the input order', () => {
    const p = [perm('/G/Shaders/A.hlsl', 'PSMain', 'fragment', ['X', 'B']), perm('/G/Shaders/A.hlsl', 'VSMain', 'vertex', []), perm('/G/Shaders/C.glsl', 'main', 'compute', ['Q=1'])];
    const one = encodeShaderCache({ compiler: 'c', permutations: p });
    const two = encodeShaderCache({ compiler: 'c', permutations: [p[2], p[0], p[1]].map((x) => ({ ...x, defines: [...x.defines].reverse() })) });
    expect(Buffer.from(two).equals(Buffer.from(one))).toBe(true);
  });

  it('an empty cache round-trips', () => {
    const bytes = encodeShaderCache({ compiler: 'none', permutations: [] });
    expect(decodeShaderCache(bytes, 'x').permutations).toEqual([]);
  });

  const corrupt = (mutate: (b: Uint8Array) => void, fixSum = true): unknown => {
    const bytes = encodeShaderCache({ compiler: 'c', permutations: [perm('/G/Shaders/A.hlsl', 'PSMain', 'fragment', ['X'])] });
    mutate(bytes);
    if (fixSum) new DataView(bytes.buffer).setBigUint64(bytes.byteLength - 8, xxh64(bytes.subarray(0, bytes.byteLength - 8)), true);
    try {
      decodeShaderCache(bytes, 'ShaderCache.bin');
    } catch (e) {
      return e;
    }
    return undefined;
  };

  it('rejects a bad checksum, stage, key, SPIR-V magic and count, naming the field and offset', () => {
    const sum = corrupt((b) => (b[b.byteLength - 12] ^= 1), false) as LuminaError;
    expect(sum).toBeInstanceOf(LuminaError);
    expect(sum.code).toBe('SHADER_CACHE_INVALID');
    expect(sum.field).toBe('checksum');
    // Layout: magic, version, compiler (4 + 1), count: key at 17, source at 25 (4 + 17), entry at 46 (4 + 6), stage at 56.
    const stage = corrupt((b) => (b[56] = 7)) as LuminaError;
    expect({ code: stage.code, field: stage.field, offset: stage.offset }).toEqual({ code: 'SHADER_CACHE_INVALID', field: 'permutations[0].stage', offset: 56 });
    const key = corrupt((b) => (b[17] ^= 0xff)) as LuminaError;
    expect(key.field).toBe('permutations[0].key');
    const magic = corrupt((b) => (b[b.byteLength - 8 - 20] ^= 0xff)) as LuminaError;
    expect(magic.field).toBe('permutations[0].code');
    const count = corrupt((b) => new DataView(b.buffer).setUint32(13, 1_000_000, true)) as LuminaError;
    expect(count.field).toBe('count');
    expect(count.message).toBe('count: 1000000 permutations cannot fit in 73 bytes');
  });
});
