import { beforeAll, describe, expect, it } from 'vitest';
import { createTextHasher, hashString, initHash, xxh64, xxh64Text } from '../../src/util/hash.js';

describe('createTextHasher', () => {
  beforeAll(initHash);

  it('gives the hash of the whole text, across its batch boundaries and multi-byte characters', () => {
    for (const n of [0, 1, 4095, 4096, 4097, 10_000]) {
      const parts = Array.from({ length: n }, (_, i) => `${i}\t/Game/Ä${i % 7}/é\n`);
      const h = createTextHasher();
      for (const p of parts) h.update(p);
      expect(h.digestHex(), `${n} parts`).toBe(hashString(parts.join('')));
    }
  });

  it('xxh64Text is the xxh64 of the UTF-8 bytes', () => {
    for (const s of ['', 'a', '/Game/Ä/é|/Game|package|0|', 'x'.repeat(100_000), '\u{1F600}'.repeat(3)]) {
      expect(xxh64Text(s)).toBe(xxh64(Buffer.from(s, 'utf8')));
    }
  });
});
