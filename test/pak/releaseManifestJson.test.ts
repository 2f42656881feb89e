/**
 * release.json is compact JSON written in pieces (a million-entry release was 84 MB pretty-printed,
 * one string in memory): it must read back as exactly the manifest that was written.
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readReleaseManifest, writeReleaseManifest, type ReleasePak } from '../../pak/releaseManifest.js';
import { initHash } from '../../src/util/hash.js';

let dir: string;
beforeAll(async () => {
  await initHash();
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'lc-relman-'));
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

const hex = (i: number) => i.toString(16).padStart(16, '0');

describe('release.json', () => {
  it('is compact and reads back as the manifest written, across many entries and paks', async () => {
    const pak = (file: string, n: number, priority: number): ReleasePak => ({
      file,
      priority,
      mountPoint: '/',
      tocHash: hex(priority + 1),
      flags: 0,
      // Sorted by bytes: zero-padded names; a quote and a non-ASCII name escape like JSON.stringify.
      entries: Array.from({ length: n }, (_, i) => ({ path: `/Game/A${String(i).padStart(6, '0')}${i === 3 ? '"q' : i === 5 ? 'Ü' : ''}.lasset`, rawSize: i, xxh64: hex(i * 7), method: (i % 3) as 0 | 1 | 2 })),
    });
    const paks = [pak('Main.pak', 9000, 0), pak('Empty.pak', 0, 1), pak('Small.pak', 2, 2)];
    const file = await writeReleaseManifest(dir, { name: 'v1', paks, registry: new Uint8Array([1, 2]), shaderCache: new Uint8Array([3]) });
    const text = await fsp.readFile(file, 'utf8');
    expect(text.split('\n')).toHaveLength(2); // one line and its newline
    const back = await readReleaseManifest(dir);
    expect(back.paks).toEqual(paks);
    expect(back.name).toBe('v1');
    expect(back.registry).toBe('AssetRegistry.bin');
    expect(back.shaderCache).toMatchObject({ rawSize: 1 });
    expect(JSON.parse(text)).toEqual({ format: 'lumina-release', version: 1, ...JSON.parse(JSON.stringify({ name: 'v1', paks, shaderCache: back.shaderCache, registry: 'AssetRegistry.bin' })) });
  });
});
