/**
 * The per-batch cook: after the registry took a batch, re-plan (in memory, from the records),
 * cook exactly the assets whose own content changed or that newly ship (a new file, a rename, a
 * dependency that a changed referrer now reaches), tombstone the paths that stopped shipping (a
 * deletion, a rename's old path, an asset no root reaches any more), and write the dev pak.
 *
 * Referrers are NOT re-cooked when a dependency changes: a package imports by GUID, so its cooked
 * bytes do not depend on the dependency's content (see cook/cookCache.ts). Only the plan (what
 * ships, in which chunk) depends on the graph, and it is recomputed every batch.
 */
import type { ProjectConfig } from '../config/index.js';
import { assetCookContext, cookPackageAsset, cookTextAsset, type AssetCookContext, type AssetCookResult } from '../cook/cookAsset.js';
import { CACHE_FILE_NAME, CookCache } from '../cook/cookCache.js';
import { resolveCookRoots, type RootLookup } from '../cook/cookRoots.js';
import { planCook, type PlannedAsset } from '../cook/planCook.js';
import { REGISTRY_ENTRY } from '../cook/cookProject.js';
import { encodeCookedRegistry } from '../src/format/cookedRegistry.js';
import { hashHex, xxh64 } from '../src/util/hash.js';
import type { LuminaLog } from '../src/errors.js';
import type { ProgressBus } from '../src/log/events.js';
import type { Logger } from '../src/log/logger.js';
import type { AssetRecord } from '../src/registry/types.js';
import path from 'node:path';
import { DevPak } from './DevPak.js';

export interface BatchCookResult {
  cooked: number;
  failed: LuminaLog[];
  /** Paths newly tombstoned in the dev pak. */
  removed: number;
  /** False when the batch could not change what ships (content-only edits): no re-plan. */
  replanned: boolean;
  devPakWritten: boolean;
  ms: number;
}

/** What ships at a virtual path: the record's GUID and content hash as last cooked. */
interface Shipped {
  guid: string;
  hash: string;
}

/** Which GUIDs a registry batch touched (AssetRegistry's onChange payload). */
export interface ChangedGuids {
  added: readonly string[];
  changed: readonly string[];
  removed: readonly string[];
}

/** Everything about a record that can change the plan (what ships where); content is not in it. */
function graphSignature(r: AssetRecord): string {
  return `${r.virtualPath}|${r.mount}|${r.kind}|${r.flags}|${r.dependencies.map((d) => `${d.guid}${d.type}`).join(',')}`;
}

export interface IncrementalCookOptions {
  config: ProjectConfig;
  registry: RootLookup;
  bus: ProgressBus;
  log: Logger;
}

export class IncrementalCook {
  readonly devPak: DevPak;
  private cache!: CookCache;
  private ctx!: AssetCookContext;
  /** Virtual path -> what ships there, as of the last full cook or batch. */
  private shipped = new Map<string, Shipped>();
  /** xxh64 of the AssetRegistry.bin the paks (chunk or dev) hold now. */
  private registryHash = '';
  /** GUID -> graph signature of every record at the last plan. */
  private readonly signatures = new Map<string, string>();

  constructor(private readonly opts: IncrementalCookOptions) {
    const { config } = opts;
    this.devPak = new DevPak({ paksDir: config.paksDir, mountPoint: config.paks.mountPoint, priority: config.paks.priority + 1, level: config.cook.compressionLevel });
  }

  /**
   * (Re)load the cook cache from disk and take the current plan as what the chunk paks hold.
   * Called after every full cook, which writes the cache and the chunk paks itself.
   */
  async reset(): Promise<void> {
    const { config, log } = this.opts;
    const { cache, warning } = await CookCache.load(path.join(config.intermediatesDir, CACHE_FILE_NAME), config.cookedDir);
    if (warning) log.warn({ code: warning.code, file: warning.file }, warning.message);
    this.cache = cache;
    // A texture that falls back to RGBA8 in a batch is said, as the full cook says it.
    this.ctx = assetCookContext(config, cache, (file, reason) => log.warn({ code: 'TEXTURE_INVALID', file }, `stored as RGBA8: ${reason}`));
    this.shipped = this.plan();
    this.registryHash = hashHex(xxh64(this.registryBytes(this.shipped)));
  }

  /** AssetRegistry.bin for what ships, as the full cook encodes it. */
  private registryBytes(shipped: ReadonlyMap<string, Shipped>): Uint8Array {
    const packages: AssetRecord[] = [];
    const texts: { guid: string; path: string }[] = [];
    for (const s of shipped.values()) {
      const r = this.opts.registry.get(s.guid);
      if (!r) continue;
      if (r.kind === 'package') packages.push(r);
      else texts.push({ guid: r.guid, path: r.virtualPath });
    }
    return encodeCookedRegistry(packages, texts);
  }

  /** Everything the current registry ships, by virtual path; remembers each record's graph signature. */
  private plan(): Map<string, Shipped> {
    const { config, registry } = this.opts;
    const { roots } = resolveCookRoots(registry, config);
    const plan = planCook(registry, roots, { soft: config.cook.soft, mountChunks: new Map(config.mounts.map((m) => [m.alias, m.chunk])) });
    const out = new Map<string, Shipped>();
    const add = (p: PlannedAsset) => out.set(p.record.virtualPath, { guid: p.record.guid, hash: p.record.hash });
    plan.packages.forEach(add);
    plan.textAssets.forEach(add);
    this.signatures.clear();
    for (const r of registry.all()) this.signatures.set(r.guid, graphSignature(r));
    return out;
  }

  /**
   * The plan after `change`. Planning walks the whole graph (tens of ms at 10k assets), so it is
   * skipped when no asset came or went and every changed record kept its graph signature (path,
   * mount, flags, imports): then the same assets ship and only their content changed.
   */
  private nextPlan(change: ChangedGuids | undefined): { next: Map<string, Shipped>; replanned: boolean } {
    const { registry } = this.opts;
    const contentOnly =
      change !== undefined &&
      change.added.length === 0 &&
      change.removed.length === 0 &&
      change.changed.every((g) => {
        const r = registry.get(g);
        return r !== undefined && this.signatures.get(g) === graphSignature(r);
      });
    if (!contentOnly) return { next: this.plan(), replanned: true };
    const next = new Map(this.shipped);
    for (const g of change.changed) {
      const r = registry.get(g)!;
      if (next.has(r.virtualPath)) next.set(r.virtualPath, { guid: g, hash: r.hash });
    }
    return { next, replanned: false };
  }

  /**
   * Cook what changed since the last batch and write the dev pak. `change` is the registry's
   * notification for the batch (undefined: unknown, re-plan). Order: cooked files, then the dev pak
   * that points at them (the edit is readable from here), then the cook cache (after the outputs
   * it names; off the latency path).
   */
  async runBatch(change?: ChangedGuids): Promise<BatchCookResult> {
    const t0 = performance.now();
    const { registry, bus } = this.opts;
    const { next, replanned } = this.nextPlan(change);
    const todo: AssetRecord[] = [];
    for (const [vp, s] of next) {
      const was = this.shipped.get(vp);
      if (was && was.guid === s.guid && was.hash === s.hash) continue;
      const record = registry.get(s.guid);
      if (!record) continue;
      todo.push(record);
    }
    let removed = 0;
    for (const vp of this.shipped.keys()) {
      if (!next.has(vp)) {
        this.devPak.tombstone(vp);
        removed++;
      }
    }
    // Cooking overwrites `Saved/Cooked/<path>` in place. Were the saved manifest still to hold the
    // old entry when a kill lands between that overwrite and the next save, the entry would describe
    // bytes that are no longer there (and a revert to the old source of the same cooked size would
    // be a false hit). So the entries of everything about to be re-cooked leave the manifest first.
    let invalidated = false;
    for (const record of todo) {
      if (this.cache.peek(record.guid)) {
        this.cache.delete(record.guid);
        invalidated = true;
      }
    }
    if (invalidated) await this.cache.save();
    const failed: LuminaLog[] = [];
    let cooked = 0;
    // A batch is a handful of files: cook them in parallel, the libuv pool does the deflate.
    await Promise.all(
      todo.map(async (record) => {
        bus.emit({ type: 'COOK_START', asset: record.virtualPath, file: record.file });
        const r: AssetCookResult = record.kind === 'package' ? await cookPackageAsset(record, this.ctx) : await cookTextAsset(record, this.ctx);
        bus.emit({ type: 'COOK_END', asset: record.virtualPath, file: record.file, cached: r.status === 'cached', bytesIn: r.bytesIn, bytesOut: r.bytesOut });
        if (r.error) {
          const log = r.error.toLog();
          failed.push(log);
          bus.emit({ type: r.status === 'failed' ? 'ERROR' : 'WARNING', log });
        }
        if (r.output && r.status !== 'failed') {
          this.devPak.put(record.virtualPath, { kind: record.kind === 'package' ? 'cooked' : 'file', file: r.output });
          cooked++;
        } else {
          // Nothing new to ship: keep whatever the paks held, and retry the asset next batch.
          next.delete(record.virtualPath);
          const was = this.shipped.get(record.virtualPath);
          if (was) next.set(record.virtualPath, was);
        }
      }),
    );
    this.shipped = next;
    if (replanned) {
      // What ships or how it links changed: the runtime's registry must say so too.
      const bytes = this.registryBytes(next);
      const h = hashHex(xxh64(bytes));
      if (h !== this.registryHash) {
        this.devPak.put(`/${REGISTRY_ENTRY}`, { kind: 'bytes', data: bytes });
        this.registryHash = h;
      }
    }
    const devPakWritten = await this.devPak.write();
    await this.cache.save();
    return { cooked, failed, removed, replanned, devPakWritten, ms: performance.now() - t0 };
  }
}
