import { beforeEach, describe, expect, it, vi } from 'vitest';
import { LEAN_HEAP_ASSETS } from '../../src/util/leanHeap.js';

// A level stays on for the process once on: each case takes a fresh copy of the module (the V8
// flags it sets stay set, which these cases do not look at).
type LeanHeap = typeof import('../../src/util/leanHeap.js');
let m: LeanHeap;
beforeEach(async () => {
  vi.resetModules();
  m = await import('../../src/util/leanHeap.js');
});
const levels = () => ({ lean: m.leanHeapOn(), strict: m.leanHeapStrictOn() });

describe('leanHeapFor and leanHeapStrictFor', () => {
  it('stay off below the threshold, when forced off, and for a value that is not 1 or 0', () => {
    expect(m.leanHeapFor(LEAN_HEAP_ASSETS - 1, {})).toBe(false);
    expect(m.leanHeapStrictFor(LEAN_HEAP_ASSETS - 1, {})).toBe(false);
    expect(m.leanHeapFor(10 * LEAN_HEAP_ASSETS, { LUMINA_LEAN_HEAP: '0' })).toBe(false);
    expect(m.leanHeapStrictFor(10 * LEAN_HEAP_ASSETS, { LUMINA_LEAN_HEAP: '0' })).toBe(false);
    expect(m.leanHeapFor(LEAN_HEAP_ASSETS - 1, { LUMINA_LEAN_HEAP: 'yes' })).toBe(false);
    expect(levels()).toEqual({ lean: false, strict: false });
  });

  it('lean at the threshold leaves strict off until the work reaches it, then both stay on', () => {
    expect(m.leanHeapFor(LEAN_HEAP_ASSETS, {})).toBe(true);
    expect(levels()).toEqual({ lean: true, strict: false });
    expect(m.leanHeapStrictFor(LEAN_HEAP_ASSETS - 1, {})).toBe(false);
    expect(m.leanHeapFor(0, { LUMINA_LEAN_HEAP: '0' })).toBe(true);
    expect(levels()).toEqual({ lean: true, strict: false });
    expect(m.leanHeapStrictFor(LEAN_HEAP_ASSETS, {})).toBe(true);
    expect(m.leanHeapStrictFor(0, { LUMINA_LEAN_HEAP: '0' })).toBe(true);
    expect(levels()).toEqual({ lean: true, strict: true });
  });

  it('strict implies lean: the work alone turns both on', () => {
    expect(m.leanHeapStrictFor(LEAN_HEAP_ASSETS, {})).toBe(true);
    expect(levels()).toEqual({ lean: true, strict: true });
  });

  it('LUMINA_LEAN_HEAP=1 is strict at any size, through either call', () => {
    expect(m.leanHeapFor(0, { LUMINA_LEAN_HEAP: '1' })).toBe(true);
    expect(levels()).toEqual({ lean: true, strict: true });
  });

  it('LUMINA_LEAN_HEAP_ASSETS moves the threshold of both levels; a value that is not a positive integer does not', () => {
    const env = { LUMINA_LEAN_HEAP_ASSETS: '40' };
    expect(m.leanHeapFor(39, env)).toBe(false);
    expect(m.leanHeapFor(LEAN_HEAP_ASSETS - 1, { LUMINA_LEAN_HEAP_ASSETS: '-5' })).toBe(false);
    expect(m.leanHeapFor(LEAN_HEAP_ASSETS - 1, { LUMINA_LEAN_HEAP_ASSETS: '1e3x' })).toBe(false);
    expect(m.leanHeapFor(40, env)).toBe(true);
    expect(m.leanHeapStrictFor(39, env)).toBe(false);
    expect(m.leanHeapStrictFor(40, env)).toBe(true);
  });

  it('held, strict asked for is lean until the release turns it on; a release with nothing asked for leaves it off', () => {
    m.holdStrictHeap();
    expect(m.leanHeapStrictFor(LEAN_HEAP_ASSETS - 1, {})).toBe(false);
    expect(m.releaseStrictHeap()).toBe(false);
    expect(levels()).toEqual({ lean: false, strict: false });
    m.holdStrictHeap();
    expect(m.leanHeapStrictFor(LEAN_HEAP_ASSETS, {})).toBe(true);
    expect(levels()).toEqual({ lean: true, strict: false });
    expect(m.releaseStrictHeap()).toBe(true);
    expect(levels()).toEqual({ lean: true, strict: true });
  });

  it('LUMINA_LEAN_HEAP=1 is strict at once even when held', () => {
    m.holdStrictHeap();
    expect(m.leanHeapStrictFor(0, { LUMINA_LEAN_HEAP: '1' })).toBe(true);
    expect(levels()).toEqual({ lean: true, strict: true });
  });
});
