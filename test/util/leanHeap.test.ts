import { describe, expect, it } from 'vitest';
import { LEAN_HEAP_ASSETS, leanHeapFor } from '../../src/util/leanHeap.js';

// Once on, the mode stays on for the process: the cases that must leave it off run first.
describe('leanHeapFor', () => {
  it('stays off below the threshold and when forced off, turns on at it or when forced on, then stays on', () => {
    expect(leanHeapFor(LEAN_HEAP_ASSETS - 1, {})).toBe(false);
    expect(leanHeapFor(10 * LEAN_HEAP_ASSETS, { LUMINA_LEAN_HEAP: '0' })).toBe(false);
    expect(leanHeapFor(LEAN_HEAP_ASSETS - 1, { LUMINA_LEAN_HEAP: 'yes' })).toBe(false);
    expect(leanHeapFor(LEAN_HEAP_ASSETS, {})).toBe(true);
    expect(leanHeapFor(0, { LUMINA_LEAN_HEAP: '0' })).toBe(true);
  });
});
