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
import type { Cooker, CookProblem } from '../cook/Cooker.js';
import { REGISTRY_ENTRY } from '../cook/Cooker.js';
import type { PlannedAsset } from '../cook/planCook.js';
import { hashHex, xxh64, xxh64Text } from '../src/util/hash.js';
import type { LuminaLog } from '../src/errors.js';
import type { AssetRecord } from '../src/registry/types.js';
import path from 'node:path';
import { DevPak } from './DevPak.js';
import fs from 'node:fs';
import { MAIN_CHUNK } from '../cook/planCook.js';
import { SHADER_CACHE_ENTRY } from '../src/format/shaderCache.js';
import { readPackageTables } from '../src/format/packageReader.js';
import { MATERIAL_CLASS, packagesWithMaterials } from '../cook/shaders/materials.js';

export interface BatchCookResult {
  cooked: number;
  /** Errors of this batch (assets that failed to cook). */
  failed: LuminaLog[];
  /** Warnings (an asset shipped verbatim, a texture stored as RGBA8). */
  warnings: LuminaLog[];
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

/**
 * Everything about a record that can change the plan (what ships where), content not in it, as
 * the xxh64 of its text: the daemon keeps one per record, and at a million assets the texts (path
 * and every import) were ~350 MB. Two different texts with one digest (odds 2^-64 per edited
 * record) would skip a re-plan that the next full cook makes.
 */
function graphSignature(r: AssetRecord): bigint {
  return xxh64Text(`${r.virtualPath}|${r.mount}|${r.kind}|${r.flags}|${r.dependencies.map((d) => `${d.guid}${d.type}`).join(',')}`);
}

export class IncrementalCook {
  readonly devPak: DevPak;
  /** Virtual path -> what ships there, as of the last full cook or batch. */
  private shipped = new Map<string, Shipped>();
  /** xxh64 of the AssetRegistry.bin the paks (chunk or dev) hold now. */
  private registryHash = '';
  /** xxh64 of the ShaderCache.bin (all permutations) the paks hold now. */
  private shaderHash = '';
  /** GUID -> graph signature of every record at the last plan. */
  private readonly signatures = new Map<string, bigint>();
  /**
   * GUIDs of the packages that hold a material export (as of the last full cook, kept up to date
   * per batch), or undefined when unknown. Only an edit of one of them, before or after, can change
   * which shader permutations ship, so any other package edit skips the shader cook, whose material
   * scan reads and rewrites a record of every package (megabytes at 50k assets).
   */
  private materialPackages: Set<string> | undefined;

  constructor(private readonly cooker: Cooker) {
    const { config } = cooker;
    this.devPak = new DevPak({ paksDir: config.paksDir, mountPoint: config.paks.mountPoint, priority: config.paks.priority + 1, level: config.cook.compressionLevel });
  }

  /**
   * Take the Cooker's last plan (the full cook's, just done) as what the chunk paks hold.
   * The cook cache is the Cooker's, in memory: nothing is re-read from disk.
   */
  reset(): void {
    const { config, lastPlan } = this.cooker;
    this.devPak.setBase((lastPlan?.chunks ?? []).map((c) => path.join(config.paksDir, `${c}.pak`)));
    this.shipped = this.shippedOf(this.cooker.lastPlan ? [...this.cooker.lastPlan.packages, ...this.cooker.lastPlan.textAssets] : this.planned());
    // The full cook's registry is this plan's when all of it shipped: hashed, not encoded again
    // (at a million assets an encode of ~550k records, seconds and ~100 MB, on the daemon's start).
    const made = this.cooker.lastRegistry;
    this.registryHash = hashHex(made && made.plan === this.cooker.lastPlan ? made.xxh64 : xxh64(this.registryBytes(this.shipped)));
    this.materialPackages = this.readMaterialPackages();
    // The full cook wrote every permutation into Saved/Cooked/ShaderCache.bin.
    try {
      this.shaderHash = hashHex(xxh64(fs.readFileSync(path.join(this.cooker.config.cookedDir, SHADER_CACHE_ENTRY))));
    } catch {
      this.shaderHash = '';
    }
  }

  /** The packages with materials, from the full cook's material scan (ShaderMaterials.bin); undefined when it cannot be read. */
  private readMaterialPackages(): Set<string> | undefined {
    return packagesWithMaterials(this.cooker.config.intermediatesDir);
  }

  /** Whether any of these (just cooked) packages holds a material export now or did before; updates the set. */
  private async touchesMaterials(records: readonly AssetRecord[]): Promise<boolean> {
    const known = this.materialPackages;
    if (!known) return records.length > 0;
    let touched = false;
    for (const r of records) {
      let now: boolean;
      try {
        now = (await readPackageTables(r.file, r.size)).exports.some((e) => e.className === MATERIAL_CLASS);
      } catch {
        now = true; // unreadable: let the shader cook report it
      }
      if (now || known.has(r.guid)) touched = true;
      if (now) known.add(r.guid);
      else known.delete(r.guid);
    }
    return touched;
  }

  /** AssetRegistry.bin for what ships, as the full cook encodes it. */
  private registryBytes(shipped: ReadonlyMap<string, Shipped>): Uint8Array {
    const records: AssetRecord[] = [];
    for (const s of shipped.values()) {
      const r = this.cooker.registry.get(s.guid);
      if (r) records.push(r);
    }
    return this.cooker.registryBytes(records);
  }

  private planned(): PlannedAsset[] {
    const plan = this.cooker.plan();
    return [...plan.packages, ...plan.textAssets];
  }

  /** What ships by virtual path; remembers each record's graph signature. */
  private shippedOf(assets: PlannedAsset[]): Map<string, Shipped> {
    const out = new Map<string, Shipped>();
    for (const p of assets) out.set(p.record.virtualPath, { guid: p.record.guid, hash: p.record.hash });
    this.signatures.clear();
    for (const r of this.cooker.registry.all()) this.signatures.set(r.guid, graphSignature(r));
    return out;
  }

  /** Everything the current registry ships. */
  private plan(): Map<string, Shipped> {
    return this.shippedOf(this.planned());
  }

  /**
   * The plan after `change`. Planning walks the whole graph (tens of ms at 10k assets), so it is
   * skipped when no asset came or went and every changed record kept its graph signature (path,
   * mount, flags, imports): then the same assets ship and only their content changed.
   */
  private nextPlan(change: ChangedGuids | undefined): { next: Map<string, Shipped>; replanned: boolean; edits?: Map<string, Shipped> } {
    const { registry } = this.cooker;
    const contentOnly =
      change !== undefined &&
      change.added.length === 0 &&
      change.removed.length === 0 &&
      change.changed.every((g) => {
        const r = registry.get(g);
        return r !== undefined && this.signatures.get(g) === graphSignature(r);
      });
    if (!contentOnly) return { next: this.plan(), replanned: true };
    // The same assets ship: only the edited ones can differ. Nothing here is proportional to the
    // project (no copy of the 50k-entry map per save): `next` is the shipped map itself, updated
    // in place once the edits have cooked.
    const edits = new Map<string, Shipped>();
    for (const g of change.changed) {
      const r = registry.get(g)!;
      if (this.shipped.has(r.virtualPath)) edits.set(r.virtualPath, { guid: g, hash: r.hash });
    }
    return { next: this.shipped, replanned: false, edits };
  }

  /**
   * Cook what changed since the last batch and write the dev pak. `change` is the registry's
   * notification for the batch (undefined: unknown, re-plan). Order: cooked files, then the dev pak
   * that points at them (the edit is readable from here), then the cook cache (after the outputs
   * it names; off the latency path).
   */
  async runBatch(change?: ChangedGuids, opts: { shadersChanged?: boolean } = {}): Promise<BatchCookResult> {
    const t0 = performance.now();
    const { registry } = this.cooker;
    const { next, replanned, edits } = this.nextPlan(change);
    const todo: AssetRecord[] = [];
    for (const [vp, s] of edits ?? next) {
      const was = this.shipped.get(vp);
      if (was && was.guid === s.guid && was.hash === s.hash) continue;
      const record = registry.get(s.guid);
      if (!record) continue;
      todo.push(record);
    }
    let removed = 0;
    for (const vp of replanned ? this.shipped.keys() : []) {
      if (!next.has(vp)) {
        this.devPak.tombstone(vp);
        removed++;
      }
    }
    const problems: CookProblem[] = [];
    let cooked = 0;
    // A batch is a handful of files: cook them in parallel, the libuv pool does the deflate.
    // Each asset journals its own cache entry (and drops the old one before overwriting its output).
    await this.cooker.cookAssets(todo, problems, (record, r) => {
      if (r.output && r.status !== 'failed') {
        this.devPak.put(record.virtualPath, { kind: record.kind === 'package' ? 'cooked' : 'file', file: r.output });
        cooked++;
        const edit = edits?.get(record.virtualPath);
        if (edit) next.set(record.virtualPath, edit);
      } else if (!edits) {
        // Nothing new to ship: keep whatever the paks held, and retry the asset next batch.
        next.delete(record.virtualPath);
        const was = this.shipped.get(record.virtualPath);
        if (was) next.set(record.virtualPath, was);
      }
    });
    this.shipped = next;
    // Shaders: a shader file changed, the plan did, or a package that holds (or held) a material
    // did (a material's source or defines may have).
    // Permutations whose key did not change come from the shader cache; the dev pak carries the
    // new ShaderCache.bin of everything that ships, above every chunk's.
    if (opts.shadersChanged || replanned || (await this.touchesMaterials(todo.filter((r) => r.kind === 'package')))) {
      const packages: Array<{ record: AssetRecord; chunk: string }> = [];
      for (const sh of next.values()) {
        const record = registry.get(sh.guid);
        if (record?.kind === 'package') packages.push({ record, chunk: MAIN_CHUNK });
      }
      const res = await this.cooker.cookShaders(packages, [MAIN_CHUNK], problems, { prune: false });
      const h = hashHex(xxh64(res.allBytes));
      if (res.ok && h !== this.shaderHash) {
        this.devPak.put(`/${SHADER_CACHE_ENTRY}`, { kind: 'bytes', data: res.allBytes });
        this.shaderHash = h;
      }
    }
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
    // Entries are journaled; this folds the journal only once it has grown.
    await this.cooker.saveCache();
    return { cooked, failed: problems.filter((p) => p.severity === 'error'), warnings: problems.filter((p) => p.severity === 'warning'), removed, replanned, devPakWritten, ms: performance.now() - t0 };
  }
}
