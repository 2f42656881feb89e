/**
 * The cook, end to end: registry -> roots -> plan -> cook every asset (cache first, in parallel)
 * -> AssetRegistry.bin -> one pak per chunk (Main first) with a contents listing -> optional
 * release manifest. The CLI (`cook`), the patch command and the watch daemon all call this.
 *
 * `Saved/Cooked` mirrors exactly what the paks hold together: cooked packages (LCKD), copied text
 * assets and `AssetRegistry.bin`; files a previous cook left there for assets no longer cooked
 * are removed, so the folder can be packed or diffed as "the full content" (the patch builder
 * does that).
 *
 * Problems never throw: each becomes an entry in `summary.problems` (and a WARNING/ERROR event),
 * and `summary.ok` is false when any is an error. Errors: an asset that failed to cook under
 * onCookFailure "fail"; under `ci` also missing dependencies, missing roots and scan problems.
 * Paks are written only when the cook is ok, so a failed cook never replaces good paks.
 * Only "nothing to cook" (COOK_NO_ROOTS) and unusable configs throw.
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import PQueue from 'p-queue';
import { loadConfig, type ProjectConfig } from '../config/index.js';
import { errors, isLuminaError, type LuminaError, type LuminaLog } from '../src/errors.js';
import { encodeCookedRegistry } from '../src/format/cookedRegistry.js';
import { ProgressBus } from '../src/log/events.js';
import { createDebugger, silentLogger, type Logger } from '../src/log/logger.js';
import { sweepTempFiles, TEMP_MARKER, tempOwnerPid } from '../src/util/atomicWrite.js';
import { pidAlive } from '../src/util/pidAlive.js';
import { initHash, xxh64 } from '../src/util/hash.js';
import { assetCookContext, cookPackageAsset, cookTextAsset, cookedPathFor, writeOutput, type AssetCookResult } from './cookAsset.js';
import { CACHE_FILE_NAME, CookCache, type RecookReason } from './cookCache.js';
import { resolveCookRoots, type RootLookup } from './cookRoots.js';
import { planCook, type CookPlan, type PlannedAsset } from './planCook.js';
import { openProjectRegistry } from './projectRegistry.js';
import { writeChunkPaks, type PakOutput } from './writeChunkPaks.js';
import { shipRelease } from './writeRelease.js';

export const REGISTRY_ENTRY = 'AssetRegistry.bin';

export interface CookProjectOptions {
  /** The project folder (holding lumina-cook.json); or pass `config`. */
  projectDir?: string;
  config?: ProjectConfig;
  /** CI: missing dependencies and roots are errors, and no sidecar is minted. */
  ci?: boolean;
  /** Also write `Saved/Releases/<release>/` (paks + release.json + AssetRegistry.bin). */
  release?: string;
  /** Write paks (default true). The watch daemon may cook loose files only. */
  paks?: boolean;
  log?: Logger;
  bus?: ProgressBus;
  /** An open registry to reuse (the watch daemon passes its own); else the project is scanned. */
  registry?: RootLookup;
}

export interface CookProblem extends LuminaLog {
  severity: 'error' | 'warning';
}

export interface CookSummary {
  ok: boolean;
  /** Packages and text assets in the cook. */
  assets: number;
  cooked: number;
  cached: number;
  failed: number;
  /** Shipped as their source bytes after failing (onCookFailure "verbatim"). */
  verbatim: number;
  strippedExports: number;
  nulledRefs: number;
  bytesIn: number;
  bytesOut: number;
  ms: number;
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
}

/** Cook a project. See the module comment for what is an error. */
export async function cookProject(opts: CookProjectOptions): Promise<CookSummary> {
  const started = performance.now();
  const log = opts.log ?? silentLogger;
  // LUMINA_DEBUG=cook: one line per asset that did not come from the cache, with the reason.
  const debug = createDebugger('cook', log);
  const bus = opts.bus ?? new ProgressBus();
  const ci = opts.ci ?? false;
  let config = opts.config;
  if (!config) {
    if (!opts.projectDir) throw errors.usage('cookProject needs projectDir or config');
    const loaded = loadConfig(opts.projectDir);
    for (const w of loaded.warnings) log.warn({ file: loaded.config.configFile }, w);
    config = loaded.config;
  }
  if (opts.release !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(opts.release)) {
    throw errors.usage(`release name "${opts.release}" must be letters, digits, ".", "_" and "-"`, 'e.g. --release 1.0.0');
  }
  await initHash();
  // What a killed run left half-written beside the paks and caches (Saved/Cooked is swept with
  // the stale outputs below). Temps of a live writer stay.
  await sweepTempFiles(config.paksDir);
  await sweepTempFiles(config.intermediatesDir);

  const problems: CookProblem[] = [];
  const report = (e: LuminaError | LuminaLog, severity: 'error' | 'warning'): void => {
    const l: LuminaLog = isLuminaError(e) ? e.toLog() : e;
    problems.push({ ...l, severity });
    bus.emit({ type: severity === 'error' ? 'ERROR' : 'WARNING', log: l });
    log[severity === 'error' ? 'error' : 'warn']({ code: l.code, file: l.file, field: l.field, offset: l.offset }, l.message);
  };
  const ciSeverity = ci ? 'error' : 'warning';

  bus.emit({ type: 'START', phase: 'scan' });
  const scanStart = performance.now();
  let registry = opts.registry;
  if (!registry) {
    const opened = await openProjectRegistry(config, { mintSidecars: !ci, log });
    registry = opened.registry;
    // A content problem is a warning locally and an error under --ci; a rebuilt cache only ever warns.
    for (const { severity, ...p } of opened.problems) report(p, severity === 'warning' ? 'warning' : ciSeverity);
  }
  const scanMs = performance.now() - scanStart;
  bus.emit({ type: 'END', phase: 'scan', ms: scanMs, ok: true });

  const resolved = resolveCookRoots(registry, config);
  for (const m of resolved.missing) report(errors.assetNotFound(m, { file: config.configFile, ...declaredBy(config, m) }), ciSeverity);
  if (resolved.roots.length === 0) throw errors.cookNoRoots(config.configFile);

  const plan = planCook(registry, resolved.roots, { soft: config.cook.soft, mountChunks: new Map(config.mounts.map((m) => [m.alias, m.chunk])) });
  for (const m of plan.missing) report(errors.dependencyMissing(m.referrer.file, m.guid), ciSeverity);
  if (plan.softExcluded.length) log.info({ count: plan.softExcluded.length }, 'soft references left out of the cook (cook.soft is "exclude")');
  if (plan.softOnly) log.info({ count: plan.softOnly }, 'assets included only through soft references');

  // ---- cook every asset ----
  const cacheFile = path.join(config.intermediatesDir, CACHE_FILE_NAME);
  const { cache, warning } = await CookCache.load(cacheFile, config.cookedDir);
  if (warning) report(warning, 'warning');
  const ctx = assetCookContext(config, cache, (file, reason) => report({ code: 'TEXTURE_INVALID', message: `stored as RGBA8: ${reason}`, file }, 'warning'));
  const all: PlannedAsset[] = [...plan.packages, ...plan.textAssets];
  const results = new Map<string, AssetCookResult>();
  const summary: CookSummary = {
    ok: true,
    assets: all.length,
    cooked: 0,
    cached: 0,
    failed: 0,
    verbatim: 0,
    strippedExports: 0,
    nulledRefs: 0,
    bytesIn: 0,
    bytesOut: 0,
    ms: 0,
    recooked: {},
    softOnly: plan.softOnly,
    softExcluded: plan.softExcluded.length,
    missingDependencies: plan.missing.length,
    chunks: plan.chunks,
    paks: [],
    cookedDir: config.cookedDir,
    problems,
  };
  bus.emit({ type: 'START', phase: 'cook', total: all.length });
  const cookStart = performance.now();
  const queue = new PQueue({ concurrency: config.cook.concurrency || Math.max(2, os.availableParallelism() * 2) });
  try {
    for (const a of all) {
      void queue.add(async () => {
        const r = a.record;
        bus.emit({ type: 'COOK_START', asset: r.packagePath, file: r.file });
        const res = r.kind === 'package' ? await cookPackageAsset(r, ctx) : await cookTextAsset(r, ctx);
        results.set(r.guid, res);
        tally(summary, res);
        if (res.status !== 'cached') debug?.('re-cooked', { asset: r.packagePath, reason: res.reason });
        if (res.status === 'failed') report(res.error!, config.cook.onCookFailure === 'fail' || !res.output ? 'error' : 'warning');
        else if (res.status === 'verbatim') report({ ...res.error!.toLog(), message: `shipped verbatim: ${res.error!.message}` }, 'warning');
        bus.emit({ type: 'COOK_END', asset: r.packagePath, file: r.file, cached: res.status === 'cached', bytesIn: res.bytesIn, bytesOut: res.bytesOut });
      });
    }
    await queue.onIdle();
  } finally {
    // Whatever finished is worth keeping, even when something threw.
    cache.prune((guid) => registry!.get(guid) !== undefined);
    await cache.save().catch((e) => report(asWarning(e, cacheFile), 'warning'));
  }
  const cookMs = performance.now() - cookStart;
  bus.emit({ type: 'END', phase: 'cook', ms: cookMs, ok: summary.failed === 0 });

  // ---- registry, stale outputs, paks ----
  const shipped = all.filter((a) => results.get(a.record.guid)?.output !== undefined);
  const registryBytes = encodeCookedRegistry(
    shipped.filter((a) => a.record.kind === 'package').map((a) => a.record),
    shipped.filter((a) => a.record.kind === 'text').map((a) => ({ guid: a.record.guid, path: a.record.virtualPath })),
  );
  const registryFile = path.join(config.cookedDir, REGISTRY_ENTRY);
  await writeIfChanged(registryFile, registryBytes);
  // Forget what no longer ships before its output goes: an entry must never outlive its file.
  const shippedGuids = new Set(shipped.map((a) => a.record.guid));
  if (cache.prune((guid) => shippedGuids.has(guid))) await cache.save().catch((e) => report(asWarning(e, cacheFile), 'warning'));
  await removeStale(config.cookedDir, new Set([registryFile, ...shipped.map((a) => cookedPathFor(config!.cookedDir, a.record))]), log);

  summary.ok = !problems.some((p) => p.severity === 'error');
  if (summary.ok && opts.paks !== false) {
    bus.emit({ type: 'START', phase: 'pak', total: plan.chunks.length });
    const pakStart = performance.now();
    summary.paks = await writeChunkPaks({ config, plan: shippedPlan(plan, shipped), results, registryBytes, cache, bus });
    await cache.save().catch((e) => report(asWarning(e, cacheFile), 'warning'));
    bus.emit({ type: 'END', phase: 'pak', ms: performance.now() - pakStart, ok: true });
    if (opts.release !== undefined) {
      summary.releaseManifest = await shipRelease(config, opts.release, summary.paks, registryBytes);
    }
  } else if (!summary.ok) {
    log.error({ errors: problems.filter((p) => p.severity === 'error').length }, 'cook failed: paks were not written');
  }
  summary.ms = Math.round(performance.now() - started);
  log.info(
    { cooked: summary.cooked, cached: summary.cached, failed: summary.failed, stripped: summary.strippedExports, bytesIn: summary.bytesIn, bytesOut: summary.bytesOut, ms: summary.ms, scanMs: Math.round(scanMs), cookMs: Math.round(cookMs) },
    'cook finished',
  );
  return summary;
}

/** Which config key declared a root that matched nothing, for the problem's location. */
function declaredBy(config: ProjectConfig, root: string): { field: string; hint?: string } {
  if (config.cookRoots.includes(root)) return { field: 'cookRoots' };
  const i = config.plugins.findIndex((p) => p.cookRoots.includes(root));
  if (i >= 0) return { field: `plugins[${i}].cookRoots`, hint: `declared by plugin ${config.plugins[i].name}` };
  return { field: 'GameStartupMap' };
}

function tally(s: CookSummary, r: AssetCookResult): void {
  if (r.status === 'cached') s.cached++;
  else if (r.status === 'cooked') s.cooked++;
  else if (r.status === 'verbatim') s.verbatim++;
  else s.failed++;
  if (r.reason && r.status !== 'cached') s.recooked[r.reason] = (s.recooked[r.reason] ?? 0) + 1;
  s.strippedExports += r.strippedExports;
  s.nulledRefs += r.nulledRefs;
  s.bytesIn += r.bytesIn;
  s.bytesOut += r.bytesOut;
}

function asWarning(e: unknown, file: string): LuminaError {
  return isLuminaError(e) ? e : errors.ioFailed(file, 'write', e);
}

/** The plan restricted to what has an output (failed assets under "fail" never reach paks anyway). */
function shippedPlan(plan: CookPlan, shipped: PlannedAsset[]): CookPlan {
  const keep = new Set(shipped.map((a) => a.record.guid));
  return { ...plan, packages: plan.packages.filter((a) => keep.has(a.record.guid)), textAssets: plan.textAssets.filter((a) => keep.has(a.record.guid)) };
}

/** Rewrite a small output only when its bytes change, so its mtime means something. */
async function writeIfChanged(file: string, bytes: Uint8Array): Promise<void> {
  try {
    const old = await fsp.readFile(file);
    if (old.byteLength === bytes.byteLength && xxh64(old) === xxh64(bytes)) return;
  } catch {
    // Not there yet.
  }
  writeOutput(file, bytes);
}

/** A temp file whose writer is still running (this cook's own, or a daemon's). */
function liveTemp(name: string): boolean {
  const pid = tempOwnerPid(name);
  return pid !== undefined && pidAlive(pid);
}

/** Delete files under the cooked folder that this cook did not produce (and temp files of killed runs). */
async function removeStale(dir: string, keep: ReadonlySet<string>, log: Logger): Promise<number> {
  let removed = 0;
  const walk = async (d: string): Promise<boolean> => {
    let ents;
    try {
      ents = await fsp.readdir(d, { withFileTypes: true });
    } catch {
      return false;
    }
    let left = ents.length;
    await Promise.all(
      ents.map(async (e) => {
        const p = path.join(d, e.name);
        if (e.isDirectory()) {
          if (await walk(p)) left--;
        } else if (e.name.includes(TEMP_MARKER) ? !liveTemp(e.name) : !keep.has(p)) {
          await fsp.rm(p, { force: true });
          removed++;
          left--;
        }
      }),
    );
    if (left === 0 && d !== dir) {
      await fsp.rmdir(d).catch(() => {});
      return true;
    }
    return false;
  };
  await walk(dir);
  if (removed) log.info({ removed, dir }, 'removed stale cooked files');
  return removed;
}

