/**
 * The watch daemon's start takes the hash of the AssetRegistry.bin the chunk paks hold from the
 * full cook it just ran (Cooker.lastRegistry) instead of encoding the registry of every shipped
 * record again only to hash it (at a million assets ~550k records, seconds and ~100 MB). When that
 * cook did not ship its whole plan, the registry is encoded as before.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Cooker } from '../../cook/Cooker.js';
import { hashHex, initHash, xxh64 } from '../../src/util/hash.js';
import { IncrementalCook } from '../../watch/IncrementalCook.js';
import { tempDir } from './helpers.js';
import { makeProject, readShipped } from './project.js';

beforeAll(initHash);

/** IncrementalCook's private hash of the registry the paks hold. */
const registryHashOf = (c: IncrementalCook): string => (c as unknown as { registryHash: string }).registryHash;

describe('IncrementalCook.reset after a full cook', () => {
  let root: string | undefined;
  let cooker: Cooker | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    cooker?.close();
    cooker = undefined;
    if (root) await fsp.rm(root, { recursive: true, force: true });
    root = undefined;
  });

  it("takes the cook's registry hash, the shipped AssetRegistry.bin's, without encoding the registry", async () => {
    root = await tempDir();
    const p = await makeProject(root);
    cooker = await Cooker.open({ projectDir: p.dir });
    expect((await cooker.cook()).ok).toBe(true);
    const shipped = (await readShipped(p.paks, '/AssetRegistry.bin'))!;
    const encode = vi.spyOn(cooker, 'registryBytes');
    const cook = new IncrementalCook(cooker);
    cook.reset();
    expect(encode).not.toHaveBeenCalled();
    expect(registryHashOf(cook)).toBe(hashHex(xxh64(shipped)));

    // A no-op cook (the registry read back, not written): the same.
    expect((await cooker.cook()).cooked).toBe(0);
    cook.reset();
    expect(encode).not.toHaveBeenCalled();
    expect(registryHashOf(cook)).toBe(hashHex(xxh64(shipped)));
  });

  it('encodes the registry when the last full cook failed', async () => {
    root = await tempDir();
    const p = await makeProject(root);
    cooker = await Cooker.open({ projectDir: p.dir });
    expect((await cooker.cook()).ok).toBe(true);
    const shipped = (await readShipped(p.paks, '/AssetRegistry.bin'))!;
    // The map's hard import turns unreadable: the cook fails and the paks keep the last good registry.
    await fsp.writeFile(path.join(p.content, 'Meshes', 'Rock.lasset'), 'not a package');
    cooker.close();
    cooker = await Cooker.open({ projectDir: p.dir });
    expect((await cooker.cook()).ok).toBe(false);
    expect(cooker.lastRegistry).toBeUndefined();
    const encode = vi.spyOn(cooker, 'registryBytes');
    new IncrementalCook(cooker).reset();
    expect(encode).toHaveBeenCalledTimes(1);
    expect(await readShipped(p.paks, '/AssetRegistry.bin')).toEqual(shipped);
  });
});
