/**
 * The last full cook's plan, kept in `Intermediates/CookPlan.json`, so a cook whose registry,
 * config and planning code are what that plan was made from takes it instead of planning again
 * (at 20k assets planning thawed, sorted and walked every record on every no-op).
 *
 * The plan (roots, closure, chunks, missing and soft-excluded edges, primary-name clashes) is a
 * function of the registry's records, the config, the working folder (a root may be a relative
 * file path) and the code that plans. The key names all four:
 * - the registry's `contentIdentity`: the checksums of the cache it was loaded from, defined only
 *   after a full scan that read, re-hashed and removed nothing (src/registry/AssetRegistry.ts), so
 *   any file edited, added, deleted or touched leaves the registry without one and the cook plans;
 * - the whole config (canonical JSON), and the working folder;
 * - the planning modules' own bytes (this file, planCook, Cooker, the registry's root resolver and
 *   lookups): a new version of the tool never takes an older one's plan.
 * A file whose key, version or checksum does not match, or that names a GUID the registry does not
 * answer with the same record, is not used: the cook plans as if there were none.
 *
 * Layout: one line of JSON (below), then a line with the xxh64 (hex) of that line's UTF-8 bytes.
 * GUIDs of the planned assets are concatenated (32 hex digits each), chunks are indexes into
 * `chunks`, and `via` is one letter per package.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ProjectConfig } from '../config/index.js';
import type { DependencyType } from '../src/format/packageTypes.js';
import type { CookRoot as ResolvedRoot } from '../src/registry/cookRoots.js';
import type { AssetRecord } from '../src/registry/types.js';
import { writeFileAtomic } from '../src/util/atomicWrite.js';
import { hashString } from '../src/util/hash.js';
import { canonicalJson } from './cookKey.js';
import type { AssetLookup, CookPlan, DependencyEdge, PlannedAsset } from './planCook.js';

export const PLAN_FILE_NAME = 'CookPlan.json';
const VERSION = 1;

/** What a full cook takes from planning: the plan, the resolved roots and the primary-name clashes. */
export interface PlanFacts extends CookPlan {
  roots: ResolvedRoot[];
  /** Declared roots that match no asset. */
  missingRoots: string[];
  /** Primary assets sharing a name (primaryNameClashes). */
  clashes: Array<{ name: string; records: AssetRecord[] }>;
  /**
   * shippedFingerprints of every planned asset (packages, then text assets): what the cook's
   * outputs phase computes when everything it planned ships (a no-op).
   */
  fingerprints?: { outputs: string; registryInputs: string };
}

interface Stored {
  v: number;
  key: string;
  chunks: string[];
  packages: string;
  packageChunks: number[];
  via: string;
  texts: string;
  textChunks: number[];
  missing: Array<[string, string, number]>;
  softExcluded: Array<[string, string, number]>;
  softOnly: number;
  roots: Array<[string, string, string, ResolvedRoot['reason']]>;
  missingRoots: string[];
  clashes: Array<[string, string[]]>;
  fingerprints?: [string, string];
}

const VIA: Record<PlannedAsset['via'], string> = { root: 'r', hard: 'h', soft: 's', mount: 'm' };
const VIA_OF: Record<string, PlannedAsset['via']> = { r: 'root', h: 'hard', s: 'soft', m: 'mount' };
const GUID_RE = /^[0-9a-f]{32}$/;

/** The planning modules, beside this one (the same extension: .ts under tsx, .js when built). */
const CODE = ['./planStore', './planCook', './Cooker', '../src/registry/cookRoots', '../src/registry/AssetRegistry', '../src/registry/registryCache'];
let codeIdentity: string | null | undefined;

/** A hash of the planning code's bytes, once per process; null when one cannot be read (then no plan is stored or taken). */
function planningCode(): string | null {
  if (codeIdentity !== undefined) return codeIdentity;
  try {
    const self = fileURLToPath(import.meta.url);
    const ext = path.extname(self);
    codeIdentity = hashString(CODE.map((m) => fs.readFileSync(path.resolve(path.dirname(self), m + ext), 'utf8')).join('\0'));
  } catch {
    codeIdentity = null;
  }
  return codeIdentity;
}

/** The key a plan of this registry content under this config is stored and found by; undefined when there is none to be had. */
export function planKey(config: ProjectConfig, registryIdentity: string | undefined): string | undefined {
  const code = planningCode();
  if (registryIdentity === undefined || code === null) return undefined;
  return hashString(`${VERSION}\0${registryIdentity}\0${code}\0${process.cwd()}\0${canonicalJson(config)}`);
}

export function planFile(intermediatesDir: string): string {
  return path.join(intermediatesDir, PLAN_FILE_NAME);
}

/** The stored text of a plan, or undefined when it cannot be stored (a GUID that is not 32 hex digits). */
export function encodePlan(key: string, p: PlanFacts): string | undefined {
  const chunkIndex = new Map(p.chunks.map((c, i) => [c, i]));
  const guids = (list: readonly PlannedAsset[]) => list.map((a) => a.record.guid).join('');
  const chunks = (list: readonly PlannedAsset[]) => list.map((a) => chunkIndex.get(a.chunk) ?? -1);
  const edges = (list: readonly DependencyEdge[]): Array<[string, string, number]> => list.map((e) => [e.referrer.guid, e.guid, e.type]);
  const stored: Stored = {
    v: VERSION,
    key,
    chunks: p.chunks,
    packages: guids(p.packages),
    packageChunks: chunks(p.packages),
    via: p.packages.map((a) => VIA[a.via]).join(''),
    texts: guids(p.textAssets),
    textChunks: chunks(p.textAssets),
    missing: edges(p.missing),
    softExcluded: edges(p.softExcluded),
    softOnly: p.softOnly,
    roots: p.roots.map((r) => [r.guid, r.packagePath, r.chunk, r.reason]),
    missingRoots: p.missingRoots,
    clashes: p.clashes.map((c) => [c.name, c.records.map((r) => r.guid)]),
    ...(p.fingerprints ? { fingerprints: [p.fingerprints.outputs, p.fingerprints.registryInputs] as [string, string] } : {}),
  };
  const planned = [...p.packages, ...p.textAssets];
  if (stored.packageChunks.includes(-1) || stored.textChunks.includes(-1) || planned.some((a) => !GUID_RE.test(a.record.guid))) return undefined;
  if (p.textAssets.some((a) => a.via !== 'mount') || p.packages.some((a) => a.via === 'mount')) return undefined;
  const body = JSON.stringify(stored);
  return `${body}\n${hashString(body)}\n`;
}

/**
 * The plan stored as `text` when it was made under `key`, with every record taken from `lookup`;
 * undefined when it was not, or is damaged, or names a GUID `lookup` does not know.
 */
export function decodePlan(text: string, key: string, lookup: Pick<AssetLookup, 'get'>): PlanFacts | undefined {
  const nl = text.indexOf('\n');
  if (nl < 0 || text.slice(nl + 1) !== `${hashString(text.slice(0, nl))}\n`) return undefined;
  let s: Stored;
  try {
    s = JSON.parse(text.slice(0, nl)) as Stored;
  } catch {
    return undefined;
  }
  if (s.v !== VERSION || s.key !== key) return undefined;
  const rec = (guid: string): AssetRecord => {
    const r = lookup.get(guid);
    if (!r || r.guid !== guid) throw new Missing();
    return r;
  };
  const planned = (guids: string, chunks: number[], via: (i: number) => PlannedAsset['via']): PlannedAsset[] => {
    if (guids.length !== chunks.length * 32) throw new Missing();
    const out = new Array<PlannedAsset>(chunks.length);
    for (let i = 0; i < chunks.length; i++) {
      const chunk = s.chunks[chunks[i]];
      if (chunk === undefined) throw new Missing();
      out[i] = { record: rec(guids.slice(i * 32, i * 32 + 32)), chunk, via: via(i) };
    }
    return out;
  };
  const edges = (list: Array<[string, string, number]>): DependencyEdge[] => list.map(([from, guid, type]) => ({ referrer: rec(from), guid, type: type as DependencyType }));
  try {
    if (s.via.length !== s.packageChunks.length) return undefined;
    return {
      packages: planned(s.packages, s.packageChunks, (i) => VIA_OF[s.via[i]] ?? fail()),
      textAssets: planned(s.texts, s.textChunks, () => 'mount'),
      chunks: s.chunks,
      missing: edges(s.missing),
      softExcluded: edges(s.softExcluded),
      softOnly: s.softOnly,
      roots: s.roots.map(([guid, packagePath, chunk, reason]) => ({ guid, packagePath, chunk, reason })),
      missingRoots: s.missingRoots,
      clashes: s.clashes.map(([name, guids]) => ({ name, records: guids.map(rec) })),
      ...(s.fingerprints ? { fingerprints: { outputs: s.fingerprints[0], registryInputs: s.fingerprints[1] } } : {}),
    };
  } catch (e) {
    if (e instanceof Missing) return undefined;
    throw e;
  }
}

class Missing extends Error {}

function fail(): never {
  throw new Missing();
}

/** The stored plan of `intermediatesDir` made under `key`, or undefined (none, another key, damaged). */
export function readStoredPlan(intermediatesDir: string, key: string, lookup: Pick<AssetLookup, 'get'>): PlanFacts | undefined {
  let text: string;
  try {
    text = fs.readFileSync(planFile(intermediatesDir), 'utf8');
  } catch {
    return undefined;
  }
  try {
    return decodePlan(text, key, lookup);
  } catch {
    return undefined;
  }
}

/** Store a plan (atomically); a plan that cannot be written is simply planned again next time. */
export async function storePlan(intermediatesDir: string, key: string, p: PlanFacts): Promise<void> {
  const text = encodePlan(key, p);
  const file = planFile(intermediatesDir);
  try {
    if (text === undefined) fs.rmSync(file, { force: true });
    else await writeFileAtomic(file, Buffer.from(text, 'utf8'));
  } catch {
    // A cache never fails a cook.
  }
}
