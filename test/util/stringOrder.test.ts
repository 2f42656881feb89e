/**
 * stringOrder / sortedByString against Array.prototype.sort with `<` (stable), the sort the GUID
 * and file-path call sites used: GUIDs, paths, strings with NUL, lone surrogates and units up to
 * U+FFFF, repeats, and prefixes at every length around a key's width.
 */
import { describe, expect, it } from 'vitest';
import { packedOrder, packStrings, sortedByString, stringOrder } from '../../src/util/stringOrder.js';

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const expectedOrder = (s: readonly string[]) => s.map((_, i) => i).sort((x, y) => byString(s[x], s[y]));

function random(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    s = (Math.imul(s, 1_103_515_245) + 12_345) >>> 0;
    return Math.floor((s / 2 ** 32) * n);
  };
}

function strings(count: number, units: readonly number[], seed: number, repeatEvery = 0): string[] {
  const r = random(seed);
  const out: string[] = [];
  const stem = String.fromCharCode(...Array.from({ length: 30 }, () => units[r(units.length)]));
  for (let i = 0; i < count; i++) {
    if (repeatEvery > 0 && i > 0 && r(repeatEvery) === 0) {
      out.push(out[r(i)]);
      continue;
    }
    let s = stem.slice(0, r(stem.length + 1));
    for (let k = r(r(2) === 0 ? 4 : 40); k > 0; k--) s += String.fromCharCode(units[r(units.length)]);
    out.push(s);
  }
  return out;
}

const hex = [...'0123456789abcdef'].map((c) => c.charCodeAt(0));
const guids = (count: number, seed: number) => {
  const r = random(seed);
  return Array.from({ length: count }, () => Array.from({ length: 32 }, () => '0123456789abcdef'[r(16)]).join(''));
};

const cases: Record<string, string[]> = {
  GUIDs: guids(5000, 1),
  'GUIDs sharing their first 20 digits': guids(3000, 2).map((g, i) => `${'0'.repeat(20)}${g.slice(20 + (i % 3))}`),
  'hex strings of every length, repeated': strings(4000, hex, 3, 5),
  'two letters (deep ties)': strings(3000, [0x61, 0x62], 4, 7),
  'NUL and the top of the BMP': strings(3000, [0, 1, 0x41, 0xff, 0x100, 0xd800, 0xdbff, 0xdc00, 0xffff], 5, 9),
  'a string that is a prefix of another, at every length': Array.from({ length: 400 }, (_, i) => 'x'.repeat(i >> 1) + (i & 1 ? 'y' : '')),
  'one string many times': Array(300).fill('same'),
  'empty strings among others': [...Array(100).fill(''), ...guids(200, 6)],
};

describe('stringOrder', () => {
  for (const [name, list] of Object.entries(cases)) {
    it(`orders ${name} as a stable sort with < does`, () => {
      expect(Array.from(stringOrder(list))).toEqual(expectedOrder(list));
      const items = list.map((key, i) => ({ key, i }));
      expect(sortedByString(items, (x) => x.key)).toEqual([...items].sort((a, b) => byString(a.key, b.key)));
    });
  }

  it('finds the first repeat in sorted order', () => {
    for (const [name, list] of Object.entries(cases)) {
      const { order, repeat } = packedOrder(packStrings(list));
      let want = 1;
      while (want < order.length && list[order[want]] !== list[order[want - 1]]) want++;
      expect(repeat, name).toBe(want < order.length ? want : -1);
    }
  });

  it('packs string by string, as the join does, past the longest total it joins', () => {
    for (const [name, list] of Object.entries(cases)) {
      const joined = packStrings(list);
      const each = packStrings(list, 0);
      expect(each.units.constructor, name).toBe(joined.units.constructor);
      expect(Array.from(each.units), name).toEqual(Array.from(joined.units));
      expect(Array.from(each.start), name).toEqual(Array.from(joined.start));
    }
  });
});
