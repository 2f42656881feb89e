/**
 * The full cook's packed per-asset results: every result comes back as it was stored (minus the
 * cache entry, key and warnings, which are not held), whatever form its identity and output take.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AssetCookResult } from '../../cook/cookAsset.js';
import { HeldResults } from '../../cook/heldResults.js';
import { LuminaError } from '../../src/errors.js';

const cookedDir = path.resolve('/tmp/project/Saved/Cooked');
const g = (n: number) => n.toString(16).padStart(32, '0');
const assets = [1, 2, 3, 4, 5].map((n) => ({ record: { guid: g(n), virtualPath: `/Game/A/Asset${n}.lasset` } }));
const usual = (n: number) => path.join(cookedDir, 'Game', 'A', `Asset${n}.lasset`);
const base = { bytesIn: 1234, bytesOut: 567, strippedExports: 2, nulledRefs: 1, ms: 3.25 };

describe('HeldResults', () => {
  it('gives back each result as stored: packed identities and paths, and the forms that are not', () => {
    const held = new HeldResults(assets, cookedDir);
    const cached: AssetCookResult = { ...base, status: 'cached', output: usual(1), identity: '00ab00cd12345678:4096:567', cookedXxh64: 'ffffffff00000001', ms: 0.0123 };
    const verbatim: AssetCookResult = { ...base, status: 'verbatim', reason: 'content', error: new LuminaError({ code: 'PACKAGE_INVALID', message: 'bad', file: 'x' }), output: usual(2), identity: 'verbatim:0123456789abcdef:99' };
    const fallback: AssetCookResult = { ...base, status: 'cooked', reason: 'new', output: '/elsewhere/Asset3.lasset', identity: 'fallback:0123456789abcdef:10:20', bytes: new Uint8Array([1, 2, 3]) };
    const failed: AssetCookResult = { ...base, status: 'failed', reason: 'settings', error: new LuminaError({ code: 'COOK_FAILED', message: 'no', file: 'y' }), bytesOut: 0 };
    // Leading zeros would not print back: kept as the string it was.
    const zeros: AssetCookResult = { ...base, status: 'fetched', reason: 'output', output: usual(5), identity: '0000000000000000:007:1', cookedXxh64: 'not-hex' };
    held.set(g(1), { ...cached, key: { key: 'k', parts: {} as never }, warnings: [] });
    held.set(g(2), verbatim).set(g(3), fallback).set(g(4), failed).set(g(5), zeros);
    expect(held.size).toBe(5);
    expect(held.get(g(1))).toEqual(cached);
    expect(held.get(g(2))).toEqual(verbatim);
    expect(held.get(g(3))).toEqual(fallback);
    expect(held.get(g(4))).toEqual(failed);
    expect(held.get(g(5))).toEqual(zeros);
    expect([1, 2, 3, 4, 5].map((n) => held.hasOutput(g(n)))).toEqual([true, true, true, false, true]);
    // identity() is get().identity without the object, in every form.
    expect([1, 2, 3, 4, 5, 9].map((n) => held.identity(g(n)))).toEqual([1, 2, 3, 4, 5, 9].map((n) => held.get(g(n))?.identity));
    expect(held.identity(g(1))).toBe('00ab00cd12345678:4096:567');
    const pakSource = (r?: AssetCookResult) => r && Object.fromEntries(Object.entries({ output: r.output, cookedXxh64: r.cookedXxh64, bytes: r.bytes }).filter(([, v]) => v !== undefined));
    // With the output's size where the identity is packed (asset 1's: the cooked size it names), so the pak writer reads it without a stat.
    expect([1, 2, 3, 4, 5, 9].map((n) => held.pakSource(g(n)))).toEqual([1, 2, 3, 4, 5, 9].map((n) => pakSource(held.get(g(n))) && { ...pakSource(held.get(g(n))), ...(n === 1 ? { cookedSize: 567 } : {}) }));
    // brief() is what a report reads of get(), in every form (reason, error, time, sizes).
    const brief = (r?: AssetCookResult) => r && Object.fromEntries(Object.entries({ status: r.status, reason: r.reason, ms: r.ms, bytesIn: r.bytesIn, bytesOut: r.bytesOut, error: r.error }).filter(([, v]) => v !== undefined));
    expect([1, 2, 3, 4, 5, 9].map((n) => held.brief(g(n)))).toEqual([1, 2, 3, 4, 5, 9].map((n) => brief(held.get(g(n)))));
    expect(held.brief(g(4))).toEqual({ status: 'failed', reason: 'settings', error: failed.error, ms: 3.25, bytesIn: 1234, bytesOut: 0 });
    // By slot (the i-th asset given to the constructor) the same as by GUID, unset slots included.
    expect(assets.map((_, i) => held.briefOfSlot(i))).toEqual(assets.map((a) => held.brief(a.record.guid)));
    expect(assets.map((_, i) => held.hasOutputAt(i))).toEqual(assets.map((a) => held.hasOutput(a.record.guid)));

    held.dropBytes();
    expect(held.get(g(3))!.bytes).toBeUndefined();
    // Set again: replaced, not counted twice, nothing of the old result left (asset 1's path is unusual for asset 3).
    held.set(g(3), cached);
    expect(held.size).toBe(5);
    expect(held.get(g(3))).toEqual(cached);
    held.clear();
    expect(held.size).toBe(0);
    expect(held.has(g(1))).toBe(false);
    expect(held.get(g(1))).toBeUndefined();
  });

  it('packs exactly the identities that print back as they were, and keeps every other form as its string', () => {
    const forms = [
      '0123456789abcdef:0:0',
      'ffffffffffffffff:999999999999999:1',
      // More than 15 digits: still packed when they print back (a safe integer), else kept.
      '0123456789abcdef:9007199254740991:12',
      '0123456789abcdef:9007199254740993:12',
      '0123456789abcdef:1e3:5',
      '0123456789ABCDEF:1:2',
      '0123456789abcdeg:1:2',
      '0123456789abcdef:01:2',
      '0123456789abcdef:1:',
      '0123456789abcdef::1',
      '0123456789abcdef:1:2:3',
      '0123456789abcdef-1:2',
      '0123456789abcde:1:2',
      'verbatim:0123456789abcdef:99',
    ];
    const many = forms.map((_, n) => ({ record: { guid: g(100 + n), virtualPath: `/Game/B/F${n}.lasset` } }));
    const held = new HeldResults(many, cookedDir);
    const hashes = ['0123456789abcdef', 'FFFFFFFFFFFFFFFF', '0123456789abcde', 'x123456789abcdef'];
    forms.forEach((identity, n) => held.set(g(100 + n), { ...base, status: 'cooked', reason: 'new', output: '/o', identity, cookedXxh64: hashes[n % hashes.length] }));
    expect(forms.map((_, n) => held.get(g(100 + n))!.identity)).toEqual(forms);
    expect(forms.map((_, n) => held.identity(g(100 + n)))).toEqual(forms);
    expect(forms.map((_, n) => held.get(g(100 + n))!.cookedXxh64)).toEqual(forms.map((_, n) => hashes[n % hashes.length]));
    expect(held.cookedXxh64Is(g(100), 0x01234567, 0x89abcdef)).toBe(true);
  });

  it('has no slot for an asset outside the cook', () => {
    const held = new HeldResults(assets, cookedDir);
    expect(held.has(g(9))).toBe(false);
    expect(held.get(g(9))).toBeUndefined();
    expect(() => held.set(g(9), { ...base, status: 'cached' })).toThrow(/not an asset of this cook/);
  });
});
