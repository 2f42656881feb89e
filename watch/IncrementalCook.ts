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
import { cookPackageAsset, cookTextAsset, type AssetCookContext, type AssetCookResult } from '../cook/cookAsset.js';
import { CACHE_FILE_NAME, CookCache, settingsHashes } from '../cook/cookCache.js';
import { resolveCookRoots, type RootLookup } from '../cook/cookRoots.js';
import { planCook, type PlannedAsset } from '../cook/planCook.js';
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
  devPakWritten: boolean;
  ms: number;
}

/** What ships at a virtual path: the record's GUID and content hash as last cooked. */
interface Shipped {
  guid: string;
  hash: string;
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
    this.ctx = {
      cache,
      cookedDir: config.cookedDir,
      settings: settingsHashes(config),
      editorOnlyClassPrefixes: config.cook.editorOnlyClassPrefixes,
      compressionLevel: config.cook.compressionLevel,
      textureEncoder: config.textures.encoder,
      onCookFailure: config.cook.onCookFailure,
    };
    this.shipped = this.plan();
  }

  /** Everything the current registry ships, by virtual path. */
  private plan(): Map<string, Shipped> {
    const { config, registry } = this.opts;
    const { roots } = resolveCookRoots(registry, config);
    const plan = planCook(registry, roots, { soft: config.cook.soft, mountChunks: new Map(config.mounts.map((m) => [m.alias, m.chunk])) });
    const out = new Map<string, Shipped>();
    const add = (p: PlannedAsset) => out.set(p.record.virtualPath, { guid: p.record.guid, hash: p.record.hash });
    plan.packages.forEach(add);
    plan.textAssets.forEach(add);
    return out;
  }

  /** Cook what changed since the last batch and write the dev pak. */
  async runBatch(): Promise<BatchCookResult> {
    const t0 = performance.now();
    const { registry, bus } = this.opts;
    const next = this.plan();
    const todo: AssetRecord[] = [];
    for (const [vp, s] of next) {
      const was = this.shipped.get(vp);
      if (was && was.guid === s.guid && was.hash === s.hash) continue;
      const record = registry.get(s.guid);
      if (!record) continue;
      // The cook cache is keyed by GUID and checks the output it recorded: after a rename that
      // output still exists under the OLD path, so the entry would be a hit pointing nowhere new.
      if (this.cache.peek(record.guid)?.cookedFile !== record.virtualPath.slice(1)) this.cache.delete(record.guid);
      todo.push(record);
    }
    let removed = 0;
    for (const vp of this.shipped.keys()) {
      if (!next.has(vp)) {
        this.devPak.tombstone(vp);
        removed++;
      }
    }
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
    // The cooked files are on disk before the cache names them, and before the pak points at them.
    await this.cache.save();
    const devPakWritten = await this.devPak.write();
    return { cooked, failed, removed, devPakWritten, ms: performance.now() - t0 };
  }
}
