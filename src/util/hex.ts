/**
 * Lowercase hex digits to bytes without Buffer's hex codec: `Buffer.write(s, at, n, 'hex')` is a
 * call into C++ (~1 us), where a table lookup per digit is a few ns. Used where every asset of a
 * cook writes its hashes (the cook cache's records, the materials table).
 */

/** A character code's value as a lowercase hex digit, or -1 (codes 0-255; anything above is not one). */
const HEX_VALUE = new Int8Array(256).fill(-1);
for (let d = 0; d < 16; d++) HEX_VALUE['0123456789abcdef'.charCodeAt(d)] = d;

/**
 * Write `s` (an even number of lowercase hex digits, /^[0-9a-f]*$/) as bytes at `at`; false, with
 * whatever it wrote of them to be overwritten, when `s` is not that.
 */
export function hexInto(b: Uint8Array, at: number, s: string): boolean {
  if (s.length & 1) return false;
  for (let k = 0; k < s.length; k += 2) {
    const c1 = s.charCodeAt(k);
    const c2 = s.charCodeAt(k + 1);
    if ((c1 | c2) > 0xff) return false;
    const hi = HEX_VALUE[c1];
    const lo = HEX_VALUE[c2];
    if ((hi | lo) < 0) return false;
    b[at + (k >> 1)] = (hi << 4) | lo;
  }
  return true;
}
