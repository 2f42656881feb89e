/**
 * The cook engine. One Cooker holds a project's config, its registry, the in-memory cook cache and
 * the last plan; the full cook (`cook`, cookProject), the watch daemon's batches, and later shards
 * and remote caches all go through it, so they cook, cache, report and encode AssetRegistry.bin
 * the same way.
 *
 * - `cookAsset(record)`: one asset: the local cache, else the CookStore (remote cache) when one is
 *   plugged in, else a local cook; the result is journaled in the cook cache as it finishes and
 *   offered to the store. Emits COOK_START / COOK_END; never throws for the asset's own content.
 * - `plan()`: the dependency closure of the roots and each asset's chunk (kept as `lastPlan`).
 * - `cook()`: a full cook: plan, cook every asset, AssetRegistry.bin, stale outputs, chunk paks,
 *   optional release. Problems never throw: each becomes an entry of `summary.problems` (and a
 *   WARNING/ERROR event); `summary.ok` is false when any is an error, and then no pak is written.
 *
 * What is an error (see `cook()`): an asset that failed to cook (under onCookFailure "fail"); under
 * `ci` also missing dependencies, missing roots and scan problems. A verbatim asset is a warning,
 * in the full cook and the daemon alike. Only "nothing to cook" (COOK_NO_ROOTS) throws.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import PQueue from 'p-queue';
import { loadConfig, type ProjectConfig } from '../config/index.js';
import { errors, isLuminaError, type LuminaError, type LuminaLog } from '../src/errors.js';
import { encodeCookedRegistry } from '../src/format/cookedRegistry.js';
import { DependencyType } from '../src/format/packageTypes.js';
import { readPackageTables } from '../src/format/packageReader.js';
import { loadSchemas } from '../src/schemas/loadSchemas.js';
import { ProgressBus } from '../src/log/events.js';
import { createDebugger, silentLogger, type Logger } from '../src/log/logger.js';
import { sweepTempFiles } from '../src/util/atomicWrite.js';
import { hashHex, initHash, xxh64 } from '../src/util/hash.js';
import type { AssetRecord } from '../src/registry/types.js';
import type { ScanChanges, ScanProgress } from '../src/registry/AssetRegistry.js';
import {
  assetCookContext,
  checkCache,
  commitPackageOutcome,
  cookedPathFor,
  cookPackageAsset,
  cookTextAsset,
  commitTextCopy,
  identityOf,
  keyPartsForRecord,
  exportClasses,
  keyForRecord,
  beforeCookedWrite,
  cachedResult,
  trackSweptMarker,
  writeAssetOutput,
  type AssetCookContext,
  type AssetCookResult,
} from './cookAsset.js';
import { CACHE_FILE_NAME, CookCache, emptyHitView, JOURNAL_FILE_NAME, type CacheCheck, type HitView, type RecookReason } from './cookCache.js';
import { CookPool, type JobResult, type WorkerSettings } from './pool/CookPool.js';
import { KeptSources } from '../src/registry/keptSources.js';
import { HeldResults, type AssetReportFields } from './heldResults.js';
import { TEXTURE_CLASS } from './textureClass.js';
import { TEXTURES_IN_FLIGHT } from './texture/index.js';
import { writeCookedRegistry } from './cookedRegistryOutput.js';
import { carriedRegistryInputs, readSweptMarker, registryFromMarker, registryInputsFingerprint, removeStale, shippedFingerprints, SWEPT_MARKER_FILE, writeIfChanged, writeSweptMarker } from './cookedOutputs.js';
import { primaryNameClashes, resolveCookRoots, type ResolvedRoots, type RootLookup } from './cookRoots.js';
import type { CookStore } from './CookStore.js';
import { planCook, type CookPlan, type PlannedAsset } from './planCook.js';
import { carriedPlanKey, planKey, readStoredPlanAs, storePlan, storePlanCarry, type PlanFacts } from './planStore.js';
import { openProjectRegistry } from './projectRegistry.js';
import { DEV_PAK_NAME, writeChunkPaks, type PakOutput } from './writeChunkPaks.js';
import { ProjectLock } from './projectLock.js';
import { RemoteCookCache, type RemoteCacheSettings, type RemoteCacheStats } from './remote/RemoteCookCache.js';
import { RemoteShaderCache } from './remote/RemoteShaderCache.js';
import { COST_TABLE_FILE, encodeCostTable, patchCostTable, shardCostTable, splitForShard, type ShardSplit } from './remote/costTable.js';
import { selectShare, type ShardSpec } from './remote/shardPlan.js';
import { cookShaders, type ShaderCookOptions, type ShaderCookResult } from './shaders/cookShaders.js';
import { knownEntry, MATERIAL_CLASS, type MaterialsMemo, type PackageMaterials } from './shaders/materials.js';
import { ShaderRegistry } from '../src/registry/ShaderRegistry.js';
import { decodeShaderCache, describePermutation, SHADER_CACHE_ENTRY } from '../src/format/shaderCache.js';
import { shipRelease } from './writeRelease.js';
import { leanHeapFor, leanHeapOn, leanHeapStrictFor, releaseStrictHeap } from '../src/util/leanHeap.js';
import { shortRunInlining } from '../src/util/shortRunJit.js';
import { reportFiles, writeCookReport, type ReportFiles } from './report/writeCookReport.js';

export const REGISTRY_ENTRY = 'AssetRegistry.bin';

export interface CookProblem extends LuminaLog {
  severity: 'error' | 'warning';
}

/** One asset of a full cook, for reports: what happened to it and why. */
export interface AssetReport {
  guid: string;
  /** Virtual path (the pak entry path). */
  path: string;
  file: string;
  chunk: string;
  /** How the plan reached it. */
  via: PlannedAsset['via'];
  status: AssetCookResult['status'];
  /** Why it was (re)cooked; absent when cached. */
  reason?: RecookReason;
  ms: number;
  bytesIn: number;
  bytesOut: number;
  /** The error code, when it failed or shipped verbatim. */
  error?: string;
}

export interface CookSummary {
  ok: boolean;
  /** Stopped by `signal` (Ctrl-C) before every asset was cooked; the finished ones are cached. */
  interrupted: boolean;
  /** Packages and text assets in the cook. */
  assets: number;
  cooked: number;
  cached: number;
  /** Taken from the CookStore (remote cache). */
  fetched: number;
  failed: number;
  /** Shipped as their source bytes after failing (onCookFailure "verbatim"). */
  verbatim: number;
  strippedExports: number;
  nulledRefs: number;
  bytesIn: number;
  bytesOut: number;
  ms: number;
  /** Time per phase, ms. */
  phases: { scan: number; plan: number; cook: number; outputs: number; paks: number };
  /** Why assets re-cooked, by reason. */
  recooked: Partial<Record<RecookReason, number>>;
  /** Assets only a soft reference brought in (soft: "include"). */
  softOnly: number;
  /** Soft references left out (soft: "exclude"). */
  softExcluded: number;
  missingDependencies: number;
  chunks: string[];
  paks: PakOutput[];
  /** release.json written for `release`. */
  releaseManifest?: string;
  cookedDir: string;
  problems: CookProblem[];
  /** Every asset of the cook, sorted by GUID. */
  assetReports: AssetReport[];
  /** Saved/Reports/cook.html and cook-report.json of this cook (absent with `report: false` or when they could not be written). */
  report?: ReportFiles;
  /** The remote cache's counts, when one was used. */
  remoteCache?: RemoteCacheStats;
  /** This machine's share, for a sharded cook. */
  shard?: ShardSpec & { assets: number } & Omit<ShardSplit, 'mine'>;
  /** Shader permutations: how many, compiled now, taken from the shader cache, failed; the compiler. */
  shaders: { permutations: number; compiled: number; cached: number; fetched: number; failed: number; compiler: string };
}

/** What `plan()` gives: the plan, the resolved roots, and every record as the plan saw them. */
export type FullPlan = CookPlan & { missingRoots: string[]; rootCount: number; roots: ResolvedRoots['roots']; records: readonly AssetRecord[] };

export interface CookerOpenOptions {
  /** The project folder (holding lumina-cook.json); or pass `config`. */
  projectDir?: string;
  config?: ProjectConfig;
  /** An open, scanned registry to reuse (the daemon's); else the project is scanned here. */
  registry?: RootLookup;
  /** CI: missing dependencies, roots and scan problems are errors; no sidecar is minted. */
  ci?: boolean;
  log?: Logger;
  bus?: ProgressBus;
  /** A shared cache consulted before cooking locally and offered what was cooked. */
  store?: CookStore;
  /**
   * Take the project lock (one writer per project; PROJECT_LOCKED when a cook or daemon holds it).
   * Default true; the watch daemon holds the lock itself and passes false.
   */
  lock?: boolean;
  /**
   * Without `store`: the remote cache of `remoteCache` in the config, with these overrides (the
   * command line's) on top; false: none.
   */
  remoteCache?: Partial<RemoteCacheSettings> | false;
  /**
   * A full cook follows right away (cookProject): while the registry scans, another thread stats
   * the cook cache's outputs for that cook's pass over cache hits (CookCache.prestatOutputs).
   */
  prestatOutputs?: boolean;
}

export interface FullCookOptions {
  /** Write paks (default true). */
  paks?: boolean;
  /** Also write `Saved/Releases/<release>/`. */
  release?: string;
  /** Write the cook report (default true). */
  report?: boolean;
  /**
   * Stop early (Ctrl-C): no new asset starts, those in flight finish (each is journaled in the
   * cook cache as it finishes), and the cook ends as interrupted: not ok, no pak written.
   */
  signal?: AbortSignal;
  /**
   * Sharded CI cook: cook only this machine's deterministic share of the plan's packages and
   * publish all of it (local cache hits too) to the store; no AssetRegistry.bin, no stale-file
   * sweep, no paks. `cook --assemble` on one machine then fetches every package.
   */
  shard?: ShardSpec;
  /**
   * A shard's recorded cook costs (remote/costTable.ts), relative to the project; default
   * `CookCosts.json` at the project root when it is there. Every agent must read the same bytes.
   */
  shardCosts?: string;
}

/**
 * Assets in flight with `cook.concurrency` 0. Most of an asset's cook is synchronous main-thread
 * work, so this is not parallelism but how many textures can wait for the encoder at once: basisu
 * costs ~30 ms to start, and batches of a hundred small textures per process (cook/texture/
 * BasisuBatcher) are what bring the encoder near basisu's own CLI (4 in flight meant batches of
 * 2). Memory stays bounded by the texture budget (`textures.maxMemoryMiB`).
 */
const AUTO_ASSETS_IN_FLIGHT = 256;

/**
 * Bytes of cooked outputs a full cook holds for its paks, so the pak writer does not read back
 * what was just written; past this a 1M-asset cold cook reads the rest back instead of holding
 * gigabytes. 128 MiB holds all of a 100k-asset project's outputs (~62 MB); at a million assets
 * (~0.6 GB of outputs) 256 MiB was an eighth of the peak for reads the page cache serves anyway.
 * A cook in lean-heap mode (>= 250k assets) holds none.
 */
const HELD_OUTPUT_BYTES = 128 << 20;
/**
 * Most bytes of package sources a cold scan keeps for the cook workers (keptSources.ts): all of a
 * 20k project's (~34 MB), the first ones of a larger one; none at all past 250k files read.
 */
const KEPT_SOURCE_BYTES = 64 << 20;

/**
 * At most this many cache misses in a re-cook (and no cook worker running yet) cook on the main
 * thread: a package cooks in milliseconds, a worker thread takes ~0.2 s of CPU to start.
 */
const FEW_MISSES = 8;

/**
 * The cache pass stops queueing misses while a queue holds this many waiting, and goes on when it
 * is down to half: a cold cook misses every asset, and queued all at once a million-asset cook
 * held a waiting job (its closure, p-queue's promise and the cache check) per asset.
 */
const MAX_WAITING = 4096;

export class Cooker {
  readonly config: ProjectConfig;
  readonly registry: RootLookup;
  readonly cache: CookCache;
  /** Shader sources, includes and sidecars under every mount's Shaders/ (re-scanned by each shader cook). */
  readonly shaders: ShaderRegistry;
  readonly ci: boolean;
  readonly log: Logger;
  readonly bus: ProgressBus;
  store: CookStore | undefined;
  /** The plan of the last `plan()` (the last full cook's, or a daemon batch's). */
  lastPlan: CookPlan | undefined;
  /**
   * Where the last full cook's plan came from: the store (cook/planStore.ts), the store's plan
   * carried over files whose changes touch no planning fact ('carried'), or planning.
   */
  lastPlanFrom: 'stored' | 'carried' | 'planned' | undefined;
  /**
   * The xxh64 of the AssetRegistry.bin the last full cook made (written or kept), when every asset
   * of its plan (`plan`, that cook's `lastPlan`) shipped: then it is the registry of that plan's
   * assets, which a daemon's start otherwise encodes again only to hash it (watch/IncrementalCook.ts).
   */
  lastRegistry: { plan: CookPlan; xxh64: bigint } | undefined;
  private readonly ctx: AssetCookContext;
  /** Problems found while opening (cache): reported by the next full cook. */
  private pending: CookProblem[] = [];
  /** The open's scan problems, severity 'error' for content problems and 'warning' for a rebuilt cache; the cook decides. */
  private scanProblems: Array<CookProblem & { guid?: string }> = [];
  private scanMs = 0;
  private lock: ProjectLock | undefined;
  /** Publishes in flight to the store. */
  private publishing = new Set<Promise<void>>();
  private readonly debug: ReturnType<typeof createDebugger>;
  /** The store was opened here (from the config), so close() closes it. */
  private ownsStore = false;
  /** Where the store's warnings go during a full cook (its problem list). */
  private storeProblems: CookProblem[] | undefined;
  /** The cook workers, started by the first package that is not in the cache (or by open() for a cook with no cache). */
  private pool: CookPool | undefined;
  /** A cold cook's scan kept the packages' bytes here: the workers cook them instead of reading each file again. */
  private keptSources: KeptSources | undefined;
  private exitOn: string | undefined;
  /** Tests only: passed to the pool (a worker exits on a file ending with this); workers already started are replaced. */
  set workerExitOn(v: string | undefined) {
    this.exitOn = v;
    void this.pool?.close();
    this.pool = undefined;
  }
  get workerExitOn(): string | undefined {
    return this.exitOn;
  }
  /** Shader materials of the packages cooked since the last shader cook, from the cook's own parse (the shader cook then reads none of them). */
  private readonly materialsSeen = new Map<string, PackageMaterials | string>();

  /** Cook worker threads started so far (replacements of workers that died too). */
  get workersStarted(): number {
    return this.pool?.started ?? 0;
  }
  /** Cook worker threads alive now (a very large full cook stops them after its loop). */
  get workersRunning(): number {
    return this.pool?.running ?? 0;
  }
  /** What a full cook may still hold of its outputs' bytes for the paks (0 outside a full cook: the daemon's batches hold none). */
  private outputBytesBudget = 0;
  /** The shader materials cache as a full cook's last scan left it (its two scans parse it once). */
  private materialsMemo: MaterialsMemo | undefined;
  /** This full cook's plan being stored (planForCook). */
  private planWrite: Promise<void> | undefined;

  private constructor(opts: { config: ProjectConfig; registry: RootLookup; cache: CookCache; shaders: ShaderRegistry; ci: boolean; log: Logger; bus: ProgressBus; store?: CookStore }) {
    this.config = opts.config;
    this.registry = opts.registry;
    this.cache = opts.cache;
    this.shaders = opts.shaders;
    this.ci = opts.ci;
    this.log = opts.log;
    this.bus = opts.bus;
    this.store = opts.store;
    // LUMINA_DEBUG=cook: one line per asset that did not come from the cache, with the reason.
    this.debug = createDebugger('cook', this.log);
    this.ctx = assetCookContext(this.config, this.cache, undefined, (w) => this.report(w, 'warning'));
  }

  /**
   * Load the config (unless given), sweep what a killed run left, open and scan the registry
   * (unless given), and load the cook cache. Throws only for an unusable config.
   */
  static async open(opts: CookerOpenOptions): Promise<Cooker> {
    const log = opts.log ?? silentLogger;
    const bus = opts.bus ?? new ProgressBus();
    const ci = opts.ci ?? false;
    let config = opts.config;
    if (!config) {
      if (!opts.projectDir) throw errors.usage('the cook needs projectDir or config');
      const loaded = loadConfig(opts.projectDir);
      for (const w of loaded.warnings) log.warn({ file: loaded.config.configFile }, w);
      config = loaded.config;
    }
    await initHash();
    const lock = opts.lock === false ? undefined : ProjectLock.acquire(config.intermediatesDir, 'cook');
    // No cook cache (a first cook, a fresh checkout): everything will cook, so the workers start
    // now and load their modules on the other cores while this thread scans, instead of after
    // the plan (~0.3-0.5 s of a cold 20k cook's wall). Not with a remote cache, which may
    // supply every asset.
    const remote = opts.store !== undefined || (opts.remoteCache !== false && (opts.remoteCache?.url ?? config.remoteCache.url));
    let pool: CookPool | undefined;
    let keep: KeptSources | undefined;
    if (!opts.registry && !remote && !fs.existsSync(path.join(config.intermediatesDir, CACHE_FILE_NAME)) && !fs.existsSync(path.join(config.intermediatesDir, JOURNAL_FILE_NAME))) {
      // Before the workers load and this thread scans: the compiles of a first cook are a large
      // part of its CPU (src/util/shortRunJit.ts).
      shortRunInlining(true);
      pool = new CookPool({ workers: config.cook.workers, settings: workerSettings(config) });
      pool.start();
      // One read per source: what the scan reads whole is what the workers cook (keptSources.ts).
      if (process.env.LUMINA_KEEP_SOURCES !== '0') keep = new KeptSources(KEPT_SOURCE_BYTES);
    }
    try {
      return await Cooker.openLocked(opts, config, lock, log, bus, ci, pool, keep);
    } catch (e) {
      void pool?.close();
      lock?.release();
      throw e;
    }
  }

  private static async openLocked(opts: CookerOpenOptions, config: ProjectConfig, lock: ProjectLock | undefined, log: Logger, bus: ProgressBus, ci: boolean, pool: CookPool | undefined, keep?: KeptSources): Promise<Cooker> {
    // What a killed run left half-written beside the paks and caches (Saved/Cooked is swept with
    // the stale outputs by a full cook). Temps of a live writer stay.
    await sweepTempFiles(config.paksDir);
    await sweepTempFiles(config.intermediatesDir);
    await sweepTempFiles(path.dirname(reportFiles(config).html));

    const scanProblems: Array<CookProblem & { guid?: string }> = [];
    let registry = opts.registry;
    let scanMs = 0;
    // Loaded before the scan, which does not need it: a cook about to start stats the cache's
    // outputs on another thread while this one scans (cook/outputPrestat.ts).
    const { cache, warning } = await CookCache.load(path.join(config.intermediatesDir, CACHE_FILE_NAME), config.cookedDir);
    if (!registry && opts.prestatOutputs) cache.prestatOutputs();
    if (!registry) {
      bus.emit({ type: 'START', phase: 'scan' });
      const t0 = performance.now();
      const onProgress = (p: ScanProgress) => {
        // The scan has set the heap's level before its reads (src/util/leanHeap.ts). A very large
        // project's cook is long enough to amortize V8's own inlining budget.
        if (leanHeapOn()) shortRunInlining(false);
        bus.emit({ type: 'SCAN_PROGRESS', ...p });
      };
      // A cold scan reads on the cook workers, started above and idle until the plan.
      const opened = await openProjectRegistry(config, { mintSidecars: !ci, log, onProgress, keep, readers: pool }).catch((e: unknown) => {
        cache.close();
        throw e;
      });
      registry = opened.registry;
      // Severities are decided by the cook, which knows what the roots reach (see classifyScanProblems).
      scanProblems.push(...opened.problems);
      scanMs = performance.now() - t0;
      bus.emit({ type: 'END', phase: 'scan', ms: scanMs, ok: true });
    } else {
      // A caller holding its registry across cooks (the daemon) lives for hours and gathers what
      // its batches leave: strict from the start when it holds a very large project.
      leanHeapStrictFor(assetCount(registry));
    }
    const shaders = await ShaderRegistry.open(config);
    const cooker = new Cooker({ config, registry, cache, shaders, ci, log, bus, store: opts.store });
    // From now on a write into Saved/Cooked first removes its swept marker (cookedOutputs.ts).
    trackSweptMarker(config.cookedDir, path.join(config.intermediatesDir, SWEPT_MARKER_FILE));
    if (!opts.store && opts.remoteCache !== false) {
      cooker.store = RemoteCookCache.fromConfig(config, opts.remoteCache || {}, { onWarning: (l) => cooker.report(l, 'warning', cooker.storeProblems) });
      cooker.ownsStore = cooker.store !== undefined;
    }
    cooker.scanMs = scanMs;
    cooker.pool = pool;
    cooker.keptSources = keep;
    cooker.lock = lock;
    cooker.scanProblems = scanProblems;
    if (warning) cooker.report(warning, 'warning', cooker.pending);
    return cooker;
  }

  /** Stop the cook workers now (a later package cook starts them again). */
  private async stopWorkers(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    await pool?.close();
  }

  /** Close the cook cache's journal (everything journaled stays) and release the project lock. */
  close(): void {
    this.cache.close();
    this.lock?.release();
    this.lock = undefined;
    void this.pool?.close();
    this.pool = undefined;
    if (this.ownsStore) this.store?.close?.();
  }

  /** Report a problem: event, log line, and `into` (a summary's list) when given. */
  report(e: LuminaError | LuminaLog, severity: 'error' | 'warning', into?: CookProblem[]): CookProblem {
    const l: LuminaLog = isLuminaError(e) ? e.toLog() : e;
    const p: CookProblem = { ...l, severity };
    into?.push(p);
    this.bus.emit({ type: severity === 'error' ? 'ERROR' : 'WARNING', log: l });
    this.log[severity === 'error' ? 'error' : 'warn']({ code: l.code, file: l.file, field: l.field, offset: l.offset }, l.message);
    return p;
  }

  /** The plan of the current registry; missing roots are in `resolvedMissing`. */
  plan(): FullPlan {
    // Every record, as this plan saw them: the caller's name clashes and report use the same list.
    const records = this.registry.all();
    const resolved = resolveCookRoots(this.registry, this.config);
    const plan = planCook(this.registry, resolved.roots, { soft: this.config.cook.soft, mountChunks: new Map(this.config.mounts.map((m) => [m.alias, m.chunk])) });
    this.lastPlan = plan;
    return { ...plan, missingRoots: resolved.missing, rootCount: resolved.roots.length, roots: resolved.roots, records };
  }

  /**
   * plan() for a full cook, with the primary-name clashes: the plan stored by an earlier cook when
   * the registry's content, the config and the planning code are the ones it was made from
   * (cook/planStore.ts), else planned here and stored for the next cook.
   */
  private planForCook(): FullPlan & Pick<PlanFacts, 'clashes' | 'fingerprints'> & { carriedFrom?: CarriedFrom; key?: string; factsKey?: string } {
    const registry = this.registry;
    const key = planKey(this.config, registry.contentIdentity);
    const direct = key === undefined ? undefined : readStoredPlanAs(this.config.intermediatesDir, key, registry);
    let stored: (PlanFacts & { carriedFrom?: CarriedFrom }) | undefined = direct?.plan;
    // The key the plan file was stored under: every record's planning facts are those of its
    // content (a carry keeps them all), so it names them across edits that keep them (the report).
    let factsKey = direct?.storedKey;
    this.lastPlanFrom = 'stored';
    const changes = registry.lastScanChanges;
    if (!stored && key !== undefined && changes !== undefined && changes.from !== registry.contentIdentity) {
      // The scan changed files but no planning fact of them: the plan of the content it started
      // from, with today's records, is this content's plan. Carried to the new key for the next cook.
      const carried = carriedPlanKey(this.config, changes);
      const found = carried === undefined ? undefined : readStoredPlanAs(this.config.intermediatesDir, carried, registry);
      if (found) {
        const { plan } = found;
        // The fingerprints name the records' hashes: those of the files changed are new. The same
        // GUIDs ship at the same paths (samePlanningFacts), so `outputs` stays.
        const old = plan.fingerprints;
        const fp = old ? { outputs: old.outputs, registryInputs: carriedInputs(plan, changes, old.registryInputs) } : planFingerprints(plan);
        // What the registry's inputs were before the edits: AssetRegistry.bin is a function of
        // planning facts only, so the one made for them is this content's too (fullCook's outputs).
        // The last cook's plan key and what changed since: its shader result may be this one's (fullCook).
        const changed = changes.files.map((f) => ({ before: f.before!, after: f.after! }));
        stored = { ...plan, fingerprints: fp, ...(old ? { carriedFrom: { registryInputs: old.registryInputs, planKey: carried!, changed } } : {}) };
        // Not the plan again: a carry naming the plan file's own key (planStore.ts).
        storePlanCarry(this.config.intermediatesDir, { from: found.storedKey, to: key, fingerprints: [fp.outputs, fp.registryInputs] });
        factsKey = found.storedKey;
        this.lastPlanFrom = 'carried';
      }
    }
    if (stored) {
      const { roots, missingRoots, clashes, fingerprints, carriedFrom, ...plan } = stored;
      this.lastPlan = plan;
      // Every record only when asked (the report): the plan itself needs only those it names.
      return { ...plan, roots, missingRoots, clashes, fingerprints, carriedFrom, key, factsKey, rootCount: roots.length, get records() { return registry.all(); } };
    }
    const plan = this.plan();
    this.lastPlanFrom = 'planned';
    const clashes = primaryNameClashes({ all: () => plan.records }, this.config);
    if (key === undefined) return { ...plan, clashes };
    const fingerprints = planFingerprints(plan);
    this.planWrite = storePlan(this.config.intermediatesDir, key, { ...plan, clashes, fingerprints });
    return { ...plan, clashes, fingerprints, key, factsKey: key };
  }

  /**
   * Cook a daemon batch's assets at once, `each` told every result. A handful (FEW_MISSES) with no
   * cook worker running cook on this thread, as a re-cook's few misses do: the first edit after a
   * daemon's start on a cook cache or a project switch otherwise waited for a worker to start and
   * load the cook's modules to cook one file (batch 2.5 s median vs 95 ms at load ~22).
   */
  async cookAssets(records: readonly AssetRecord[], problems: CookProblem[], each: (record: AssetRecord, r: AssetCookResult) => void): Promise<void> {
    const onMain = records.length <= FEW_MISSES && this.workersRunning === 0;
    await Promise.all(records.map(async (record) => each(record, await this.cookAsset(record, problems, undefined, onMain))));
  }

  /**
   * Cook one asset: local cache, else the store, else a local cook (offered to the store).
   * The daemon and the full cook both call this; `problems` collects its error or warning.
   */
  async cookAsset(record: AssetRecord, problems?: CookProblem[], checked?: CacheCheck & { hit: false }, onMain = false): Promise<AssetCookResult> {
    this.bus.emit({ type: 'COOK_START', asset: record.virtualPath, file: record.file });
    const check = checked ?? checkCache(record, this.ctx);
    let res: AssetCookResult | undefined;
    if (!check.hit && this.store) res = await this.fetchFromStore(record, check.reason);
    res ??= record.kind === 'package' ? await this.cookPackage(record, check, onMain) : await cookTextAsset(record, this.ctx, check);
    return this.settle(record, res, problems);
  }

  /**
   * What every asset's result goes through once it is known (cookAsset's, and a full cook's batch
   * of results from the cook workers): its shader materials kept for the shader cook, its bytes
   * held within the budget, its problems reported, offered to the store, COOK_END.
   */
  private settle(record: AssetRecord, res: AssetCookResult, problems: CookProblem[] | undefined): AssetCookResult {
    if (res.materials) {
      this.materialsSeen.set(record.guid, knownEntry(res.materials));
      delete res.materials;
    }
    if (res.bytes !== undefined) {
      if (res.bytes.byteLength <= this.outputBytesBudget) this.outputBytesBudget -= res.bytes.byteLength;
      else res.bytes = undefined;
    }
    if (res.status !== 'cached') this.debug?.('re-cooked', { asset: record.packagePath, reason: res.reason, status: res.status });
    if (res.status === 'failed') this.report(res.error!, this.config.cook.onCookFailure === 'fail' || !res.output ? 'error' : 'warning', problems);
    else if (res.status === 'verbatim') this.report({ ...res.error!.toLog(), message: `shipped verbatim: ${res.error!.message}` }, 'warning', problems);
    for (const w of res.warnings ?? []) this.report(w, 'warning', problems);
    // An RGBA8 fallback comes back without a key or entry: it is neither cached nor offered.
    if (res.status === 'cooked') this.offer(record, res);
    this.emitCookEnd(record, res);
    return res;
  }

  /** The COOK_END event of an asset's result (a queued cook's or a cache hit's). */
  private emitCookEnd(record: AssetRecord, res: AssetCookResult): void {
    this.bus.emit({
      type: 'COOK_END',
      asset: record.virtualPath,
      file: record.file,
      cached: res.status === 'cached',
      status: res.status,
      reason: res.reason,
      ms: res.ms,
      bytesIn: res.bytesIn,
      bytesOut: res.bytesOut,
    });
  }

  /**
   * The asset's cached result when its cache entry still holds (with cookAsset's events), else the
   * miss and why. Synchronous: a full cook checks every asset this way first and queues only the
   * misses, so a no-op costs a stat per asset, not a queued task and its promises. `slim`: the
   * result without its entry and key (what a full cook's held results drop anyway).
   */
  private cachedAsset(record: AssetRecord, slim: boolean): AssetCookResult | (CacheCheck & { hit: false }) {
    const output = cookedPathFor(this.config.cookedDir, record);
    const check = checkCache(record, this.ctx, output);
    if (!check.hit) return check;
    const res = cachedResult(check.entry, output, 0, slim);
    if (this.bus.listening) {
      this.bus.emit({ type: 'COOK_START', asset: record.virtualPath, file: record.file });
      this.emitCookEnd(record, res);
    }
    return res;
  }

  /**
   * cachedAsset for a full cook's held results, without building a result: the cache record's
   * numbers and hash bytes go into `held` as they are (CookCache.probe, HeldResults.setCachedHit).
   * False when it could not prove a hit: cachedAsset then decides (hit or miss, and why).
   */
  private cachedHit(record: AssetRecord, held: HeldResults, v: HitView): boolean {
    const output = cookedPathFor(this.config.cookedDir, record);
    const ctx = this.ctx;
    if (!this.cache.probe(record.guid, (texture, classes) => keyPartsForRecord(record, ctx, texture, record.hash, classes), record.virtualPath.slice(1), output, v)) return false;
    if (!held.setCachedHit(record.guid, v)) return false;
    if (this.bus.listening) {
      this.bus.emit({ type: 'COOK_START', asset: record.virtualPath, file: record.file });
      this.bus.emit({ type: 'COOK_END', asset: record.virtualPath, file: record.file, cached: true, status: 'cached', reason: undefined, ms: 0, bytesIn: v.sourceSize, bytesOut: v.cookedSize });
    }
    return true;
  }

  /**
   * A package's local cook: on a cook worker (cook/pool), written and journaled here. Textures for
   * basisu stay on this thread, where the encoder runners batch them across the whole cook, and so
   * does the caller's handful of misses when `onMain` (no worker to start for them).
   */
  private async cookPackage(record: AssetRecord, check: CacheCheck, onMain: boolean): Promise<AssetCookResult> {
    if (check.hit || onMain || (this.config.textures.encoder === 'basis' && record.className === TEXTURE_CLASS)) return cookPackageAsset(record, this.ctx, check);
    const t0 = performance.now();
    this.pool ??= this.newPool();
    // The worker overwrites the output in place: its old entry goes first (see cookCache.ts).
    this.cache.delete(record.guid);
    const output = cookedPathFor(this.config.cookedDir, record);
    // The worker writes into Saved/Cooked: the swept marker goes first (cookedOutputs.ts).
    beforeCookedWrite(output);
    const r = await this.pool.cook(record.file, output, record.size, record.packagePath, this.keptSources?.take(record.file));
    // A package holding a texture its class did not announce (needsMain; `copied` answers text jobs only): cooked here after all.
    if (!('outcome' in r)) return cookPackageAsset(record, this.ctx, check);
    return commitPackageOutcome(record, this.ctx, check.reason, r.outcome, t0, r.written);
  }

  private newPool(): CookPool {
    return new CookPool({ workers: this.config.cook.workers, settings: workerSettings(this.config), exitOn: this.exitOn });
  }

  private workerSettings(): WorkerSettings {
    return workerSettings(this.config);
  }

  /** Offer a cook to the store (tracked until flushStore). */
  private offer(record: AssetRecord, res: AssetCookResult): void {
    if (!this.store || !res.key || !res.entry || !res.output) return;
    const p = this.store.publish({ record, key: res.key, output: res.output, entry: res.entry }).catch(() => {});
    this.publishing.add(p);
    void p.finally(() => this.publishing.delete(p));
  }

  /** A verified result from the store, written as the output and cached; undefined on a miss. */
  private async fetchFromStore(record: AssetRecord, reason: RecookReason): Promise<AssetCookResult | undefined> {
    const t0 = performance.now();
    // The schema part of the key needs the export classes: from the last cook, else the tables.
    let classes = this.cache.peek(record.guid)?.classes;
    if (!classes && this.ctx.schemas.size > 0) {
      try {
        classes = exportClasses(await readPackageTables(record.file));
      } catch {
        return undefined; // cook it here, which reports what is wrong with the file
      }
    }
    const key = keyForRecord(record, this.ctx, this.cache.peek(record.guid)?.texture, record.hash, classes);
    const got = await this.store!.fetch({ record, key }).catch(() => undefined);
    if (!got) return undefined;
    const output = cookedPathFor(this.config.cookedDir, record);
    const realKey = got.texture ? keyForRecord(record, this.ctx, true, record.hash, classes) : key;
    try {
      this.cache.delete(record.guid);
      const written = writeAssetOutput(output, got.bytes);
      const entry = this.cache.set(record.guid, realKey, {
        cookedFile: record.virtualPath.slice(1),
        rawSize: got.rawSize,
        xxh64: got.xxh64,
        cookedXxh64: written.cookedXxh64,
        sourceSize: record.size,
        strippedExports: got.strippedExports,
        nulledRefs: got.nulledRefs,
        texture: got.texture,
        // The time it took where it was cooked: what balances the next sharded cook.
        ...(got.cookMs !== undefined ? { cookMs: got.cookMs } : {}),
        ...(classes ? { classes } : {}),
      }, written);
      return {
        status: 'fetched',
        reason,
        output,
        identity: identityOf(entry),
        cookedXxh64: written.cookedXxh64,
        bytes: got.bytes,
        key: realKey,
        entry,
        bytesIn: record.size,
        bytesOut: got.bytes.byteLength,
        strippedExports: got.strippedExports,
        nulledRefs: got.nulledRefs,
        ms: performance.now() - t0,
      };
    } catch {
      return undefined; // cook it here instead
    }
  }

  /**
   * Every shader permutation the given shipped packages' materials ask for (plus shaders.global),
   * compiled or taken from the shader cache: one ShaderCache.bin per chunk and one of everything.
   * Re-scans the Shaders/ folders first (a stat per file). Shader problems are errors in `problems`.
   * `prune` (default true) and `packagesIdentity` are cookShaders' (cook/shaders/cookShaders.ts);
   * `shard` makes this machine compile only its share of the permutations.
   */
  async cookShaders(
    packages: ReadonlyArray<{ record: AssetRecord; chunk: string }>,
    chunks: readonly string[],
    problems?: CookProblem[],
    { prune = true, shard, packagesIdentity, carried }: { prune?: boolean; shard?: ShardSpec; packagesIdentity?: string; carried?: ShaderCookOptions['carried'] } = {},
  ): Promise<ShaderCookResult> {
    const scan = this.shaders.scan();
    for (const p of scan.problems) this.report(p, 'warning', problems);
    // The remote cache holds permutations too (read after a local miss, written with writes on).
    const remote = this.store instanceof RemoteCookCache ? new RemoteShaderCache(this.store) : undefined;
    const share = shard && ((texts: readonly string[]) => new Set(selectShare(texts, shard, (t) => t)));
    // The remote cache's warnings about permutations go where this cook's problems go.
    const before = this.storeProblems;
    this.storeProblems = problems ?? before;
    try {
      return await cookShaders({
        config: this.config,
        shaders: this.shaders,
        packages,
        chunks,
        prune,
        remote,
        share,
        log: this.log,
        report: (e) => this.report(e, 'error', problems),
        knownMaterials: this.materialsSeen,
        materials: this.materialsMemo,
        packagesIdentity,
        carried,
      });
    } finally {
      this.storeProblems = before;
      // Taken into the materials table (ShaderMaterials.bin) by that scan.
      this.materialsSeen.clear();
    }
  }

  /**
   * cookShaders with its reports dropped and nothing pruned: only fills the shader cache. Never
   * rejects; says what it compiled (describePermutation texts).
   */
  private async warmShaderCache(packages: ReadonlyArray<{ record: AssetRecord; chunk: string }>, chunks: readonly string[], signal?: AbortSignal): Promise<string[]> {
    try {
      this.shaders.scan();
      // Only the materials' own packages are read here, beside the cook (the cook workers return
      // the rest); a material export in a package of another class is compiled after the cook.
      const early = { knownMaterials: this.materialsSeen, materialClassOnly: true, materials: this.materialsMemo };
      return (await cookShaders({ config: this.config, shaders: this.shaders, packages, chunks, prune: false, log: silentLogger, report: () => {}, signal, ...early })).compiledList;
    } catch {
      // The shader cook after the assets meets the same problem and reports it.
      return [];
    }
  }

  /** AssetRegistry.bin of the given assets, as every pak (chunk or dev) carries it. */
  registryBytes(assets: Iterable<AssetRecord>): Uint8Array {
    const packages: AssetRecord[] = [];
    const texts: { guid: string; path: string }[] = [];
    for (const r of assets) {
      if (r.kind === 'package') packages.push(r);
      else texts.push({ guid: r.guid, path: r.virtualPath });
    }
    return encodeCookedRegistry(packages, texts);
  }

  /** A full cook: see the module comment. */
  async cook(opts: FullCookOptions = {}): Promise<CookSummary> {
    this.outputBytesBudget = HELD_OUTPUT_BYTES;
    this.materialsMemo = {};
    try {
      return await this.fullCook(opts);
    } finally {
      this.outputBytesBudget = 0;
      this.materialsMemo = undefined;
      // The plan's store, started by the plan phase, is done before the cook returns.
      await this.planWrite;
      this.planWrite = undefined;
    }
  }

  private async fullCook(opts: FullCookOptions): Promise<CookSummary> {
    const started = performance.now();
    const { config, log, bus, ci } = this;
    if (opts.release !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(opts.release)) {
      throw errors.usage(`release name "${opts.release}" must be letters, digits, ".", "_" and "-"`, 'e.g. --release 1.0.0');
    }
    const problems: CookProblem[] = this.pending;
    this.pending = [];
    this.lastRegistry = undefined;
    const ciSeverity = ci ? 'error' : 'warning';
    // Before anything is written into Saved/Cooked: did the last sweep leave it clean? (cookedOutputs.ts)
    const swept = readSweptMarker(config.cookedDir, config.intermediatesDir);
    // Or was there nothing in it yet (a first cook)? Then, under the project lock, whatever is there at
    // the end this cook wrote: the outputs of its results (see the sweep below).
    const startedEmpty = swept === undefined && folderEmpty(config.cookedDir);
    // Read the schemas folder again: a daemon's full cook picks up schema edits (SCHEMA_INVALID throws, like a bad config).
    if (config.schemasDir) {
      this.ctx.schemas = loadSchemas(config.schemasDir);
      this.pool?.updateSettings(this.workerSettings());
    }

    // A very large registry: V8 keeps its heap near what is live (src/util/leanHeap.ts).
    const registrySize = assetCount(this.registry);
    // Lean, not strict, decides what this cook holds and keeps running: the registry (~1 GiB at a
    // million assets) is what a large project's peak stands on, whatever this cook has to do,
    // and both cost only in proportion to what cooks (a no-op holds and starts nothing).
    const lean = leanHeapFor(registrySize);
    if (lean) {
      log.debug({ assets: registrySize }, 'lean heap mode');
      // A million-asset cook's outputs (~0.6 GB) never fit the budget: the pak writer reads most of
      // them back anyway, and the first 128 MiB held from the loop's start to the paks' end stood
      // on top of the cook's peak (see README, million assets).
      this.outputBytesBudget = 0;
    }
    const planStart = performance.now();
    const plan = this.planForCook();
    const cookPlan = this.lastPlan;
    // What does not ship is not cooked: its kept bytes go now.
    this.keptSources?.retain(plan.packages.map((a) => a.record.file));
    // Failure semantics (the same in every mode, --ci only adds to them):
    // - a root whose file is there but cannot be read, a text asset that cannot be read (text
    //   assets always ship) and a missing Hard dependency are errors: the paks would lack content
    //   the roots reach, so the last good paks stay;
    // - other scan problems (a package nothing reaches, sidecars), Soft misses and roots that name
    //   no file are warnings, errors under --ci.
    const scanProblems = this.scanProblems;
    this.scanProblems = [];
    const rootFiles = new Set(plan.missingRoots.flatMap((r) => rootFileCandidates(config, r)));
    // A package that cannot be read leaves its GUID unknown, so the referrer's error is all the
    // roots see: name the broken file there, exactly when the registry knew its GUID, else as a lead.
    const hardMissing = new Set(plan.missing.filter((m) => m.type === DependencyType.Hard).map((m) => m.guid));
    for (const p of scanProblems) {
      const reached = p.guid !== undefined && hardMissing.has(p.guid);
      const severity = p.severity === 'warning' && !reached ? 'warning' : reached || (p.file !== undefined && (rootFiles.has(path.resolve(p.file)) || unreadableText(p))) ? 'error' : ciSeverity;
      const { severity: _, guid: __, ...log } = p;
      this.report(log, severity, problems);
    }
    for (const m of plan.missingRoots) {
      const unreadable = rootFileCandidates(config, m).some((f) => scanProblems.some((p) => p.file !== undefined && path.resolve(p.file) === f));
      const e = errors.assetNotFound(m, { file: config.configFile, ...declaredBy(config, m) });
      this.report(unreadable ? { ...e.toLog(), hint: 'its file is there but cannot be read (see the error naming it)' } : e, unreadable ? 'error' : ciSeverity, problems);
    }
    if (plan.rootCount === 0) throw errors.cookNoRoots(config.configFile);
    const unreadablePackages = scanProblems.filter((p) => p.file !== undefined && /\.lasset$/i.test(p.file) && p.code !== 'DUPLICATE_GUID');
    for (const m of plan.missing) {
      const e = errors.dependencyMissing(m.referrer.file, m.guid).toLog();
      const had = scanProblems.find((p) => p.guid === m.guid);
      if (had) e.hint = `the package that had it cannot be read: ${had.file} (${had.code})`;
      else if (unreadablePackages.length) {
        const names = unreadablePackages.slice(0, 3).map((p) => p.file).join(', ');
        e.hint = `it may be in a package that cannot be read: ${names}${unreadablePackages.length > 3 ? ` and ${unreadablePackages.length - 3} more` : ''}`;
      }
      this.report(e, m.type === DependencyType.Hard ? 'error' : ciSeverity, problems);
    }
    for (const c of plan.clashes) {
      for (const r of c.records.slice(1)) this.report(errors.primaryNameDuplicate(r.file, c.name, c.records[0].packagePath), ciSeverity, problems);
    }
    if (plan.softExcluded.length) log.info({ count: plan.softExcluded.length }, 'soft references left out of the cook (cook.soft is "exclude")');
    if (plan.softOnly) log.info({ count: plan.softOnly }, 'assets included only through soft references');
    const planMs = performance.now() - planStart;

    // ---- cook every asset ----
    if (opts.shard && !(this.store instanceof RemoteCookCache && this.store.writing)) {
      throw errors.usage('a sharded cook publishes to a remote cache, but none is set to write', 'set remoteCache.url in lumina-cook.json or pass --remote-cache <url>');
    }
    // A shard cooks only its share of the packages; text assets are copied by the assembling cook.
    const split = opts.shard ? splitForShard(plan.packages, opts.shard, shardCostTable(config.projectDir, opts.shardCosts)) : undefined;
    const all: PlannedAsset[] = split ? split.mine : [...plan.packages, ...plan.textAssets];
    // Strict when this cook will build a very large set of results: the packages it cooks, at most
    // those the cook cache cannot have (a no-op or one-file cook of a million assets stays lean:
    // strict's small young generation made that no-op 8x slower per asset).
    if (leanHeapStrictFor((split ? split.mine.length : plan.packages.length) - this.cache.size)) log.debug({ assets: registrySize }, 'strict lean heap mode');
    // At most this many entries are new to the cook cache (a cold cook: all of them).
    this.cache.expectEntries(all.length - this.cache.size);
    // What each asset's cook left, held until the paks are written: packed as it is stored
    // (cook/heldResults.ts; a shard keeps whole results: it publishes its cache hits from these).
    const shardResults = opts.shard ? new Map<string, AssetCookResult>() : undefined;
    const held = shardResults ? undefined : new HeldResults(all, config.cookedDir);
    const results: ResultStore = shardResults ?? held!;
    const summary: CookSummary = {
      ok: true,
      interrupted: false,
      assets: all.length,
      cooked: 0,
      cached: 0,
      fetched: 0,
      failed: 0,
      verbatim: 0,
      strippedExports: 0,
      nulledRefs: 0,
      bytesIn: 0,
      bytesOut: 0,
      ms: 0,
      phases: { scan: Math.round(this.scanMs), plan: Math.round(planMs), cook: 0, outputs: 0, paks: 0 },
      recooked: {},
      softOnly: plan.softOnly,
      softExcluded: plan.softExcluded.length,
      missingDependencies: plan.missing.length,
      chunks: plan.chunks,
      paks: [],
      cookedDir: config.cookedDir,
      problems,
      assetReports: [],
      ...(opts.shard && split ? { shard: { ...opts.shard, assets: all.length, costTable: split.costTable, recorded: split.recorded, assignment: split.assignment, load: split.load } } : {}),
      shaders: { permutations: 0, compiled: 0, cached: 0, fetched: 0, failed: 0, compiler: 'none' },
    };
    this.scanMs = 0;
    this.storeProblems = problems;
    bus.emit({ type: 'START', phase: 'cook', total: all.length });
    const cookStart = performance.now();
    // Shader compiles are child processes that mostly wait: start them from the plan while the
    // assets cook, so the shader cook after the assets (over what actually ships, reporting its
    // problems) finds them in the shader cache. A package that then fails only warmed that cache.
    // The material packages cook first and the compiles start when they are done: the workers
    // return each package's materials, so this thread reads none of them (materialsSeen).
    let warmCompiled: string[] = [];
    let warmShaders: Promise<string[]> | undefined;
    // Not with a store: the shader cook after the assets may fetch from it what this would compile.
    const startWarm = () => {
      if (!opts.shard && !this.store && !opts.signal?.aborted) warmShaders ??= this.warmShaderCache(plan.packages, plan.chunks, opts.signal);
    };
    const isMaterial = (a: PlannedAsset) => a.record.className === MATERIAL_CLASS;
    /** The packages cooked (not cache hits), for the cost table. */
    const missed: string[] = [];
    let materialsLeft = 0;
    let materialsQueued = 0;
    // Nothing to cook (a no-op): nothing for the early compiles to overlap, and the shader cook
    // after the assets does the same work (material scan, asks, keys) once instead of twice.
    let queued = 0;
    const queue = new PQueue({ concurrency: config.cook.concurrency || AUTO_ASSETS_IN_FLIGHT });
    // Textures for basisu cook on this thread and mostly wait for the encoder's batches: they get
    // their own, larger cap, so the batches are large and the packages on the workers keep going.
    // Their memory is bounded by the texture budget (textures.maxMemoryMiB), taken before decoding.
    const textureQueue = new PQueue({ concurrency: config.cook.concurrency || TEXTURES_IN_FLIGHT });
    const onMain = (r: AssetRecord) => config.textures.encoder === 'basis' && r.className === TEXTURE_CLASS;
    // A package for the cook workers (a first cook's usual asset) goes to the pool without a queued
    // task, a promise or a closure of its own: at most `inFlight` at once, as many as the queue
    // above would run, the rest waiting in `backlog`, and the results come back a batch at a time
    // (onPooled), each settled and held right there. The others (text assets, basisu textures, a
    // few packages of a re-cook cooked on this thread, anything with a store) take the queues.
    const pooledWindow = config.cook.concurrency || AUTO_ASSETS_IN_FLIGHT;
    const pooling = held !== undefined && !this.store;
    const backlog: Array<PooledWait | undefined> = [];
    let backlogHead = 0;
    /** Pooled jobs in flight, by token; tokens are reused (`freeTokens`). */
    const flight: Array<PooledJob | undefined> = [];
    const freeTokens: number[] = [];
    let inFlight = 0;
    let pooledFailure: { error: unknown } | undefined;
    let pooledIdle: (() => void) | undefined;
    let backlogRoom: (() => void) | undefined;
    const submitPooled = (w: PooledWait): void => {
      const record = w.a.record;
      if (bus.listening) bus.emit({ type: 'COOK_START', asset: record.virtualPath, file: record.file });
      this.pool ??= this.newPool();
      // The worker overwrites the output in place: its old entry goes first (see cookCache.ts).
      this.cache.delete(record.guid);
      const output = cookedPathFor(config.cookedDir, record);
      // The worker writes into Saved/Cooked: the swept marker goes first (cookedOutputs.ts).
      beforeCookedWrite(output);
      const token = freeTokens.length > 0 ? freeTokens.pop()! : flight.length;
      flight[token] = { a: w.a, hit: w.hit, output, t0: performance.now(), material: w.material };
      inFlight++;
      if (record.kind === 'text') this.pool.submit(record.file, output, record.size, undefined, undefined, onPooled, token, true);
      else this.pool.submit(record.file, output, record.size, record.packagePath, this.keptSources?.take(record.file), onPooled, token);
    };
    // Never throws (it runs on a worker's message too): a job that cannot be sent (the swept
    // marker cannot be removed) ends the pooled cooks, and the cook throws it after the loop. Not
    // re-entered: a closed pool answers a submit at once (onPooled, which pumps again); the loop
    // below goes on with what that left.
    let pumping = false;
    const pump = (): void => {
      if (pumping) return;
      pumping = true;
      try {
        while (inFlight < pooledWindow && backlogHead < backlog.length) {
          const w = backlog[backlogHead]!;
          backlog[backlogHead++] = undefined;
          submitPooled(w);
        }
      } catch (e) {
        pooledFailure ??= { error: e };
        backlog.length = 0;
        backlogHead = 0;
      } finally {
        pumping = false;
      }
      if (backlogHead > 0 && backlogHead === backlog.length) {
        backlog.length = 0;
        backlogHead = 0;
      }
      if (backlogRoom && backlog.length - backlogHead < MAX_WAITING / 2) {
        backlogRoom();
        backlogRoom = undefined;
      }
      if (pooledIdle && inFlight === 0 && backlogHead === backlog.length) {
        pooledIdle();
        pooledIdle = undefined;
      }
    };
    /** A cooked asset's result, taken into the results and the summary (every path below). */
    const took = (record: AssetRecord, res: AssetCookResult): void => {
      results.set(record.guid, res);
      if (record.kind === 'package') missed.push(record.guid);
      tally(summary, res);
    };
    /** An asset done, cooked or failed: the last material one starts the warm shader compiles. */
    const assetDone = (material: boolean): void => {
      if (material && --materialsLeft === 0) startWarm();
    };
    const finishPooled = (job: PooledJob, r: JobResult): void => {
      const record = job.a.record;
      if ('copied' in r) {
        try {
          took(record, this.settle(record, commitTextCopy(record, this.ctx, job.hit.reason, r.copied, r.written, job.output, job.t0), problems));
        } finally {
          assetDone(job.material);
        }
        return;
      }
      if ('needsMain' in r) {
        // A package holding a texture its class did not announce (basisu): cooked on this thread after all.
        void queue.add(async () => {
          try {
            took(record, this.settle(record, await cookPackageAsset(record, this.ctx, job.hit), problems));
          } finally {
            assetDone(job.material);
          }
        });
        return;
      }
      try {
        took(record, this.settle(record, commitPackageOutcome(record, this.ctx, job.hit.reason, r.outcome, job.t0, r.written, job.output), problems));
      } finally {
        assetDone(job.material);
      }
    };
    /** A batch's results (JobSink): settled in one go, their journal changes written as one frame. */
    const onPooled = (tokens: readonly number[], outs: readonly JobResult[]): void => {
      this.cache.holdJournal();
      try {
        for (let k = 0; k < tokens.length; k++) {
          const token = tokens[k];
          const job = flight[token]!;
          flight[token] = undefined;
          freeTokens.push(token);
          inFlight--;
          try {
            finishPooled(job, outs[k]);
          } catch (e) {
            pooledFailure ??= { error: e };
          }
        }
      } finally {
        try {
          this.cache.flushJournal();
        } catch (e) {
          pooledFailure ??= { error: e };
        }
      }
      pump();
    };
    const stop = () => {
      queue.clear();
      textureQueue.clear();
      backlog.length = 0;
      backlogHead = 0;
      pump();
    };
    opts.signal?.addEventListener('abort', stop, { once: true });
    try {
      // Most assets cook without touching the event loop (sync reads, writes and small DEFLATEs all
      // resolve as microtasks), so signals, timers and sockets would wait for the whole cook:
      // give the loop a turn every ~20 ms.
      let turn = performance.now();
      // Set for the few misses of a re-cook queued at the end of the pass (below).
      let fewOnMain = false;
      const enqueue = (a: PlannedAsset, hit: CacheCheck & { hit: false }) => {
        const material = isMaterial(a);
        if (material) {
          materialsLeft++;
          materialsQueued++;
        }
        queued++;
        // Text assets too: their copies (a read, a write and a hash each) were ~0.1 s of this
        // thread in a first cook of the 20k sample, queued through p-queue one promise each.
        if (pooling && !fewOnMain && (a.record.kind === 'text' || !onMain(a.record))) {
          if (pooledFailure) return;
          backlog.push({ a, hit, material });
          pump();
          return;
        }
        void (onMain(a.record) ? textureQueue : queue).add(async () => {
          try {
            if (performance.now() - turn > 20) {
              await new Promise((r) => setImmediate(r));
              turn = performance.now();
              if (opts.signal?.aborted) return;
            }
            took(a.record, await this.cookAsset(a.record, problems, hit, fewOnMain));
          } finally {
            assetDone(material);
          }
        });
      };
      // The first misses wait for the end of the pass while there are few of them and no cook
      // worker is running yet (see below); past FEW_MISSES they all queue as they are found.
      let waiting: Array<{ a: PlannedAsset; hit: CacheCheck & { hit: false } }> | undefined = this.pool ? undefined : [];
      // A hit read straight from its cache record into the held results (the usual case of a no-op).
      const hitView = held ? emptyHitView() : undefined;
      // An empty cook cache (a first cook) has nothing to check: every asset is new, found
      // without a lookup, a key-parts closure and an output path per asset. Entries it gains
      // during the pass are of assets already past it.
      const empty = this.cache.size === 0;
      for (const a of cookOrder(all, isMaterial)) {
        // The pass over cache hits is synchronous: it gives the loop its turns too (a daemon's
        // server, Ctrl-C), so a million-asset no-op does not hold them for seconds.
        if (performance.now() - turn > 20) {
          await new Promise((r) => setImmediate(r));
          turn = performance.now();
          if (opts.signal?.aborted) break;
        }
        // What the cache still holds is taken here and now; only the misses queue.
        if (!empty && hitView && this.cachedHit(a.record, held!, hitView)) {
          summary.cached++;
          summary.bytesIn += hitView.sourceSize;
          summary.bytesOut += hitView.cookedSize;
          summary.strippedExports += hitView.strippedExports;
          summary.nulledRefs += hitView.nulledRefs;
          continue;
        }
        const hit = empty ? NEW_ASSET : this.cachedAsset(a.record, !opts.shard);
        if (!('hit' in hit)) {
          results.set(a.record.guid, hit);
          tally(summary, hit);
          continue;
        }
        if (!waiting) {
          const q = onMain(a.record) ? textureQueue : queue;
          if (q.size >= MAX_WAITING) {
            await q.onSizeLessThan(MAX_WAITING / 2);
            turn = performance.now();
            if (opts.signal?.aborted) break;
          }
          if (backlog.length - backlogHead >= MAX_WAITING) {
            await new Promise<void>((r) => (backlogRoom = r));
            turn = performance.now();
            if (opts.signal?.aborted) break;
          }
          enqueue(a, hit);
        } else if (waiting.push({ a, hit }) > FEW_MISSES) {
          for (const m of waiting) enqueue(m.a, m.hit);
          waiting = undefined;
        }
      }
      // A handful of misses in a re-cook (a one-file change) cook on this thread: starting a cook
      // worker (a thread that loads the cook's modules, ~0.2 s of CPU) costs more than they do.
      // A first cook, however small, cooks on the workers.
      if (waiting?.length && !opts.signal?.aborted) {
        fewOnMain = summary.cached > 0;
        for (const m of waiting) enqueue(m.a, m.hit);
      }
      // A few misses none of which is a material (a one-file change of a mesh): an early pass would
      // only scan the materials and look every permutation up in the shader cache, as the shader
      // cook after the assets does anyway (~0.1 s of a 20k one-file change), with no cook to overlap.
      if (materialsLeft === 0 && queued > 0 && (materialsQueued > 0 || queued > FEW_MISSES)) startWarm();
      if (inFlight > 0 || backlogHead < backlog.length) await new Promise<void>((r) => (pooledIdle = r));
      // After the pooled jobs: one the workers sent back to this thread (needsMain) joined the queue.
      await Promise.all([queue.onIdle(), textureQueue.onIdle()]);
      if (pooledFailure) throw pooledFailure.error;
    } finally {
      // The outputs statted ahead were for this pass only.
      this.cache.endPrestat();
      // Whatever a kept file was not cooked from (a cache hit, a shard's other share) is not needed.
      this.keptSources?.clear();
      this.keptSources = undefined;
      opts.signal?.removeEventListener('abort', stop);
      // Every finished asset is already journaled; fold the journal when it has grown.
      await this.saveCache(problems);
      // No compiler outlives the cook phase (an interrupted cook returns early below).
      warmCompiled = (await warmShaders) ?? [];
      // A very large cook's workers go with the loop: their heaps and threads would stay through
      // the shaders, outputs and paks, where such a cook peaks. A re-cook later (a cooked file
      // damaged before the paks, a daemon's batch) starts the pool again.
      if (lean) await this.stopWorkers();
    }
    if (opts.signal?.aborted) {
      summary.interrupted = true;
      const done = results.size;
      this.report(errors.cookFailed(config.configFile, `interrupted after ${done} of ${all.length} assets; the finished ones are in the cook cache, the paks were not written`), 'error', problems);
    }
    // A shard's whole share must reach the store, what the local cache already had too (a cache
    // entry is never an RGBA8 fallback: those are not cached).
    if (shardResults) for (const [guid, res] of shardResults) if (res.status === 'cached') this.offer(this.registry.get(guid)!, res);
    await this.flushStore();
    this.storeProblems = undefined;
    summary.phases.cook = Math.round(performance.now() - cookStart);
    bus.emit({ type: 'END', phase: 'cook', ms: summary.phases.cook, ok: summary.failed === 0 });
    // Built when the cook is over (after the paks), not held through the pak phase: at a million
    // assets these are ~100 MB on top of the results.
    // The held results give a report's fields without building each asset's whole result.
    // Slot i of the held results is all[i]: read by slot, not looked up by GUID.
    const fieldsOf = (i: number): AssetReportFields | undefined => (held ? held.briefOfSlot(i) : results.get(all[i].record.guid));
    const assetReports = (): AssetReport[] => {
      const out: AssetReport[] = [];
      for (let i = 0; i < all.length; i++) {
        const r = fieldsOf(i);
        if (r) out.push(report(all[i], r));
      }
      return out.sort((x, y) => (x.guid < y.guid ? -1 : x.guid > y.guid ? 1 : 0));
    };

    if (opts.shard) {
      summary.assetReports = assetReports();
      // The shard's share of the permutations every planned material asks for (the assembly asks
      // for those of what ships, a subset when a package fails there).
      const shaderRes = await this.cookShaders(plan.packages, plan.chunks, problems, { prune: false, shard: opts.shard });
      summary.shaders = shaderSummary(shaderRes);
      if (this.store instanceof RemoteCookCache) summary.remoteCache = this.store.stats();
      summary.ok = !problems.some((p) => p.severity === 'error');
      summary.ms = Math.round(performance.now() - started);
      log.info({ shard: summary.shard, cooked: summary.cooked, cached: summary.cached, failed: summary.failed, ms: summary.ms }, 'shard cooked and published');
      return summary;
    }

    // ---- shaders: every permutation the shipped materials need ----
    const shipped = all.filter((a, i) => (held ? held.hasOutputAt(i) : results.get(a.record.guid)?.output !== undefined));
    // Everything planned ships (this machine's whole plan, every asset cooked or cached).
    const wholePlanShips = !split && shipped.length === all.length;
    // Then the shipped packages are the plan's, which its key names exactly (the registry's
    // content, the config, the planning code), records, order and chunks: the shader cook takes
    // the last cook's result when nothing else it reads changed.
    const shaderRes = await this.cookShaders(
      shipped.filter((a) => a.record.kind === 'package'),
      plan.chunks,
      problems,
      {
        packagesIdentity: wholePlanShips ? plan.key : undefined,
        // A plan carried over edits: the same packages ship, only the changed ones' content is new.
        carried: wholePlanShips && plan.carriedFrom ? { packagesIdentity: plan.carriedFrom.planKey, changed: plan.carriedFrom.changed } : undefined,
      },
    );
    summary.shaders = shaderSummary(shaderRes);
    // What the early compiles made for what ships counts as compiled by this cook, not cached.
    const early = warmCompiled.length ? earlyCompiled(warmCompiled, shaderRes.allBytes) : 0;
    summary.shaders.compiled += early;
    summary.shaders.cached -= early;
    if (this.store instanceof RemoteCookCache) summary.remoteCache = this.store.stats();

    // ---- registry, stale outputs, paks ----
    summary.ok = !problems.some((p) => p.severity === 'error');
    let registryBytes: Uint8Array | undefined;
    if (summary.ok) {
      // Only a cook that succeeds is the truth about what ships: a failed one (a root that could
      // not be read plans too little) must not sweep the outputs and cache entries of assets it
      // merely failed to reach, or fixing the file would cost their re-cook.
      const outputsStart = performance.now();
      const shippedRecords = shipped.map((a) => a.record);
      // Everything planned ships (a no-op): the plan's own fingerprints, the same list in the same order.
      const fingerprints = wholePlanShips && plan.fingerprints ? plan.fingerprints : shippedFingerprints(shippedRecords);
      // This cook changed nothing under Saved/Cooked: every asset from the cache, the same outputs as the last sweep left.
      const sameAsSwept = swept?.outputs === fingerprints.outputs && summary.cached === all.length;
      const registryFile = path.join(config.cookedDir, REGISTRY_ENTRY);
      // The registry of the same records is the same bytes: read back (hash-checked), not re-encoded.
      // After edits that kept every planning fact (a carried plan, all of it shipping), the registry
      // of the content before them is this content's: an entry is made of planning facts only.
      const carriedFrom = plan.carriedFrom && fingerprints === plan.fingerprints ? plan.carriedFrom.registryInputs : undefined;
      const kept = registryFromMarker(registryFile, swept, fingerprints.registryInputs) ?? (carriedFrom === undefined ? undefined : registryFromMarker(registryFile, swept, carriedFrom));
      // Else encoded, its unchanged entries copied from the file it replaces (cookedRegistryOutput.ts), and written if it changed.
      registryBytes = kept ?? writeCookedRegistry(registryFile, config.intermediatesDir, shippedRecords);
      // Everything's permutations in one: Saved/Cooked stays "the full content" a patch is built from.
      const shaderFile = path.join(config.cookedDir, SHADER_CACHE_ENTRY);
      await writeIfChanged(shaderFile, shaderRes.allBytes);
      // What each shipped package took to cook, for the next sharded cook's balance (remote/costTable.ts).
      // A cook that took every asset from the cache and ships the same set as the last sweep has the
      // same costs: the table on disk is already theirs.
      const costFile = path.join(config.savedDir, COST_TABLE_FILE);
      const sameCosts = sameAsSwept && fs.existsSync(costFile);
      // The same set ships as at the last sweep and a few packages were cooked: only their lines change.
      const patched = !sameCosts && swept?.outputs === fingerprints.outputs && missed.length <= FEW_MISSES ? patchedCosts(costFile, missed, this.cache) : undefined;
      const costs = new Map<string, number>();
      for (const a of sameCosts || patched !== undefined ? [] : shipped) {
        const ms = a.record.kind === 'package' ? this.cache.cookMs(a.record.guid) : undefined;
        if (ms !== undefined) costs.set(a.record.guid, ms);
      }
      if (!sameCosts) {
        await writeIfChanged(costFile, Buffer.from(patched ?? encodeCostTable(costs), 'utf8')).catch((e: unknown) => {
          this.report(isLuminaError(e) ? e : errors.ioFailed(costFile, 'write', e), 'warning', problems);
        });
      }
      // Forget what no longer ships before its output goes: an entry must never outlive its file.
      // Nothing to forget when the same set ships as at the last sweep: that sweep's cook pruned
      // to this set, any entry added since by another cook came with a write into Saved/Cooked,
      // which removed the marker before this cook read it, and this cook's own entries are of
      // planned assets (one that failed lost its entry), so of this set.
      if (swept?.outputs !== fingerprints.outputs) {
        const shippedGuids = new Set(shipped.map((a) => a.record.guid));
        this.cache.prune((guid) => shippedGuids.has(guid));
      }
      // The walk finds nothing when the folder was clean before this cook and the same outputs ship,
      // nor when it was empty and every planned asset ships: each file this cook wrote (temp + rename,
      // a failed write removes its temp) is the output of one of them, at its usual path.
      if (swept?.outputs !== fingerprints.outputs && !(startedEmpty && wholePlanShips)) {
        await removeStale(config.cookedDir, new Set([registryFile, shaderFile, ...shipped.map((a) => cookedPathFor(config.cookedDir, a.record))]), log);
      }
      const registryXxh64 = xxh64(registryBytes);
      if (wholePlanShips && cookPlan) this.lastRegistry = { plan: cookPlan, xxh64: registryXxh64 };
      const marker = { outputs: fingerprints.outputs, registryInputs: fingerprints.registryInputs, registryXxh64: hashHex(registryXxh64), registrySize: registryBytes.byteLength };
      // The marker this cook read says the same and is still there (no write into Saved/Cooked
      // removed it): nothing to write, and a no-op does no fsync for it.
      const sameMarker = swept !== undefined && swept.outputs === marker.outputs && swept.registryInputs === marker.registryInputs && swept.registryXxh64 === marker.registryXxh64 && swept.registrySize === marker.registrySize;
      if (!sameMarker || !fs.existsSync(path.join(config.intermediatesDir, SWEPT_MARKER_FILE))) {
        await writeSweptMarker(config.cookedDir, config.intermediatesDir, marker).catch((e: unknown) => this.report(isLuminaError(e) ? e : errors.ioFailed(config.intermediatesDir, 'write', e), 'warning', problems));
      }
      summary.phases.outputs = Math.round(performance.now() - outputsStart);
    }
    if (summary.ok && opts.paks !== false) {
      bus.emit({ type: 'START', phase: 'pak', total: plan.chunks.length });
      const pakStart = performance.now();
      // A daemon's dev pak (one priority above) would serve its older bytes over the fresh chunk
      // paks: it goes first, and the chunk paks below hold everything it had.
      await fsp.rm(path.join(config.paksDir, DEV_PAK_NAME), { force: true }).catch((e: unknown) => {
        throw errors.ioFailed(path.join(config.paksDir, DEV_PAK_NAME), 'remove', e);
      });
      // A cooked file damaged since its cook (the cache trusts size and mtime) is cooked again, never shipped.
      const recook = async (guid: string): Promise<AssetCookResult> => {
        const a = all.find((x) => x.record.guid === guid)!;
        this.report({ code: 'COOKED_INVALID', message: 'the cooked file no longer matches its hash: cooking the asset again', file: cookedPathFor(config.cookedDir, a.record) }, 'warning', problems);
        this.cache.delete(guid);
        const res = await this.cookAsset(a.record, problems);
        results.set(guid, res);
        return res;
      };
      summary.paks = await writeChunkPaks({ config, plan: shippedPlan(plan, shipped), results, registryBytes: registryBytes!, shaderBytes: shaderRes.chunkBytes, cache: this.cache, bus, recook });
      held?.dropBytes();
      summary.phases.paks = Math.round(performance.now() - pakStart);
      bus.emit({ type: 'END', phase: 'pak', ms: summary.phases.paks, ok: true });
      // The tail (release, reports, cook cache) allocates on top of the loop's garbage: a held strict
      // level (cookProject) collects it and starts here.
      releaseStrictHeap();
      if (opts.release !== undefined) summary.releaseManifest = await shipRelease(config, opts.release, summary.paks, registryBytes!, shaderRes.allBytes);
    } else if (!summary.ok) {
      log.error({ errors: problems.filter((p) => p.severity === 'error').length }, 'cook failed: paks were not written, the last good ones are untouched');
    }
    releaseStrictHeap();
    summary.assetReports = assetReports();
    results.clear();
    await this.saveCache(problems);
    summary.ms = Math.round(performance.now() - started);
    log.info(
      { cooked: summary.cooked, cached: summary.cached, fetched: summary.fetched, failed: summary.failed, stripped: summary.strippedExports, bytesIn: summary.bytesIn, bytesOut: summary.bytesOut, ms: summary.ms, ...summary.phases },
      'cook finished',
    );
    if (opts.report !== false) {
      // The report is a view of the cook: failing to write it is a warning, never a failed cook.
      // records: read only if the body is built again (a getter: plan.records is every record).
      const input = {
        config,
        summary,
        plan,
        roots: plan.roots,
        get records() {
          return plan.records;
        },
        recordsIdentity: this.registry.contentIdentity,
        planFacts: plan.factsKey,
      };
      summary.report = await writeCookReport(input).catch((e: unknown) => {
        this.report(isLuminaError(e) ? e : errors.ioFailed(reportFiles(config).html, 'write', e), 'warning', problems);
        return undefined;
      });
    }
    return summary;
  }

  /** Fold the cache journal when it has grown; a cache that cannot be saved is a warning. */
  async saveCache(problems?: CookProblem[], force = false): Promise<void> {
    await this.cache.save(force).catch((e) => this.report(isLuminaError(e) ? e : errors.ioFailed(this.cache.file, 'write', e), 'warning', problems));
  }

  /** Wait for the store's publishes in flight. */
  async flushStore(): Promise<void> {
    while (this.publishing.size) await Promise.all([...this.publishing]);
    await this.store?.flush?.().catch(() => {});
  }
}

/** The folder is missing or holds nothing. */
function folderEmpty(dir: string): boolean {
  try {
    return fs.readdirSync(dir).length === 0;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/**
 * The cost table on disk with the cook times of `guids` (re-cooked packages of the same shipped set
 * as the table's) set; undefined when it cannot be patched (then it is encoded whole).
 */
function patchedCosts(file: string, guids: readonly string[], cache: CookCache): string | undefined {
  const changed = new Map<string, number>();
  for (const guid of guids) {
    const ms = cache.cookMs(guid);
    if (ms === undefined) return undefined;
    changed.set(guid, ms);
  }
  try {
    return patchCostTable(fs.readFileSync(file, 'utf8'), changed);
  } catch {
    return undefined;
  }
}

/** How many of the early-compiled permutations are in the shipped ShaderCache.bin. */
function earlyCompiled(compiled: readonly string[], allBytes: Uint8Array): number {
  const shipped = new Set(decodeShaderCache(allBytes, SHADER_CACHE_ENTRY).permutations.map((p) => describePermutation(p)));
  return compiled.filter((d) => shipped.has(d)).length;
}

/** Where a root's package file would be (`/Game/Maps/Main` or `/Game/Maps/Main.Main`), per mount. */
function rootFileCandidates(config: ProjectConfig, root: string): string[] {
  const out: string[] = [];
  for (const m of config.mounts) {
    if (!root.startsWith(m.alias + '/')) continue;
    let rel = root.slice(m.alias.length + 1);
    const slash = rel.lastIndexOf('/');
    const dot = rel.lastIndexOf('.');
    if (dot > slash) rel = rel.slice(0, dot);
    out.push(path.resolve(m.dir, ...rel.split('/')) + '.lasset');
  }
  return out;
}

/** More changed files than this and a carried plan's registryInputs is hashed from every record (each change is looked up in the plan). */
const FEW_CARRIED_CHANGES = 32;

/**
 * The registryInputs of a plan carried over `changes` (every changed file the same planning facts),
 * from the one it had before them: only the changed records that ship count (carriedRegistryInputs);
 * from every record when the changes are many or the old value is of another form.
 */
function carriedInputs(plan: Pick<CookPlan, 'packages' | 'textAssets'>, changes: ScanChanges, before: string): string {
  const shipped = (guid: string) => plan.packages.some((a) => a.record.guid === guid) || plan.textAssets.some((a) => a.record.guid === guid);
  const changed: Array<{ before: AssetRecord; after: AssetRecord }> = [];
  if (changes.files.length <= FEW_CARRIED_CHANGES) {
    for (const f of changes.files) if (f.before && f.after && shipped(f.after.guid)) changed.push({ before: f.before, after: f.after });
    const carried = carriedRegistryInputs(before, changed);
    if (carried !== undefined) return carried;
  }
  return registryInputsFingerprint([...plan.packages, ...plan.textAssets].map((a) => a.record));
}

/** The fingerprints of what a plan ships (its packages and text assets), as the sweep and the registry output use them. */
function planFingerprints(plan: Pick<CookPlan, 'packages' | 'textAssets'>): ReturnType<typeof shippedFingerprints> {
  return shippedFingerprints([...plan.packages, ...plan.textAssets].map((a) => a.record));
}

/**
 * The order a full cook queues its assets in: the material packages first (the early shader
 * compiles wait for them), then the other packages with the text assets spread evenly among them.
 * Text assets cook on this thread, which is mostly idle while the workers cook packages; queued
 * last, they ran after the workers had finished, with both workers idle.
 */
export function cookOrder(all: readonly PlannedAsset[], isMaterial: (a: PlannedAsset) => boolean): PlannedAsset[] {
  const first: PlannedAsset[] = [];
  const packages: PlannedAsset[] = [];
  const texts: PlannedAsset[] = [];
  for (const a of all) (a.record.kind === 'text' ? texts : isMaterial(a) ? first : packages).push(a);
  if (texts.length === 0 || packages.length === 0) return [...first, ...packages, ...texts];
  const out = first;
  // Text k goes after package floor((k + 1) * n / (t + 1)): evenly, none first or last.
  let p = 0;
  for (let k = 0; k < texts.length; k++) {
    const upTo = Math.floor(((k + 1) * packages.length) / (texts.length + 1));
    while (p < upTo) out.push(packages[p++]);
    out.push(texts[k]);
  }
  while (p < packages.length) out.push(packages[p++]);
  return out;
}

/** A text asset that could not be read (not a sidecar problem): text assets always ship. */
function unreadableText(p: CookProblem): boolean {
  return p.file !== undefined && /\.(rml|rcss|luau)$/i.test(p.file) && !p.code.startsWith('LMETA_') && p.code !== 'DUPLICATE_GUID';
}

/** Which config key declared a root that matched nothing, for the problem's location. */
function declaredBy(config: ProjectConfig, root: string): { field: string; hint?: string } {
  if (config.cookRoots.includes(root)) return { field: 'cookRoots' };
  const i = config.plugins.findIndex((p) => p.cookRoots.includes(root));
  if (i >= 0) return { field: `plugins[${i}].cookRoots`, hint: `declared by plugin ${config.plugins[i].name}` };
  return { field: 'GameStartupMap' };
}

function shaderSummary(r: ShaderCookResult): CookSummary['shaders'] {
  return { permutations: r.permutations, compiled: r.compiled, cached: r.cached, fetched: r.fetched, failed: r.failed, compiler: r.compiler };
}

function tally(s: CookSummary, r: AssetCookResult): void {
  if (r.status === 'cached') s.cached++;
  else if (r.status === 'cooked') s.cooked++;
  else if (r.status === 'fetched') s.fetched++;
  else if (r.status === 'verbatim') s.verbatim++;
  else s.failed++;
  if (r.reason && r.status !== 'cached') s.recooked[r.reason] = (s.recooked[r.reason] ?? 0) + 1;
  s.strippedExports += r.strippedExports;
  s.nulledRefs += r.nulledRefs;
  s.bytesIn += r.bytesIn;
  s.bytesOut += r.bytesOut;
}

/** The cache check of every asset of a cook whose cache is empty. */
const NEW_ASSET: CacheCheck & { hit: false } = Object.freeze({ hit: false, reason: 'new' });

/** A package waiting for room among the pooled jobs in flight (fullCook). */
interface PooledWait {
  a: PlannedAsset;
  hit: CacheCheck & { hit: false };
  material: boolean;
}

/** A package on the cook workers (fullCook): what its result is settled with. */
interface PooledJob extends PooledWait {
  output: string;
  t0: number;
}

/** A plan carried over edits that kept every planning fact (planForCook): the last cook's plan key and registry inputs, and the records changed since. */
interface CarriedFrom {
  registryInputs: string;
  planKey: string;
  changed: ReadonlyArray<{ before: AssetRecord; after: AssetRecord }>;
}

/** Where a full cook keeps each asset's result until its paks and reports are written. */
interface ResultStore {
  get(guid: string): AssetCookResult | undefined;
  set(guid: string, r: AssetCookResult): unknown;
  has(guid: string): boolean;
  readonly size: number;
  clear(): void;
}

function report(a: PlannedAsset, r: AssetReportFields): AssetReport {
  const out: AssetReport = {
    guid: a.record.guid,
    path: a.record.virtualPath,
    file: a.record.file,
    chunk: a.chunk,
    via: a.via,
    status: r.status,
    // A cache hit's few microseconds are not cook time (and would make two no-ops' reports differ).
    ms: r.status === 'cached' ? 0 : Math.round(r.ms * 100) / 100,
    bytesIn: r.bytesIn,
    bytesOut: r.bytesOut,
  };
  if (r.reason && r.status !== 'cached') out.reason = r.reason;
  if (r.error) out.error = r.error.code;
  return out;
}

/** The plan restricted to what has an output (failed assets under "fail" never reach paks anyway). */
function shippedPlan(plan: CookPlan, shipped: PlannedAsset[]): CookPlan {
  if (shipped.length === plan.packages.length + plan.textAssets.length) return plan;
  const keep = new Set(shipped.map((a) => a.record.guid));
  return { ...plan, packages: plan.packages.filter((a) => keep.has(a.record.guid)), textAssets: plan.textAssets.filter((a) => keep.has(a.record.guid)) };
}

/** xxh64 of bytes as 16 hex digits (the registry-in-pak identity). */
export function bytesIdentity(bytes: Uint8Array): string {
  return hashHex(xxh64(bytes));
}

/** What every cook worker of the project is told (the worker loads the schemas itself). */
function workerSettings(c: ProjectConfig): WorkerSettings {
  return { editorOnlyClassPrefixes: c.cook.editorOnlyClassPrefixes, compressionLevel: c.cook.compressionLevel, textures: c.textures, onCookFailure: c.cook.onCookFailure, schemasDir: c.schemasDir || null };
}

/** How many assets the registry holds: its size where it has one, so a no-op on a stored plan never thaws every record (all()). */
function assetCount(registry: RootLookup): number {
  return registry.size ?? registry.all().length;
}
