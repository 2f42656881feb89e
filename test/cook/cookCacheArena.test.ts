/**
 * The cook cache's record arena grows by doubling while small and by an eighth once large; a
 * record reads back as written, a hash as its bytes and any other string as itself.
 */
import { describe, expect, it } from 'vitest';
import type { CacheEntry } from '../../cook/cookCache.js';
import { Arena, readEntry, StringTable, writeEntry } from '../../cook/cookCacheCodec.js';

describe('cook cache arena', () => {
  it('doubles while small and keeps what it held', () => {
    const a = new Arena();
    a.buf.fill(7, 0, 100);
    a.used = 100;
    a.reserve(70_000);
    expect(a.buf.byteLength).toBe(1 << 17);
    expect([...a.buf.subarray(0, 100)].every((b) => b === 7)).toBe(true);
  });

  it('a full 32 MiB arena asked for one more record grows to 36 MiB, not 64 (a replayed journal line at a million entries)', () => {
    const full = Buffer.alloc(32 << 20, 3);
    const a = new Arena(full, full.byteLength);
    a.reserve(200);
    expect(a.buf.byteLength).toBe(36 << 20);
    expect(a.buf[(32 << 20) - 1]).toBe(3);
    // Several steps when one is not enough.
    const b = new Arena(Buffer.alloc(32 << 20), 32 << 20);
    b.reserve(10 << 20);
    expect(b.buf.byteLength).toBeGreaterThanOrEqual(42 << 20);
    expect(b.buf.byteLength).toBeLessThan(48 << 20);
  });

  it('told how many records are coming, it grows once for them after a sample, and writes the same bytes', () => {
    const table = new StringTable();
    const entry = (i: number): CacheEntry => ({
      key: (i * 2654435761 >>> 0).toString(16).padStart(16, '0'),
      parts: { content: 'c'.repeat(i % 7), format: '1' },
      cookedFile: `Game/Folder${i % 13}/Asset${i}.lasset`,
      cookedSize: i,
      cookedMtimeMs: 1000 + i,
      rawSize: i,
      xxh64: 'x'.repeat(i % 5),
      sourceSize: i,
      strippedExports: 0,
      nulledRefs: 0,
      texture: i % 2 === 0,
    });
    const n = 20_000;
    const write = (hint: boolean): { bytes: Buffer; growthsAfterSample: number; cap: number; used: number } => {
      const a = new Arena();
      if (hint) a.expect(n);
      let growthsAfterSample = 0;
      for (let i = 0; i < n; i++) {
        const before = a.buf;
        writeEntry(a, table, `guid-${i}`, entry(i));
        if (i >= 1024 && a.buf !== before) growthsAfterSample++;
      }
      return { bytes: Buffer.from(a.buf.subarray(0, a.used)), growthsAfterSample, cap: a.buf.byteLength, used: a.used };
    };
    const plain = write(false);
    const hinted = write(true);
    expect(hinted.bytes.equals(plain.bytes)).toBe(true);
    expect(plain.growthsAfterSample).toBeGreaterThan(1);
    expect(hinted.growthsAfterSample).toBe(1);
    // Room for the rest at their mean size plus a sixteenth, not a doubling's worth.
    expect(hinted.cap).toBeGreaterThanOrEqual(hinted.used);
    expect(hinted.cap).toBeLessThan(hinted.used * 1.2);
  });

  it('a record reads back as written: 16 and 32 lowercase hex digits as their bytes, every other string as itself', () => {
    const arena = new Arena();
    const table = new StringTable();
    const hex16 = '0123456789abcdef';
    const hex32 = 'fedcba9876543210ffffffffffffffff';
    const entry = (over: Partial<CacheEntry>): CacheEntry => ({
      key: hex16,
      parts: { content: hex16, format: '1', settings: hex32, encoder: 'e:2' },
      cookedFile: 'Game/A.lasset',
      cookedSize: 10,
      cookedMtimeMs: 1234.5,
      rawSize: 9,
      xxh64: hex16,
      cookedXxh64: 'a0a1a2a3a4a5a6a7',
      sourceSize: 8,
      strippedExports: 1,
      nulledRefs: 2,
      texture: true,
      classes: ['C', '0123456789abcdef'],
      cookMs: 3,
      ...over,
    });
    const forms = [
      entry({}),
      // Near misses stay strings: upper case, a non-hex digit, one digit short or long, odd lengths.
      entry({ key: '0123456789ABCDEF', xxh64: '0123456789abcdeg', cookedXxh64: '0123456789abcde', parts: { content: '0123456789abcdef0', format: 'g'.repeat(32) } }),
      entry({ key: 'FEDCBA9876543210ffffffffffffffff', xxh64: '', cookedXxh64: undefined, classes: undefined, cookMs: undefined, texture: false }),
      // A character past Latin-1 (whose low byte is a hex digit's code) in either place of a pair.
      entry({ key: '\u0161123456789abcdef'.slice(0, 16), xxh64: '0\u0130' + '0'.repeat(14) }),
    ];
    const at = forms.map((e, i) => writeEntry(arena, table, `guid-${i}`, e));
    expect(at.map((o) => readEntry(arena.buf, table, o))).toEqual(forms);
    // The first record's key: tag 0, then its 8 bytes (after the record length and the GUID).
    const guidEnd = at[0] + 4 + 1 + 4 + 'guid-0'.length;
    expect(arena.buf[guidEnd]).toBe(0);
    expect(arena.buf.subarray(guidEnd + 1, guidEnd + 9).toString('hex')).toBe(hex16);
  });
});
