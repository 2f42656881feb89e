/**
 * `cook --release NAME`: copy the chunk paks into `Saved/Releases/<NAME>/` and write the release
 * manifest (pak/releaseManifest.ts) with a copy of AssetRegistry.bin, so a later `patch --base`
 * needs only that folder.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { ProjectConfig } from '../config/index.js';
import { errors } from '../src/errors.js';
import { tempPathFor } from '../src/util/atomicWrite.js';
import { describePakFile, writeReleaseManifest } from '../pak/releaseManifest.js';
import type { PakOutput } from './writeChunkPaks.js';

/** Returns the path of the release.json written. */
export async function writeRelease(config: ProjectConfig, name: string, paks: readonly PakOutput[], registry: Uint8Array): Promise<string> {
  const dir = path.join(config.releasesDir, name);
  await fsp.mkdir(dir, { recursive: true });
  const described = [];
  for (const p of paks) {
    const target = path.join(dir, path.basename(p.file));
    const tmp = tempPathFor(target);
    try {
      await fsp.copyFile(p.file, tmp);
      // A shipped release must survive a power cut: the copy reaches the disk before its name does.
      const fh = await fsp.open(tmp, 'r+');
      try {
        await fh.sync();
      } finally {
        await fh.close();
      }
      await fsp.rename(tmp, target);
    } catch (e) {
      await fsp.rm(tmp, { force: true });
      throw errors.ioFailed(target, 'write', e);
    }
    described.push(await describePakFile(target));
  }
  return writeReleaseManifest(dir, { name, paks: described, registry });
}
