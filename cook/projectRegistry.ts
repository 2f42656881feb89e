/**
 * The registry a cook runs against when the caller does not pass one (the watch daemon passes its
 * own, already warm). Interim: a one-shot, uncached scan built from the registry's walker and
 * record readers, until `AssetRegistry` lands; the cook only needs `RootLookup`.
 */
import path from 'node:path';
import type { ProjectConfig } from '../config/index.js';
import { asLuminaError, errors, type LuminaError } from '../src/errors.js';
import { readPackageRecord, readTextRecord } from '../src/registry/readAsset.js';
import type { AssetRecord } from '../src/registry/types.js';
import { walkMount, type WalkedFile } from '../src/registry/walkMount.js';
import type { RootLookup } from './cookRoots.js';

export interface OpenedRegistry {
  registry: RootLookup;
  /** Files that could not become records (corrupt packages, missing sidecars, duplicate GUIDs). */
  problems: LuminaError[];
}

/** Scan every enabled mount of the project. `mintSidecars` is false under --ci. */
export async function openProjectRegistry(config: ProjectConfig, opts: { mintSidecars: boolean }): Promise<OpenedRegistry> {
  const problems: LuminaError[] = [];
  const files: Array<WalkedFile & { mount: string }> = [];
  const dirs = new Set(config.mounts.map((m) => path.resolve(m.dir)));
  for (const m of config.mounts) {
    const skipDirs = new Set([...dirs].filter((d) => d !== path.resolve(m.dir)));
    await walkMount(m.dir, m.alias, {
      skipDirs,
      onFile: (f) => files.push({ ...f, mount: m.alias }),
      onProblem: (p) => problems.push(asLuminaError(p.error, p.file, 'read')),
    });
  }
  files.sort((a, b) => (a.virtualPath < b.virtualPath ? -1 : a.virtualPath > b.virtualPath ? 1 : 0));
  const records: AssetRecord[] = [];
  await Promise.all(
    files.map(async (f) => {
      try {
        const at = { file: f.file, virtualPath: f.virtualPath, mount: f.mount };
        records.push(f.kind === 'package' ? await readPackageRecord(at, f.stat) : (await readTextRecord(at, f.stat, opts.mintSidecars)).record);
      } catch (e) {
        problems.push(asLuminaError(e, f.file, 'read'));
      }
    }),
  );
  records.sort((a, b) => (a.virtualPath < b.virtualPath ? -1 : 1));
  const byGuid = new Map<string, AssetRecord>();
  const byPath = new Map<string, AssetRecord>();
  for (const r of records) {
    const first = byGuid.get(r.guid);
    if (first) {
      problems.push(errors.duplicateGuid(r.guid, first.file, r.file));
      continue;
    }
    byGuid.set(r.guid, r);
    if (r.kind === 'package') byPath.set(r.packagePath, r);
  }
  return {
    registry: { get: (g) => byGuid.get(g), all: () => byGuid.values(), byPackagePath: (p) => byPath.get(p) },
    problems,
  };
}
