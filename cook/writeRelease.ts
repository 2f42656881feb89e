/**
 * `cook --release NAME`: copy the chunk paks into `Saved/Releases/<NAME>/` and write the release
 * manifest there (pak/releaseManifest.ts reads the copies' TOCs back) with a copy of
 * AssetRegistry.bin, so a later `patch --base` needs only that folder.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { ProjectConfig } from '../config/index.js';
import { copyFileAtomic } from '../src/util/atomicWrite.js';
import { writeRelease } from '../pak/releaseManifest.js';
import type { PakOutput } from './writeChunkPaks.js';

/** Returns the path of the release.json written. */
export async function shipRelease(config: ProjectConfig, name: string, paks: readonly PakOutput[], registry: Uint8Array, shaderCache?: Uint8Array): Promise<string> {
  const dir = path.join(config.releasesDir, name);
  await fsp.mkdir(dir, { recursive: true });
  for (const p of paks) await copyFileAtomic(p.file, path.join(dir, path.basename(p.file)));
  return writeRelease(dir, { name, pakFiles: paks.map((p) => path.basename(p.file)), registry, shaderCache });
}
