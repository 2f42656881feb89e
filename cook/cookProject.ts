/**
 * The full cook as one call: open a Cooker on the project (config, registry scan, cook cache),
 * cook, close. The CLI's `cook` and `patch` call this; the watch daemon keeps its own Cooker open.
 * See cook/Cooker.ts for what the cook does and what is an error.
 */
import type { ProjectConfig } from '../config/index.js';
import type { ProgressBus } from '../src/log/events.js';
import type { Logger } from '../src/log/logger.js';
import { holdStrictHeap } from '../src/util/leanHeap.js';
import { Cooker, type CookSummary } from './Cooker.js';
import type { RootLookup } from './cookRoots.js';
import type { CookStore } from './CookStore.js';
import type { RemoteCacheSettings } from './remote/RemoteCookCache.js';
import type { ShardSpec } from './remote/shardPlan.js';

export { REGISTRY_ENTRY } from './Cooker.js';
export type { AssetReport, CookProblem, CookSummary } from './Cooker.js';

export interface CookProjectOptions {
  /** The project folder (holding lumina-cook.json); or pass `config`. */
  projectDir?: string;
  config?: ProjectConfig;
  /** CI: missing dependencies and roots are errors, and no sidecar is minted. */
  ci?: boolean;
  /** Also write `Saved/Releases/<release>/` (paks + release.json + AssetRegistry.bin) for later patches. */
  release?: string;
  /** Write paks (default true). */
  paks?: boolean;
  log?: Logger;
  bus?: ProgressBus;
  /** An open registry to reuse; else the project is scanned. */
  registry?: RootLookup;
  /** A shared cache of cook results (remote cache). */
  store?: CookStore;
  /** Write Saved/Reports/cook.html and cook-report.json (default true). */
  report?: boolean;
  /** Ctrl-C: stop after the assets in flight (see FullCookOptions.signal). */
  signal?: AbortSignal;
  /** Without `store`: overrides (the command line's) of the config's `remoteCache`; false: none. */
  remoteCache?: Partial<RemoteCacheSettings> | false;
  /** Cook and publish only this share (`cook --shard i/N`); see Cooker.cook. */
  shard?: ShardSpec;
  /** The shard's cook cost table (Cooker's FullCookOptions.shardCosts). */
  shardCosts?: string;
}

/** Cook a project. Problems are in the summary (`ok` false on an error); only COOK_NO_ROOTS and bad configs throw. */
export async function cookProject(opts: CookProjectOptions): Promise<CookSummary> {
  // One cook in this process: strict (a very large project) waits for the tail after the paks
  // (src/util/leanHeap.ts); cook() releases it.
  holdStrictHeap();
  const cooker = await Cooker.open({ ...opts, prestatOutputs: true });
  try {
    return await cooker.cook({ paks: opts.paks, release: opts.release, report: opts.report, signal: opts.signal, shard: opts.shard, shardCosts: opts.shardCosts });
  } finally {
    cooker.close();
  }
}
