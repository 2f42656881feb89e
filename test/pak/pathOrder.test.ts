/**
 * The pak's path sort (sortSources: packed keys, src/util/stringOrder.ts) against sorting with
 * comparePathBytes, the order FORMAT.md gives the TOC, on sets built to catch a key sort's
 * mistakes: long shared prefixes, a path that is a prefix of another at every length around a
 * key's width, paths equal over whole keys, characters from U+0080 to above U+FFFF, and
 * duplicates (the error names the first one in sorted order). Sets are large enough (hundreds to
 * thousands) to take the packed path, with many levels and both group sizes.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { initHash } from '../../src/util/hash.js';
import { sortSources, writePak, type PakSource } from '../../pak/writePak.js';
import { PakReader } from '../../pak/PakReader.js';
import { comparePathBytes } from '../../pak/pakFormat.js';
import { caught, tempDirEach } from './helpers.js';

beforeAll(initHash);

let dir: string;
tempDirEach((d) => (dir = d));

/** A small deterministic generator (tests must not depend on Math.random). */
function random(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    s = (Math.imul(s, 1_103_515_245) + 12_345) >>> 0;
    return Math.floor((s / 2 ** 32) * n);
  };
}

function shuffled(list: readonly string[], seed: number): string[] {
  const r = random(seed);
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = r(i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** Random paths of 1-4 segments over the code points of `letters`, many sharing `stem`. */
function randomPaths(count: number, letters: string, stem: string, seed: number): string[] {
  const r = random(seed);
  // Whole code points: a lone surrogate encodes as U+FFFD, so two such paths would be equal in bytes.
  const chars = Array.from(letters);
  const seen = new Set<string>();
  while (seen.size < count) {
    const segs: string[] = [];
    const depth = 1 + r(4);
    for (let d = 0; d < depth; d++) {
      let seg = '';
      const len = 1 + r(r(2) === 0 ? 3 : 24);
      for (let k = 0; k < len; k++) seg += chars[r(chars.length)];
      if (seg === '.' || seg === '..') seg += 'x';
      segs.push(seg);
    }
    const p = `/${r(3) === 0 ? '' : stem.slice(0, r(stem.length + 1))}${segs.join('/')}`;
    if (!p.includes('//') && !p.endsWith('/') && !p.split('/').some((s) => s === '.' || s === '..')) seen.add(p);
  }
  return [...seen];
}

const sets: Record<string, string[]> = {
  'long shared prefixes': (() => {
    const stem = `/Game/${'Deep'.repeat(30)}/Set_`;
    // Unpadded numbers: "Set_10" sorts before "Set_9".
    return Array.from({ length: 3000 }, (_, i) => `${stem}${i % 97}/${'Name'.repeat(i % 5)}_${i}.lasset`);
  })(),
  'a path that is a prefix of another, at every length': (() => {
    const out: string[] = [];
    for (let k = 1; k <= 120; k++) {
      out.push(`/${'a'.repeat(k)}`, `/${'a'.repeat(k)}b`, `/${'a'.repeat(k)}/c`, `/${'a'.repeat(k)}-`, `/${'a'.repeat(k)}0`);
    }
    return out;
  })(),
  'paths equal over whole keys, apart only at the end or in length': (() => {
    const out: string[] = [];
    const ends = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$%&()+,-;=@[]^_{}~';
    for (let i = 0; i < 1500; i++) out.push(`/P/${'xyz'.repeat(20 + (i % 7))}/${ends[i % ends.length]}${'q'.repeat(i % 11)}`);
    return [...new Set(out)];
  })(),
  // 16 letters with "/" (a power of two: the ranks 1..16 need 5 bits, not 4).
  'hex-like names over 16 letters': Array.from({ length: 2000 }, (_, i) => `/${(i * 2_654_435_761 >>> 0).toString(15).padStart(9, '0')}/${(i * 40_503 >>> 0).toString(15)}`),
  'random ASCII': randomPaths(4000, 'abcAB_-.0189~', 'Game/Textures/Set_0', 1),
  'non-ASCII below U+0100': randomPaths(2000, 'aé~ÿ\u0080_', 'Spiel/Übung/', 2),
  'non-ASCII below U+D800 (two-byte units)': randomPaths(3000, 'aÿ\u0100\u00ff中\u4e00z\ud7ff', 'Jeu/Été/中', 3),
  'surrogates and units from U+D800 up': randomPaths(2000, 'a\u{1F600}\uFFFD\uE000\uD7FF\u{10000}é', 'Game/\u{1F600}/', 4),
};

const expected = (paths: readonly string[]) => [...paths].sort(comparePathBytes);
const sorted = (paths: readonly string[]) => sortSources(paths.map((p) => ({ path: p })), 'test.pak').map((s) => s.path);

describe('sortSources', () => {
  for (const [name, paths] of Object.entries(sets)) {
    it(`sorts ${name} as comparePathBytes does`, () => {
      expect(paths.length).toBeGreaterThan(200);
      for (const seed of [1, 2]) expect(sorted(shuffled(paths, seed))).toEqual(expected(paths));
    });
  }

  it('sorts every mix of the sets (one pak, every kind of unit) as comparePathBytes does', () => {
    const all = [...new Set(Object.values(sets).flat())];
    expect(sorted(shuffled(all, 7))).toEqual(expected(all));
    const plain = all.filter((p) => !/[\uD800-\uFFFF]/.test(p));
    expect(sorted(shuffled(plain, 8))).toEqual(expected(plain));
  });

  it('names the first path listed twice, in sorted order', async () => {
    for (const [name, paths] of Object.entries(sets)) {
      const order = expected(paths);
      // Repeat a path late in the order and one early: the error names the early one.
      const early = order[Math.floor(order.length / 3)];
      const late = order[order.length - 2];
      const withRepeats = shuffled([...paths, late, early, late], 9);
      const err = await caught(() => sorted(withRepeats));
      expect(err, name).toMatchObject({ code: 'PAK_PATH_INVALID', message: `entry "${early}" is listed twice` });
    }
    // Many copies of one path, and a path repeated as the very first and last in order.
    const base = sets['random ASCII'];
    const first = expected(base)[0];
    expect(await caught(() => sorted([...base, ...Array(40).fill(first)]))).toMatchObject({ message: `entry "${first}" is listed twice` });
    const last = expected(base)[base.length - 1];
    expect(await caught(() => sorted(shuffled([...base, last], 3)))).toMatchObject({ message: `entry "${last}" is listed twice` });
  });

  it('still rejects an invalid path, the first one in source order', async () => {
    const paths = [...sets['random ASCII']];
    paths.splice(100, 0, '/a//b');
    paths.splice(200, 0, '/a/../b');
    expect(await caught(() => sorted(paths))).toMatchObject({ code: 'PAK_PATH_INVALID', message: 'entry "/a//b" has an empty segment' });
  });

  it('writes the TOC of a real pak in that order', async () => {
    const paths = shuffled([...new Set([...sets['a path that is a prefix of another, at every length'], ...sets['non-ASCII below U+D800 (two-byte units)'].slice(0, 300)])], 5);
    const out = path.join(dir, 'order.pak');
    const data = new Uint8Array([1, 2, 3]);
    await writePak(out, paths.map((p): PakSource => ({ path: p, kind: 'bytes', data })));
    const reader = await PakReader.open(out);
    try {
      expect(reader.toc.entries.map((e) => e.path)).toEqual(expected(paths));
    } finally {
      await reader.close();
    }
    expect((await fsp.stat(out)).size).toBeGreaterThan(0);
  });
});
