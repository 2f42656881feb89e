import { beforeAll, describe, expect, it } from 'vitest';
import { decodeCookedRegistry, encodeCookedRegistry, type CookedRegistryAsset } from '../../src/format/cookedRegistry.js';
import { initHash, xxh64 } from '../../src/util/hash.js';
import { g } from './helpers.js';

beforeAll(initHash);

const assets: CookedRegistryAsset[] = [
  { guid: g(3), name: 'Rock', className: '/Script/Engine.CStaticMesh', packagePath: '/Game/Props/Rock', flags: 0, dependencies: [{ guid: g(1), type: 0 }, { guid: g(9), type: 1 }] },
  { guid: g(1), name: 'Main', className: '/Script/Engine.CWorld', packagePath: '/Game/Maps/Main', flags: 1, dependencies: [] },
];
const texts = [{ guid: g(0x20), path: '/Game/UI/Menu.rml' }, { guid: g(0x10), path: '/Game/UI/Menu.rcss' }];

/** Re-seal a modified body with a correct trailing hash, so the check under test is the one that fires. */
function reseal(bytes: Uint8Array): Uint8Array {
  const out = bytes.slice();
  new DataView(out.buffer).setBigUint64(out.byteLength - 8, xxh64(out.subarray(0, out.byteLength - 8)), true);
  return out;
}

describe('cooked registry (LREG)', () => {
  it('round-trips, sorted by GUID, and the bytes do not depend on input order', () => {
    const a = encodeCookedRegistry(assets, texts);
    const b = encodeCookedRegistry([...assets].reverse(), [...texts].reverse());
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
    const d = decodeCookedRegistry(a, 'AssetRegistry.bin');
    expect(d.assets.map((x) => x.guid)).toEqual([g(1), g(3)]);
    expect(d.assets[1]).toEqual(assets[0]);
    expect(d.textAssets).toEqual([texts[1], texts[0]]);
    expect(Buffer.from(a.subarray(0, 4)).toString('latin1')).toBe('LREG');
  });

  it('writes non-ASCII names and paths as UTF-8 and refuses anything but 32 lowercase hex digits as a GUID', () => {
    const odd: CookedRegistryAsset[] = [{ guid: g(5), name: 'Fels\u00e9', className: '/Script/Engine.CStaticMesh', packagePath: '/Game/\u5ca9/\uD83D\uDE00', flags: 0x80000001, dependencies: [{ guid: 'abcdef0123456789abcdef0123456789', type: 1 }] }];
    const bytes = encodeCookedRegistry(odd, [{ guid: g(6), path: '/Game/UI/\u00fc.rml' }]);
    expect(Buffer.from(bytes).includes(Buffer.from('/Game/\u5ca9/\uD83D\uDE00', 'utf8'))).toBe(true);
    expect(decodeCookedRegistry(bytes, 'r')).toEqual({ assets: odd, textAssets: [{ guid: g(6), path: '/Game/UI/\u00fc.rml' }] });
    for (const bad of ['ABCDEF0123456789abcdef0123456789', 'abcdef0123456789abcdef012345678', 'abcdef0123456789abcdef01234567890', 'gbcdef0123456789abcdef0123456789', 'abcdef0123456789abcdef012345678\u0130']) {
      expect(() => encodeCookedRegistry([{ ...odd[0], guid: bad }], []), bad).toThrow(RangeError);
      expect(() => encodeCookedRegistry([{ ...odd[0], dependencies: [{ guid: bad, type: 0 }] }], []), bad).toThrow(RangeError);
    }
  });

  it('round-trips an empty registry', () => {
    expect(decodeCookedRegistry(encodeCookedRegistry([], []), 'r')).toEqual({ assets: [], textAssets: [] });
  });

  it('rejects a wrong trailing hash', () => {
    const bytes = encodeCookedRegistry(assets, texts).slice();
    bytes[20] ^= 1;
    expect(() => decodeCookedRegistry(bytes, 'r.bin')).toThrow(expect.objectContaining({ code: 'REGISTRY_INVALID', field: 'xxh64', file: 'r.bin' }));
  });

  it('rejects unsorted assets, bad dependency types and counts larger than the file', () => {
    const good = encodeCookedRegistry(assets, []);
    // Swap the first GUID for one after the second.
    const unsorted = good.slice();
    unsorted.set(Buffer.from(g(5), 'hex'), 12);
    expect(() => decodeCookedRegistry(reseal(unsorted), 'r')).toThrow(
      expect.objectContaining({ code: 'REGISTRY_INVALID', message: `asset[1].guid: ${g(3)} is not sorted after ${g(5)}` }),
    );
    const count = good.slice();
    new DataView(count.buffer).setUint32(8, 1_000_000, true);
    expect(() => decodeCookedRegistry(reseal(count), 'r')).toThrow(expect.objectContaining({ code: 'REGISTRY_INVALID', field: 'assetCount', offset: 8 }));
    // The second asset (Rock) ends with its two dependencies, then textAssetCount and the hash.
    const badType = good.slice();
    badType[good.byteLength - 8 - 4 - 1] = 7;
    expect(() => decodeCookedRegistry(reseal(badType), 'r')).toThrow(
      expect.objectContaining({ code: 'REGISTRY_INVALID', message: 'asset[1].dependency[1].type: dependency type 7 is neither 0 (Hard) nor 1 (Soft)' }),
    );
  });

  it('rejects a bad magic, a newer version and trailing bytes', () => {
    const good = encodeCookedRegistry(assets, texts);
    const magic = good.slice();
    magic[0] = 0;
    expect(() => decodeCookedRegistry(reseal(magic), 'r')).toThrow(expect.objectContaining({ code: 'REGISTRY_INVALID', field: 'magic' }));
    const ver = good.slice();
    ver[4] = 2;
    expect(() => decodeCookedRegistry(reseal(ver), 'r')).toThrow(expect.objectContaining({ code: 'REGISTRY_INVALID', message: 'version: version 2 is not supported (this reads 1)' }));
    const extra = new Uint8Array(good.byteLength + 3);
    extra.set(good.subarray(0, good.byteLength - 8));
    expect(() => decodeCookedRegistry(reseal(extra), 'r')).toThrow(expect.objectContaining({ code: 'REGISTRY_INVALID', message: 'textAssetCount: 3 bytes follow the last text asset' }));
    expect(() => decodeCookedRegistry(good.subarray(0, 10), 'r')).toThrow(expect.objectContaining({ code: 'REGISTRY_INVALID', field: 'header' }));
  });
});
