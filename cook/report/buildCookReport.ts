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
 *
 * Bounded at any size: a cook of more than `assetLimit` assets (20k by default) lists only the
 * assets a reader looks at (the largest, the slowest, failures, soft-only ones, the roots, and every
 * asset on their chains), with at most 50 referrers each, and gives every folder's count and bytes
 * (`folders`) so the treemap still sums to the whole cook. A million-asset report stays a few MB.
 */
import path from 'node:path';
import type { ProjectConfig } from '../../config/index.js';
import { DependencyType } from '../../src/format/packageTypes.js';
import type { AssetRecord } from '../../src/registry/types.js';
import type { AssetCookResult } from '../cookAsset.js';
import type { AssetReport, CookProblem, CookSummary } from '../Cooker.js';
import type { CookRoot } from '../../src/registry/cookRoots.js';
import { compareChunks, type CookPlan } from '../planCook.js';
import { canonicalJson } from '../cookKey.js';
import { createXxh64, hashHex, hashString } from '../../src/util/hash.js';

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
  /**
   * Assets that import it: an index when the referrer is listed too; else its package path (not
   * cooked) or, in a bounded report, its virtual path with extension (cooked, not listed).
   */
  referrers: Array<number | string>;
  /** How many assets import it, when `referrers` holds only the first of them (bounded report). */
  referrerCount?: number;
}

/** One folder of a chunk in a bounded report: every shipped asset in it, listed or not. */
export interface ReportFolder {
  chunk: string;
  /** Virtual folder, e.g. `/Game/Textures/Set_001`. */
  folder: string;
  assets: number;
  bytesOut: number;
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
  /** Present when the cook had more assets than `assets` lists (see the module comment). */
  listed?: { assets: number; of: number; referrersPerAsset: number };
  /** Bounded report only: every folder's assets and cooked bytes, for the treemap. */
  folders?: ReportFolder[];
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
  /**
   * The registry's `contentIdentity` when it has one: it names every record exactly (the cache
   * files the scan left), so the body's key takes it instead of reading each record (a no-op at
   * 100k would otherwise thaw them all only to hash them).
   */
  recordsIdentity?: string;
  /**
   * Names every record's planning facts (paths, class, imports) and the plan made of them: the key
   * the cook's stored plan was made under (cook/planStore.ts; a plan carried over edits keeps it).
   * With it a report's body can be patched from the last one (see reportFrame).
   */
  planFacts?: string;
  now?: Date;
  /** List every asset up to this many; above it the report is bounded (default REPORT_ASSET_LIMIT). */
  assetLimit?: number;
  /** A bounded report's length of each top list (default REPORT_TOP). */
  listTop?: number;
}

/** Cooks of up to this many assets list every asset in the report. */
export const REPORT_ASSET_LIMIT = 20_000;
/** A bounded report lists this many of each kind (largest, slowest, failed, soft-only). */
export const REPORT_TOP = 1000;
/** A bounded report names this many referrers per asset. */
export const REPORT_REFERRERS = 50;

const typeName = (t: DependencyType): 'Hard' | 'Soft' => (t === DependencyType.Soft ? 'Soft' : 'Hard');
const round = (ms: number) => Math.round(ms * 100) / 100;

/** The fields of a report before `assets`, in their order: what changes with every cook (time, totals, paks). */
export type ReportHead = Pick<CookReport, 'version' | 'project' | 'projectDir' | 'generatedAt' | 'ok' | 'totals' | 'phases' | 'chunks' | 'recooked'>;
/** The rest of a report, from `assets` on: what the content, plan and problems decide. */
export type ReportBody = Omit<CookReport, keyof ReportHead>;

/** Files relative to the project, with '/' (path.relative is slow at 20k calls). */
function relativeTo(projectDir: string): (f: string) => string {
  const prefix = projectDir + path.sep;
  return (f: string) => {
    const r = f.startsWith(prefix) ? f.slice(prefix.length) : path.relative(projectDir, f);
    return path.sep === '/' ? r : r.split(path.sep).join('/');
  };
}

/** Build the report's data from what the cook already knows; reads no file. */
export function buildCookReport(input: ReportInput): CookReport {
  return { ...buildReportHead(input), ...buildReportBody(input) };
}

/** The report's head (see ReportHead): a pass over the per-asset reports for the chunk totals, nothing else. */
export function buildReportHead(input: ReportInput): ReportHead {
  const { config, plan, summary } = input;
  const rel = relativeTo(config.projectDir);
  const chunkTotals = new Map<string, { assets: number; bytesOut: number }>();
  for (const a of summary.assetReports) {
    const c = chunkTotals.get(a.chunk) ?? { assets: 0, bytesOut: 0 };
    c.assets++;
    c.bytesOut += a.status === 'failed' ? 0 : a.bytesOut;
    chunkTotals.set(a.chunk, c);
  }
  const chunks = plan.chunks.map((name) => {
    const t = chunkTotals.get(name) ?? { assets: 0, bytesOut: 0 };
    const pak = summary.paks.find((p) => p.chunk === name);
    return {
      name,
      assets: t.assets,
      bytesOut: t.bytesOut,
      ...(pak ? { pak: { file: rel(pak.file), bytes: pak.bytes, entries: pak.entries, written: pak.written } } : {}),
    };
  });
  chunks.sort((a, b) => compareChunks(a.name, b.name));
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
  };
}

/** The report's body (see ReportBody): assets, chains, referrers, references and problems. */
export function buildReportBody(input: ReportInput): ReportBody {
  const { config, plan, summary } = input;
  const rel = relativeTo(config.projectDir);

  // The summary's per-asset reports are sorted by GUID, like the plan's lists. Per asset only
  // numbers are kept here (a million-asset cook must not build a million report objects).
  const all = summary.assetReports;
  const n = all.length;
  const index = new Map<string, number>();
  all.forEach((a, i) => index.set(a.guid, i));
  const bounded = n > (input.assetLimit ?? REPORT_ASSET_LIMIT);
  const cap = <T>(list: readonly T[]) => (bounded ? list.slice(0, REPORT_TOP) : list);
  const softExcluded = cap(plan.softExcluded);
  const missing = cap(plan.missing);
  // The package paths of reference targets the cook did not ship (left out, or not mounted).
  const packagePaths = new Map<string, string>();
  for (const e of [...softExcluded, ...missing]) if (!index.has(e.guid)) packagePaths.set(e.guid, e.guid);
  const recordList = Array.isArray(input.records) ? (input.records as readonly AssetRecord[]) : [...input.records];
  const { records, reportOf } = matchRecords(all, recordList, index);
  for (let j = 0; j < recordList.length; j++) if (reportOf[j] < 0 && packagePaths.has(recordList[j].guid)) packagePaths.set(recordList[j].guid, recordList[j].packagePath);
  const edges = resolveEdges(records, index);
  const bytesOut = (i: number) => shippedBytes(all[i]);
  const chains = linkChains(plan, input.roots, index, all, edges, config.cook.soft === 'include');

  const listed = bounded ? selectListed(all, chains, bytesOut, input.listTop ?? REPORT_TOP) : Array.from({ length: n }, (_, i) => i);
  // Each asset's place in the list (-1: not listed), and the listed GUIDs for referrers the cook did not ship.
  const listedAt = new Int32Array(n).fill(-1);
  const listedByGuid = new Map<string, number>();
  listed.forEach((i, k) => {
    listedAt[i] = k;
    listedByGuid.set(all[i].guid, k);
  });
  const assets: ReportAsset[] = listed.map((i) => {
    const a = all[i];
    const out: ReportAsset = {
      path: a.path,
      guid: a.guid,
      className: records[i]?.className ?? '',
      file: rel(a.file),
      chunk: a.chunk,
      via: a.via,
      status: a.status,
      ...(a.reason ? { reason: a.reason } : {}),
      bytesIn: a.bytesIn,
      bytesOut: bytesOut(i),
      ms: round(a.ms),
      referrers: [],
    };
    const from = chains.from[i];
    if (from >= 0) {
      out.from = listedAt[from];
      out.fromVia = typeName(chains.fromVia[i]);
    }
    const root = chains.rootReason.get(i);
    if (root !== undefined) out.root = root;
    return out;
  });

  // Referrers, over the whole registry (an uncooked referrer is named by its path).
  // A package may import the same asset twice (Hard and Soft): count it once. `lastReferrer[to]`
  // is the record that last added itself to `to`, cheaper than a set per record. A shipped
  // record's edges are resolved already (`edges`); another's are looked up among the listed only.
  const lastReferrer = new Array<AssetRecord | undefined>(assets.length);
  const referrerCount = new Uint32Array(assets.length);
  const maxReferrers = bounded ? REPORT_REFERRERS : Infinity;
  const refer = (r: AssetRecord, from: number, to: number) => {
    if (to < 0 || lastReferrer[to] === r) return;
    lastReferrer[to] = r;
    if (referrerCount[to]++ >= maxReferrers) return;
    const fromListed = from < 0 ? -1 : listedAt[from];
    assets[to].referrers.push(fromListed >= 0 ? fromListed : from < 0 ? r.packagePath : all[from].path);
  };
  for (let j = 0; j < recordList.length; j++) {
    const r = recordList[j];
    const from = reportOf[j];
    if (from >= 0 && records[from] === r) {
      for (let e = edges.start[from]; e < edges.start[from + 1]; e++) if (edges.to[e] >= 0) refer(r, from, listedAt[edges.to[e]]);
    } else {
      for (const d of r.dependencies) refer(r, from, listedByGuid.get(d.guid) ?? -1);
    }
  }
  if (bounded) assets.forEach((a, k) => referrerCount[k] > a.referrers.length && (a.referrerCount = referrerCount[k]));

  const pathOf = (guid: string) => {
    const i = index.get(guid);
    return i !== undefined ? (records[i]?.packagePath ?? all[i].path) : packagePaths.get(guid);
  };
  const ref = (e: { referrer: AssetRecord; guid: string; type: DependencyType }): ReportReference => ({
    referrer: e.referrer.packagePath,
    target: pathOf(e.guid) ?? e.guid,
    guid: e.guid,
    type: typeName(e.type),
  });
  return {
    assets,
    ...(bounded
      ? {
          listed: { assets: assets.length, of: n, referrersPerAsset: REPORT_REFERRERS },
          folders: reportFolders(all),
        }
      : {}),
    softExcluded: softExcluded.map(ref),
    missing: missing.map(ref),
    // Files relative to the project, as the CLI prints them.
    problems: cap(summary.problems).map((p) => (p.file && path.isAbsolute(p.file) ? { ...p, file: rel(p.file) } : p)),
  };
}

/** The bytes an asset puts in the paks, as the report counts them: a failed asset ships none. */
export function shippedBytes(a: AssetReport): number {
  return a.status === 'failed' ? 0 : a.bytesOut;
}

/** A bounded report's folder totals, over every asset, listed or not; in chunk order, then by folder. */
export function reportFolders(all: readonly AssetReport[]): ReportFolder[] {
  // Per chunk (a few), then per folder: no key string made per asset.
  const chunks = new Map<string, Map<string, ReportFolder>>();
  let chunk: string | undefined;
  let folders: Map<string, ReportFolder> | undefined;
  for (const a of all) {
    if (a.chunk !== chunk) {
      chunk = a.chunk;
      folders = chunks.get(chunk);
      if (!folders) chunks.set(chunk, (folders = new Map()));
    }
    const folder = a.path.slice(0, Math.max(0, a.path.lastIndexOf('/')));
    let f = folders!.get(folder);
    if (!f) folders!.set(folder, (f = { chunk: a.chunk, folder, assets: 0, bytesOut: 0 }));
    f.assets++;
    f.bytesOut += shippedBytes(a);
  }
  return [...chunks.values()].flatMap((m) => [...m.values()]).sort((a, b) => compareChunks(a.chunk, b.chunk) || (a.folder < b.folder ? -1 : a.folder > b.folder ? 1 : 0));
}

/**
 * The assets a bounded body lists after a cook that changed a few assets' numbers, from the last
 * body's list (`listedThen`, in its order) and this cook's numbers: what selectListed picks now,
 * following chains through the last body's links (every listed asset's `from` is listed, so those
 * links are the chains wherever selectListed follows them from a listed asset). Indexes into the
 * GUID-sorted `assetReports`, ascending, as buildReportBody lists them. Undefined when the lists
 * pick an asset the last body did not list (its chain and referrers are not in that body), or a
 * listed asset is not among this cook's assets.
 */
export function relistBounded(input: ReportInput, listedThen: ReadonlyArray<Pick<ReportAsset, 'guid' | 'from' | 'root'>>): number[] | undefined {
  const all = input.summary.assetReports;
  const n = all.length;
  // The reports are sorted by GUID: a binary search per listed asset, not a map of every asset.
  const indexOf = (guid: string): number => {
    let lo = 0;
    let hi = n - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const g = all[mid].guid;
      if (g === guid) return mid;
      if (g < guid) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  };
  const at = listedThen.map((a) => indexOf(a.guid));
  if (at.some((i) => i < 0)) return undefined;
  const chains: Chains = { from: new Int32Array(n).fill(-1), fromVia: new Uint8Array(n), rootReason: new Map() };
  const was = new Set(at);
  listedThen.forEach((a, k) => {
    if (a.from !== undefined) chains.from[at[k]] = at[a.from] ?? -1;
    if (a.root !== undefined) chains.rootReason.set(at[k], a.root);
  });
  const bytesOut = (i: number) => shippedBytes(all[i]);
  const listed = selectListed(all, chains, bytesOut, input.listTop ?? REPORT_TOP);
  return listed.every((i) => was.has(i)) ? listed : undefined;
}

/**
 * What a bounded report lists (indexes into the GUID-sorted assets, ascending): the `listTop`
 * largest, slowest (of those cooked now), failed or verbatim, and soft-only assets, every root,
 * and every asset on their chains from a root, so each listed asset's chain is listed too.
 */
function selectListed(all: readonly AssetReport[], chains: Chains, bytesOut: (i: number) => number, listTop: number): number[] {
  const pick = new Set<number>();
  const top = (keep: (i: number) => boolean, by: (i: number) => number) => {
    for (const i of topIndexes(all.length, keep, by, listTop)) pick.add(i);
  };
  top((i) => bytesOut(i) > 0, bytesOut);
  top((i) => all[i].status !== 'cached', (i) => all[i].ms);
  top((i) => all[i].status === 'failed' || all[i].status === 'verbatim', () => 0);
  top((i) => all[i].via === 'soft', bytesOut);
  for (const i of chains.rootReason.keys()) pick.add(i);
  for (const i of [...pick]) for (let k = chains.from[i]; k >= 0 && !pick.has(k); k = chains.from[k]) pick.add(k);
  return [...pick].sort((x, y) => x - y);
}

/**
 * The `k` indexes of 0..n-1 that `keep` accepts with the largest `by`, ties to the lower index: the
 * first `k` of them sorted by (value desc, index asc), as a set in no order. One pass keeping a heap
 * of `k`: a cold 1M cook's report sorted ~560k indexes to keep 1000, for each top list.
 */
export function topIndexes(n: number, keep: (i: number) => boolean, by: (i: number) => number, k: number): Int32Array {
  const ids = new Int32Array(Math.max(0, Math.min(k, n)));
  const vals = new Float64Array(ids.length);
  // A min-heap on (value, then index descending): its root is the kept index that goes first.
  // Indexes come in ascending order, so one whose value only ties the root's ranks after it.
  let size = 0;
  for (let i = 0; i < n && ids.length > 0; i++) {
    if (!keep(i)) continue;
    const v = by(i);
    let at: number;
    if (size < ids.length) {
      at = size++;
      while (at > 0) {
        const up = (at - 1) >> 1;
        if (vals[up] < v) break;
        ids[at] = ids[up];
        vals[at] = vals[up];
        at = up;
      }
    } else {
      if (!(v > vals[0])) continue;
      at = 0;
      for (;;) {
        let c = 2 * at + 1;
        if (c >= size) break;
        if (c + 1 < size && (vals[c + 1] < vals[c] || (vals[c + 1] === vals[c] && ids[c + 1] > ids[c]))) c++;
        if (v < vals[c] || (v === vals[c] && i > ids[c])) break;
        ids[at] = ids[c];
        vals[at] = vals[c];
        at = c;
      }
    }
    ids[at] = i;
    vals[at] = v;
  }
  return ids.subarray(0, size);
}

interface Chains {
  /** The asset each was reached from (index), -1 for roots, text assets and unreached ones. */
  from: Int32Array;
  fromVia: Uint8Array;
  /** Roots (index) and why they are roots. */
  rootReason: Map<number, string>;
}

/**
 * Each asset's record (`records`, by asset index) and each record's asset (`reportOf`, by the
 * record's place in `list`, -1 for a record the cook did not ship), as `index` gives them. Both
 * lists come sorted by GUID (the registry's `all()`), so one merge pairs them without a lookup
 * per record; a list in any other order is looked up.
 */
function matchRecords(all: readonly AssetReport[], list: readonly AssetRecord[], index: ReadonlyMap<string, number>): { records: Array<AssetRecord | undefined>; reportOf: Int32Array } {
  const records = new Array<AssetRecord | undefined>(all.length);
  const reportOf = new Int32Array(list.length).fill(-1);
  let j = 0;
  let increasing = true;
  for (let i = 1; i < all.length && increasing; i++) increasing = all[i - 1].guid < all[i].guid;
  if (increasing) {
    for (let i = 0; j < list.length; j++) {
      const g = list[j].guid;
      if (j > 0 && !(list[j - 1].guid < g)) break;
      while (i < all.length && all[i].guid < g) i++;
      if (i < all.length && all[i].guid === g) {
        records[i] = list[j];
        reportOf[j] = i;
      }
    }
  }
  // From where the list is out of order (or the reports are), by lookup.
  for (; j < list.length; j++) {
    const k = index.get(list[j].guid);
    if (k === undefined) continue;
    records[k] = list[j];
    reportOf[j] = k;
  }
  return { records, reportOf };
}

/** Every shipped record's dependencies in order, each target as an asset index (-1: not shipped): edges of asset i are [start[i], start[i + 1]). */
interface Edges {
  start: Int32Array;
  to: Int32Array;
  type: Uint8Array;
}

/** Resolves each shipped record's dependencies once, for the chains (two walks) and the referrers. */
function resolveEdges(records: ReadonlyArray<AssetRecord | undefined>, index: ReadonlyMap<string, number>): Edges {
  const start = new Int32Array(records.length + 1);
  for (let i = 0; i < records.length; i++) start[i + 1] = start[i] + (records[i]?.dependencies.length ?? 0);
  const to = new Int32Array(start[records.length]);
  const type = new Uint8Array(to.length);
  for (let i = 0; i < records.length; i++) {
    const deps = records[i]?.dependencies;
    if (!deps) continue;
    for (let k = 0, e = start[i]; k < deps.length; k++, e++) {
      to[e] = index.get(deps[k].guid) ?? -1;
      type[e] = deps[k].type;
    }
  }
  return { start, to, type };
}

/** The chain link (`from`, its edge, `root`) of every cooked package; see the module comment. */
function linkChains(plan: CookPlan, roots: readonly CookRoot[], index: ReadonlyMap<string, number>, all: readonly AssetReport[], edges: Edges, followSoft: boolean): Chains {
  const n = all.length;
  const chains: Chains = { from: new Int32Array(n).fill(-1), fromVia: new Uint8Array(n), rootReason: new Map() };
  const reached = new Uint8Array(n);
  for (const chunk of plan.chunks) {
    const queue: number[] = [];
    for (const root of roots) {
      const i = index.get(root.guid);
      if (i === undefined || all[i].chunk !== chunk || reached[i]) continue;
      chains.rootReason.set(i, root.reason);
      reached[i] = 1;
      queue.push(i);
    }
    // Breadth-first over hard edges; then again from everything reached, over soft edges too.
    const passes: boolean[] = [false];
    if (followSoft) passes.push(true);
    for (const soft of passes) {
      const q = [...queue];
      for (let head = 0; head < q.length; head++) {
        const from = q[head];
        for (let e = edges.start[from]; e < edges.start[from + 1]; e++) {
          const type = edges.type[e];
          if (!soft && type === DependencyType.Soft) continue;
          const to = edges.to[e];
          if (to < 0 || reached[to] || all[to].chunk !== chunk || all[to].via === 'mount') continue;
          reached[to] = 1;
          chains.from[to] = from;
          chains.fromVia[to] = type;
          q.push(to);
          queue.push(to);
        }
      }
    }
  }
  return chains;
}

/**
 * What decides a report's body when every asset came from the cache: every record (GUID, content
 * hash, paths: a record the cook does not ship still names its imports as referrers), the config,
 * the plan's roots, each asset's chunk, route and sizes, the problems, the limits, and this
 * module's code. Undefined when any asset was cooked, fetched or failed now (its report says so,
 * and timing), so only a cook that changed nothing can find its body already written.
 */
export function reportBodyKey(input: ReportInput): string | undefined {
  const { summary } = input;
  if (summary.assetReports.some((a) => a.status !== 'cached')) return undefined;
  const h = createXxh64();
  const parts: string[] = [];
  const flush = () => {
    h.update(Buffer.from(parts.join(''), 'utf8'));
    parts.length = 0;
  };
  parts.push(
    `LREPORT ${REPORT_VERSION}\n${input.assetLimit ?? REPORT_ASSET_LIMIT} ${input.listTop ?? REPORT_TOP}\n`,
    buildReportBody.toString(),
    selectListed.toString(),
    topIndexes.toString(),
    matchRecords.toString(),
    resolveEdges.toString(),
    linkChains.toString(),
    reportFolders.toString(),
    shippedBytes.toString(),
    canonicalJson(input.config),
    '\n',
  );
  for (const r of input.roots) parts.push(`${r.guid} ${r.chunk} ${r.reason}\n`);
  if (input.recordsIdentity !== undefined) {
    parts.push(`registry ${input.recordsIdentity}\n`);
  } else {
    for (const r of input.records) {
      parts.push(`${r.guid}\t${r.kind}\t${r.hash}\t${r.virtualPath}\t${r.file}\n`);
      if (parts.length >= 4096) flush();
    }
  }
  for (const a of summary.assetReports) {
    parts.push(`${a.guid}\t${a.chunk}\t${a.via}\t${a.bytesIn}\t${a.bytesOut}\n`);
    if (parts.length >= 4096) flush();
  }
  parts.push(JSON.stringify(summary.problems));
  flush();
  return hashHex(h.digest());
}

/**
 * What a report's body is made of, apart from each asset's own numbers (status, reason, bytes in
 * and out, time): the key of everything else (the code, the limits, the config, the roots, the
 * plan's facts, the problems, the asset count) and the sum (mod 2^64) of each asset's term
 * ({@link reportAssetTerm}). Two cooks with the same key have bodies that differ only in the
 * objects of the assets whose terms differ, and a sum says whether those are all the assets that
 * differ (cook/report/writeCookReport.ts patches them; a bounded body, whose list also depends
 * on the numbers, is listed again by relistBounded). Undefined without `planFacts`.
 */
export interface ReportFrame {
  key: string;
  /** The sum of the assets' terms, two 32-bit lanes (see reportAssetTerm). */
  sum: [number, number];
  /** The assets not taken from the cache (their numbers are this cook's). */
  notCached: string[];
}

export function reportFrame(input: ReportInput): ReportFrame | undefined {
  const { summary } = input;
  const all = summary.assetReports;
  const limit = input.assetLimit ?? REPORT_ASSET_LIMIT;
  if (input.planFacts === undefined) return undefined;
  const parts = [
    `LREPORTFRAME 1\n${limit} ${input.listTop ?? REPORT_TOP}\n`,
    buildReportBody.toString(),
    selectListed.toString(),
    topIndexes.toString(),
    matchRecords.toString(),
    resolveEdges.toString(),
    linkChains.toString(),
    reportFolders.toString(),
    shippedBytes.toString(),
    reportAssetFields.toString(),
    reportAssetTerm.toString(),
    canonicalJson(input.config),
    `\nplan ${input.planFacts}\nassets ${all.length}\n`,
  ];
  for (const r of input.roots) parts.push(`${r.guid} ${r.chunk} ${r.reason}\n`);
  parts.push(JSON.stringify(summary.problems));
  const sum: [number, number] = [0, 0];
  const notCached: string[] = [];
  const term: [number, number] = [0, 0];
  for (const a of all) {
    const failed = a.status === 'failed';
    reportAssetTerm(a.guid, a.status, a.reason, a.bytesIn, failed ? 0 : a.bytesOut, round(a.ms), term);
    sum[0] = (sum[0] + term[0]) >>> 0;
    sum[1] = (sum[1] + term[1]) >>> 0;
    if (a.status !== 'cached') notCached.push(a.guid);
  }
  return { key: hashString(parts.join('')), sum, notCached };
}

/** An asset's own numbers as its report object holds them. */
export type ReportAssetNumbers = Pick<ReportAsset, 'status' | 'reason' | 'bytesIn' | 'bytesOut' | 'ms'>;

export function reportAssetNumbers(a: AssetReport): ReportAssetNumbers {
  return { status: a.status, ...(a.reason ? { reason: a.reason } : {}), bytesIn: a.bytesIn, bytesOut: a.status === 'failed' ? 0 : a.bytesOut, ms: round(a.ms) };
}

/** A term's first words: status, reason, then the three numbers' exact bits (the Float64Array below, seen as u32s). */
const termWords = new Uint32Array(8);
const numbers = new Float64Array(termWords.buffer, 8, 3);
const textWords = new Map<string, number>();

/** A string's 32-bit FNV-1a (status and reason: a few values, each hashed once). */
function text32(s: string): number {
  let h = textWords.get(s);
  if (h === undefined) {
    h = 0x811c9dc5;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
    textWords.set(s, (h >>>= 0));
  }
  return h;
}

/**
 * An asset's term of a frame's sum, into `out`: two 32-bit lanes of a multiply-xorshift hash of its
 * GUID's characters, status, reason and the numbers' exact bits. In JavaScript, not xxh64 through
 * wasm: one string and one call per asset cost ~10 ms at 20k; this is under 1 ms. A change check,
 * never a content address: the sum only says whether the assets not named did not change.
 */
export function reportAssetTerm(guid: string, status: string, reason: string | undefined, bytesIn: number, bytesOut: number, ms: number, out: [number, number]): void {
  const w = termWords;
  w[0] = text32(status);
  w[1] = reason ? text32(reason) : 0;
  numbers[0] = bytesIn;
  numbers[1] = bytesOut;
  numbers[2] = ms;
  let a = 0x9747b28c;
  let b = 0x1b873593;
  for (let i = 0, n = guid.length + 8; i < n; i++) {
    const x = i < 8 ? w[i] : guid.charCodeAt(i - 8);
    a = Math.imul(a ^ x, 0x5bd1e995);
    a ^= a >>> 15;
    b = Math.imul(b ^ x, 0x27d4eb2f);
    b ^= b >>> 13;
  }
  a = fmix32(a ^ Math.imul(b, 0x165667b1));
  b = fmix32(b ^ a);
  out[0] = a;
  out[1] = b;
}

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * An asset's report object with other numbers: every other field as `old` has it, in the order
 * buildReportBody gives them. Undefined when `old` has a field that order does not know.
 */
export function reportAssetFields(old: Record<string, unknown>, n: ReportAssetNumbers): Record<string, unknown> | undefined {
  const known = ['path', 'guid', 'className', 'file', 'chunk', 'via', 'status', 'reason', 'bytesIn', 'bytesOut', 'ms', 'referrers', 'from', 'fromVia', 'root', 'referrerCount'];
  for (const k of Object.keys(old)) if (!known.includes(k)) return undefined;
  const out: Record<string, unknown> = { path: old.path, guid: old.guid, className: old.className, file: old.file, chunk: old.chunk, via: old.via, status: n.status };
  if (n.reason) out.reason = n.reason;
  out.bytesIn = n.bytesIn;
  out.bytesOut = n.bytesOut;
  out.ms = n.ms;
  out.referrers = old.referrers;
  for (const k of ['from', 'fromVia', 'root', 'referrerCount']) if (k in old) out[k] = old[k];
  return out;
}
