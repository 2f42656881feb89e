/**
 * The TOC parser's fast path (parseTocFast) and path byte order (comparePathBytes) against the
 * plain definitions: every TOC the checking parser accepts reads back as written, every one it
 * refuses is still refused with the same field, and path order equals UTF-8 byte order, also for
 * characters outside the BMP, lone surrogates and prefixes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { comparePathBytes, encodeToc, encodeTocPlain, parseToc, virtualPathProblem, type PakEntry, type PakToc } from '../../pak/pakFormat.js';
import { BLOCK_SIZE } from '../../src/format/deflateBlocks.js';
import { sortSources } from '../../pak/writePak.js';
import { initHash } from '../../src/util/hash.js';
import { Random } from '../../samples/generate/random.js';

const TOC_AT = 1 << 24;

function entry(path: string, over: Partial<PakEntry> = {}): PakEntry {
  return { path, offset: 32, storedSize: 10, rawSize: 10, xxh64: 0x1234n, method: 0, blockSize: BLOCK_SIZE, blockSizes: [], ...over };
}

function parse(toc: PakToc, flags = 0, bytes = encodeToc(toc)): PakToc {
  return parseToc(bytes, 'x.pak', { entryCount: toc.entries.length, flags, tocOffset: TOC_AT, tocSize: bytes.byteLength }, TOC_AT + bytes.byteLength + 16);
}

function refusal(toc: PakToc, flags = 0, bytes?: Uint8Array): unknown {
  try {
    parse(toc, flags, bytes);
  } catch (e) {
    return e;
  }
  return 'accepted';
}

beforeAll(initHash);

describe('parseToc', () => {
  it('reads back every kind of entry as written (DEFLATE in blocks, stored, tombstones, non-ASCII and astral paths)', () => {
    const entries = [
      entry('/Game/A.lasset', { method: 1, rawSize: 3 * BLOCK_SIZE + 5, storedSize: 30, blockSizes: [10, 10, 5, 5] }),
      entry('/Game/B.lasset', { offset: 100, storedSize: 7, rawSize: 7 }),
      entry('/Game/C.lasset', { offset: 0, storedSize: 0, rawSize: 0, xxh64: 0n, method: 2 }),
      entry('/Game/Z\u00e9.txt'),
      entry('/Game/\uD83D\uDE00.txt', { offset: 2 ** 40, storedSize: 0, rawSize: 0, xxh64: 2n ** 64n - 1n }),
    ];
    const toc: PakToc = { mountPoint: '/Game/', priority: -3, baseTocHash: 77n, entries };
    expect(parse({ ...toc, entries: entries.map((e) => ({ ...e, offset: e.offset === 2 ** 40 ? 40 : e.offset })) }, 1)).toEqual({
      ...toc,
      entries: entries.map((e) => ({ ...e, offset: e.offset === 2 ** 40 ? 40 : e.offset })),
    });
  });

  it('refuses what the format forbids, naming the field (each case would read fine without its check)', () => {
    const ok = (entries: PakEntry[], extra: Partial<PakToc> = {}): PakToc => ({ mountPoint: '/', priority: 0, baseTocHash: 0n, entries, ...extra });
    const cases: Array<[PakToc, string, number?]> = [
      [ok([entry('/b'), entry('/a')]), 'entries[1].path'],
      [ok([entry('/a'), entry('/a')]), 'entries[1].path'],
      [ok([entry('/\u00e9'), entry('/\uD83D\uDE00'), entry('/\uE000')]), 'entries[2].path'],
      [ok([entry('/a/../b')]), 'toc'],
      [ok([entry('/a', { method: 3 as 0 })]), 'entries[0].method'],
      [ok([entry('/a', { blockSize: 4096 })]), 'entries[0].blockSize'],
      [ok([entry('/a', { storedSize: 9 })]), 'entries[0].storedSize'],
      [ok([entry('/a', { method: 2 })]), 'entries[0].method'],
      [ok([entry('/a', { offset: 8 })]), 'entries[0].offset'],
      [ok([entry('/a', { offset: TOC_AT - 5 })]), 'entries[0].offset'],
      [ok([entry('/a', { offset: 2 ** 53 })]), 'entries[0].offset'],
      [ok([entry('/a', { method: 1, rawSize: 10, storedSize: 10, blockSizes: [4, 6] })]), 'entries[0].blockCount'],
      [ok([entry('/a', { method: 1, rawSize: 10, storedSize: 10, blockSizes: [9] })]), 'entries[0].blockSizes'],
      [ok([entry('/a', { method: 1, rawSize: 10, storedSize: 0, blockSizes: [0] })]), 'entries[0].blockSizes[0]'],
      [ok([entry('/a', { method: 1, rawSize: 10, storedSize: 1000, blockSizes: [1000] })]), 'entries[0].blockSizes[0]'],
      [ok([entry('/a')], { baseTocHash: 5n }), 'baseTocHash'],
      [ok([entry('/a')], { mountPoint: '/Game' }), 'mountPoint'],
    ];
    for (const [toc, field] of cases) expect(refusal(toc), field).toMatchObject({ code: expect.stringMatching(/^PAK_(INVALID|PATH_INVALID)$/), ...(field === 'toc' ? {} : { field }) });
    const good = ok([entry('/a')]);
    const bytes = encodeToc(good);
    expect(refusal(good, 0, Buffer.concat([bytes, Buffer.from([0])]))).toMatchObject({ code: 'PAK_INVALID', field: 'toc' });
    const badUtf8 = Buffer.from(bytes);
    badUtf8[badUtf8.indexOf(0x61, 20)] = 0xff;
    expect(refusal(good, 0, badUtf8)).toMatchObject({ code: 'PAK_INVALID', field: 'entries[0].path' });
    expect(refusal(good, 0, bytes.subarray(0, bytes.byteLength - 2))).toMatchObject({ code: 'PAK_INVALID' });
  });
});

describe('encodeToc', () => {
  it('writes the same bytes as the plain writer, for any entries', () => {
    const rnd = new Random(7);
    const names = ['a', 'Rock', '\u00e9t\u00e9', '\u5ca9', '\uD83D\uDE00', 'x'.repeat(300)];
    for (let round = 0; round < 20; round++) {
      const entries: PakEntry[] = [];
      for (let i = 0; i < 50; i++) {
        const method = (rnd.nextU32() % 3) as 0 | 1 | 2;
        const rawSize = method === 2 ? 0 : rnd.nextU32() % (5 * BLOCK_SIZE);
        const count = Math.ceil(rawSize / BLOCK_SIZE);
        const blockSizes = method === 1 ? Array.from({ length: count }, () => 1 + (rnd.nextU32() % BLOCK_SIZE)) : [];
        const big = rnd.nextU32() % 4 === 0 ? 2 ** 40 + rnd.nextU32() : rnd.nextU32();
        entries.push({ path: `/${names[rnd.nextU32() % names.length]}/${i}`, offset: method === 2 ? 0 : big, storedSize: rnd.nextU32(), rawSize, xxh64: (BigInt(rnd.nextU32()) << 32n) | BigInt(rnd.nextU32()), method, blockSize: BLOCK_SIZE, blockSizes });
      }
      const toc: PakToc = { mountPoint: round % 2 ? '/' : '/G\u00e4me/', priority: (rnd.nextU32() | 0) % 1000, baseTocHash: BigInt(rnd.nextU32()) * 3n, entries };
      expect(Buffer.from(encodeToc(toc)).equals(Buffer.from(encodeTocPlain(toc)))).toBe(true);
    }
  });
});

describe('comparePathBytes', () => {
  it('orders like the UTF-8 bytes, whatever the characters', () => {
    const alphabet = ['a', 'b', '/', '.', 'Z', '\u00e9', '\u07ff', '\u0800', '\uD7FF', '\uE000', '\uFFFD', '\uFFFF', '\uD83D\uDE00', '\uDBFF\uDFFF', '\uD800', '\uDC00'];
    const rnd = new Random(15);
    const strings: string[] = [];
    for (let i = 0; i < 400; i++) {
      let s = '';
      const n = rnd.nextU32() % 6;
      for (let k = 0; k < n; k++) s += alphabet[rnd.nextU32() % alphabet.length];
      strings.push(s, s + alphabet[rnd.nextU32() % alphabet.length]);
    }
    for (let i = 0; i < strings.length; i++) {
      for (let j = 0; j < strings.length; j += 7) {
        const want = Math.sign(Buffer.compare(Buffer.from(strings[i], 'utf8'), Buffer.from(strings[j], 'utf8')));
        expect(Math.sign(comparePathBytes(strings[i], strings[j])), `${JSON.stringify(strings[i])} vs ${JSON.stringify(strings[j])}`).toBe(want);
      }
    }
  });

  it('sortSources sorts by UTF-8 bytes, with and without characters whose UTF-16 order differs', () => {
    const rnd = new Random(16);
    for (const alphabet of [['a', 'B', '_', '0', '\u00e9', '\u07ff', '\uD7FF'], ['a', 'B', '\u00e9', '\uE000', '\uFFFD', '\uD83D\uDE00', '\uDBFF\uDFFF']]) {
      const paths = new Set<string>();
      while (paths.size < 300) {
        let p = '/';
        const n = 1 + (rnd.nextU32() % 5);
        for (let k = 0; k < n; k++) p += alphabet[rnd.nextU32() % alphabet.length];
        paths.add(p);
      }
      const sorted = sortSources([...paths].map((path) => ({ path })), 'x.pak').map((x) => x.path);
      expect(sorted).toEqual([...paths].sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))));
    }
  });

  it('virtualPathProblem: the quick accept agrees with the rules', () => {
    const valid = ['/a', '/a/b.c', '/.a/..b/c.', '/\u00e9/\uD83D\uDE00', `/${'x'.repeat(21_000)}`];
    const invalid: Array<[string, string]> = [
      ['/', 'has an empty segment'],
      ['a/b', 'does not start with "/"'],
      ['//a', 'has an empty segment'],
      ['/a/', 'has an empty segment'],
      ['/a/./b', 'has a "." segment'],
      ['/a/..', 'has a ".." segment'],
      ['/a\\b', 'contains a backslash'],
      ['/a\0', 'contains a NUL character'],
      [`/${'\u00e9'.repeat(40_000)}`, 'is longer than 65,535 bytes'],
    ];
    for (const p of valid) expect(virtualPathProblem(p), p.slice(0, 20)).toBeUndefined();
    for (const [p, why] of invalid) expect(virtualPathProblem(p), p.slice(0, 20)).toBe(why);
  });
});
