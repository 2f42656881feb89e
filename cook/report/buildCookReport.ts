/**
 * The cook report's data (`Saved/Reports/cook-report.json`, also embedded in cook.html): what a
 * cook shipped, where the bytes went, what re-cooked and why, where the time went, which
 * references were soft-only, excluded or missing, and for every cooked asset who refers to it and
 * the chain from a cook root that pulls it in.
 *
 * Assets are listed once, by index; chains and referrers point at indexes, so a 20k-asset report
 * stays a few MB. The chain of an asset is followed through `from` back to a root. It is computed
 * the way the plan places assets: per chunk (Main first), from that chunk's roots, through assets
 * of the same chunk, hard edges first (soft ones only where no hard path exists), so the chain
 * starts at a root of the chunk the asset ships in and is all-hard whenever the cook reached the
 * asset through hard edges.
 */
import path from 'node:path';
import type { ProjectConfig } from '../../config/index.js';
import { DependencyType } from '../../src/format/packageTypes.js';
import type { AssetRecord } from '../../src/registry/types.js';
import type { AssetCookResult } from '../cookAsset.js';
import type { CookProblem, CookSummary } from '../Cooker.js';
import type { CookRoot } from '../../src/registry/cookRoots.js';
import { compareChunks, type CookPlan } from '../planCook.js';

export const REPORT_VERSION = 1;

export interface ReportAsset {
  /** Virtual path (the pak entry path), e.g. `/Game/Maps/Main.lasset`. */
  path: string;
  guid: string;
  className: string;
  /** Source file, relative to the project. */
  file: string;
  chunk: string;
  /** How it entered the cook: a root, hard edges, only a soft edge, or (text assets) its mount. */
  via: 'root' | 'hard' | 'soft' | 'mount';
  status: AssetCookResult['status'];
  /** Why it re-cooked (new, content, settings, format, output); absent when cached. */
  reason?: string;
  bytesIn: number;
  /** Cooked bytes (what the treemap sizes by). */
  bytesOut: number;
  /** Wall time of its cook in ms (assets cook concurrently, so these overlap). */
  ms: number;
  /** The asset it was reached from (index), with the edge type; absent on roots and text assets. */
  from?: number;
  fromVia?: 'Hard' | 'Soft';
  /** Root reason on roots ("project", "plugin", "startupMap", "primary"). */
  root?: string;
  /** Assets that import it: an index when the referrer is cooked too, else its package path. */
  referrers: Array<number | string>;
}

export interface ReportReference {
  referrer: string;
  /** The target's package path, or its GUID when no asset has it. */
  target: string;
  guid: string;
  type: 'Hard' | 'Soft';
}

export interface CookReport {
  version: typeof REPORT_VERSION;
  project: string;
  projectDir: string;
  generatedAt: string;
  ok: boolean;
  totals: {
    assets: number;
    cooked: number;
    cached: number;
    /** Taken from the remote cache. */
    fetched: number;
    failed: number;
    verbatim: number;
    strippedExports: number;
    nulledRefs: number;
    bytesIn: number;
    bytesOut: number;
    ms: number;
  };
  /** Wall time per phase, in order. */
  phases: Array<{ phase: string; ms: number }>;
  /** Main first. */
  chunks: Array<{ name: string; assets: number; bytesOut: number; pak?: { file: string; bytes: number; entries: number; written: boolean } }>;
  /** Re-cooked assets by reason. */
  recooked: Record<string, number>;
  assets: ReportAsset[];
  /** soft: "exclude": soft references the cook left out. */
  softExcluded: ReportReference[];
  /** Dependencies that no mounted asset has. */
  missing: ReportReference[];
  problems: CookProblem[];
}

export interface ReportInput {
  config: ProjectConfig;
  /** The full cook's summary (with its per-asset reports). */
  summary: CookSummary;
  /** The plan the cook ran (Cooker.lastPlan). */
  plan: CookPlan;
  roots: readonly CookRoot[];
  /** Every record (for referrers and reference targets); the registry's `all()`. */
  records: Iterable<AssetRecord>;
  now?: Date;
}

const typeName = (t: DependencyType): 'Hard' | 'Soft' => (t === DependencyType.Soft ? 'Soft' : 'Hard');
const round = (ms: number) => Math.round(ms * 100) / 100;

/** Build the report's data from what the cook already knows; reads no file. */
export function buildCookReport(input: ReportInput): CookReport {
  const { config, plan, summary } = input;
  const index = new Map<string, number>();
  const byGuid = new Map<string, AssetRecord>();
  const prefix = config.projectDir + path.sep;
  // Files relative to the project, with '/' (path.relative is slow at 20k calls).
  const rel = (f: string) => {
    const r = f.startsWith(prefix) ? f.slice(prefix.length) : path.relative(config.projectDir, f);
    return path.sep === '/' ? r : r.split(path.sep).join('/');
  };
  for (const r of input.records) byGuid.set(r.guid, r);

  // The summary's per-asset reports are sorted by GUID, like the plan's lists.
  const assets: ReportAsset[] = summary.assetReports.map((a, i) => {
    index.set(a.guid, i);
    const record = byGuid.get(a.guid);
    return {
      path: a.path,
      guid: a.guid,
      className: record?.className ?? '',
      file: rel(a.file),
      chunk: a.chunk,
      via: a.via,
      status: a.status,
      ...(a.reason ? { reason: a.reason } : {}),
      bytesIn: a.bytesIn,
      bytesOut: a.status === 'failed' ? 0 : a.bytesOut,
      ms: round(a.ms),
      referrers: [],
    };
  });

  // Referrers, over the whole registry (an uncooked referrer is named by its path).
  // A package may import the same asset twice (Hard and Soft): count it once. `lastReferrer[to]`
  // is the record that last added itself to `to`, cheaper than a set per record.
  const lastReferrer = new Array<AssetRecord | undefined>(assets.length);
  for (const r of byGuid.values()) {
    const from = index.get(r.guid);
    for (const d of r.dependencies) {
      const to = index.get(d.guid);
      if (to === undefined || lastReferrer[to] === r) continue;
      lastReferrer[to] = r;
      assets[to].referrers.push(from ?? r.packagePath);
    }
  }

  linkChains(plan, input.roots, index, assets, byGuid, config.cook.soft === 'include');

  const chunks = plan.chunks.map((name) => {
    const mine = assets.filter((a) => a.chunk === name);
    const pak = summary.paks.find((p) => p.chunk === name);
    return {
      name,
      assets: mine.length,
      bytesOut: mine.reduce((n, a) => n + a.bytesOut, 0),
      ...(pak ? { pak: { file: rel(pak.file), bytes: pak.bytes, entries: pak.entries, written: pak.written } } : {}),
    };
  });
  chunks.sort((a, b) => compareChunks(a.name, b.name));

  const ref = (e: { referrer: AssetRecord; guid: string; type: DependencyType }): ReportReference => ({
    referrer: e.referrer.packagePath,
    target: byGuid.get(e.guid)?.packagePath ?? e.guid,
    guid: e.guid,
    type: typeName(e.type),
  });
  const recooked: Record<string, number> = {};
  for (const [k, v] of Object.entries(summary.recooked)) if (v) recooked[k] = v;

  return {
    version: REPORT_VERSION,
    project: config.name,
    projectDir: config.projectDir,
    generatedAt: (input.now ?? new Date()).toISOString(),
    ok: summary.ok,
    totals: {
      assets: summary.assets,
      cooked: summary.cooked,
      cached: summary.cached,
      fetched: summary.fetched,
      failed: summary.failed,
      verbatim: summary.verbatim,
      strippedExports: summary.strippedExports,
      nulledRefs: summary.nulledRefs,
      bytesIn: summary.bytesIn,
      bytesOut: summary.bytesOut,
      ms: summary.ms,
    },
    phases: Object.entries(summary.phases).map(([phase, ms]) => ({ phase, ms: round(ms) })),
    chunks,
    recooked,
    assets,
    softExcluded: plan.softExcluded.map(ref),
    missing: plan.missing.map(ref),
    // Files relative to the project, as the CLI prints them.
    problems: summary.problems.map((p) => (p.file && path.isAbsolute(p.file) ? { ...p, file: rel(p.file) } : p)),
  };
}

/** Set `from`/`fromVia` (and `root`) on every cooked package; see the module comment. */
function linkChains(plan: CookPlan, roots: readonly CookRoot[], index: Map<string, number>, assets: ReportAsset[], byGuid: Map<string, AssetRecord>, followSoft: boolean): void {
  const reached = new Set<number>();
  for (const chunk of plan.chunks) {
    const queue: number[] = [];
    for (const root of roots) {
      const i = index.get(root.guid);
      if (i === undefined || assets[i].chunk !== chunk || reached.has(i)) continue;
      assets[i].root = root.reason;
      reached.add(i);
      queue.push(i);
    }
    // Breadth-first over hard edges; then again from everything reached, over soft edges too.
    const passes: Array<(t: DependencyType) => boolean> = [(t) => t !== DependencyType.Soft];
    if (followSoft) passes.push(() => true);
    for (const follows of passes) {
      const q = [...queue];
      for (let head = 0; head < q.length; head++) {
        const from = q[head];
        for (const d of byGuid.get(assets[from].guid)?.dependencies ?? []) {
          if (!follows(d.type)) continue;
          const to = index.get(d.guid);
          if (to === undefined || reached.has(to) || assets[to].chunk !== chunk || assets[to].via === 'mount') continue;
          reached.add(to);
          assets[to].from = from;
          assets[to].fromVia = typeName(d.type);
          q.push(to);
          queue.push(to);
        }
      }
    }
  }
}
