/**
 * The registry a cook runs against when the caller does not pass one (the watch daemon passes its
 * own, already warm): open the project's AssetRegistry (its cache makes a re-scan cheap) and scan.
 */
import type { ProjectConfig } from '../config/index.js';
import type { ErrorCode, LuminaLog } from '../src/errors.js';
import type { Logger } from '../src/log/logger.js';
import { AssetRegistry, type ScanProgress } from '../src/registry/AssetRegistry.js';
import type { KeptSources } from '../src/registry/keptSources.js';
import type { ScanReaders } from '../src/registry/readPool.js';
import type { ScanResult } from '../src/registry/types.js';

export interface OpenedRegistry {
  registry: AssetRegistry;
  scan: ScanResult;
  /** Scan problems (corrupt packages, missing sidecars, duplicate GUIDs) with their severity. */
  problems: Array<LuminaLog & { severity: 'error' | 'warning'; guid?: string }>;
}

/**
 * Open and scan. `mintSidecars` is false under --ci: nothing is written into the source tree.
 * `readers`: running threads the scan reads on (a first cook's workers).
 */
export async function openProjectRegistry(
  config: ProjectConfig,
  opts: { mintSidecars: boolean; log?: Logger; onProgress?: (p: ScanProgress) => void; keep?: KeptSources; readers?: ScanReaders },
): Promise<OpenedRegistry> {
  // The cook reports scan problems itself, with --ci deciding their severity.
  const registry = await AssetRegistry.open({ config, log: opts.log, mintSidecars: opts.mintSidecars, logProblems: false });
  const scan = await registry.scan({ onProgress: opts.onProgress, keep: opts.keep, readers: opts.readers });
  const problems = scan.problems.map((p) => {
    const l: OpenedRegistry['problems'][number] = { code: p.code as ErrorCode, message: p.message, severity: p.severity ?? 'error' };
    if (p.guid !== undefined) l.guid = p.guid;
    if (p.file !== undefined) l.file = p.file;
    if (p.hint !== undefined) l.hint = p.hint;
    return l;
  });
  return { registry, scan, problems };
}
