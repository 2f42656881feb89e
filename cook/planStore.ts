/**
 * The last full cook's plan, kept in `Intermediates/CookPlan.json`, so a cook whose registry,
 * config and planning code are what that plan was made from takes it instead of planning again
 * (at 20k assets planning thawed, sorted and walked every record on every no-op).
 *
 * The plan (roots, closure, chunks, missing and soft-excluded edges, primary-name clashes) is a
 * function of the registry's records, the config, the working folder (a root may be a relative
 * file path) and the code that plans. The key names all four:
 * - the registry's `contentIdentity`: the checksums of the cache files its last full scan left
 *   saved (src/registry/AssetRegistry.ts), so a cook after a file change finds no plan under it;
 *   it plans, or carries the plan of the content the scan started from over changes that touch no
 *   planning fact (`carriedPlanKey`), and stores that for the next cook;
 * - the whole config (canonical JSON), and the working folder;
 * - the planning modules' own bytes (this file, planCook, Cooker, the registry's root resolver and
 *   lookups): a new version of the tool never takes an older one's plan.
 * A file whose key, version or checksum does not match, or that names a file whose asset is not
 * the GUID it was planned with, is not used: the cook plans as if there were none.
 *
 * Records are named by file (folder + file name) and checked by GUID: the registry answers a file
 * without building its GUID map or the folders it holds unbuilt (AssetRegistry.fileAsset), which
 * at 100k assets was most of taking the plan.
 *
 * A plan carried over a change (planForCook) is not written again: the plan of the content the
 * change started from is the plan of the new content, only its fingerprints differ. So a small
 * `Intermediates/CookPlan.carry` says "the plan stored under key `from` is also the plan of key
 * `to`, with these fingerprints" (one line of JSON and its xxh64, like the plan). Taking a plan
 * under `to` reads the plan file as stored under `from`. Keys name content, so a carry stays true;
 * it is used only while the plan file is still the one stored under `from`. At 20k assets
 * re-encoding and writing the ~0.8 MB plan was ~0.1-0.2 s of a one-file change (~40 MB at 1M).
 *
 * Layout: one line of JSON (below), then a line with the xxh64 (hex) of that line's UTF-8 bytes.
 * The records' file names are joined by '/', their GUIDs concatenated (32 hex digits each), chunks
 * are indexes into `chunks`, edges and clashes name records by index, and `via` is one letter per
 * package.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ProjectConfig } from '../config/index.js';
import type { DependencyType } from '../src/format/packageTypes.js';
import type { ScanChanges } from '../src/registry/AssetRegistry.js';
import type { CookRoot as ResolvedRoot } from '../src/registry/cookRoots.js';
import type { AssetRecord } from '../src/registry/types.js';
import { tempPathFor, writeFileAtomic } from '../src/util/atomicWrite.js';
import { codeIdentity } from '../src/util/codeIdentity.js';
import { hashString } from '../src/util/hash.js';
import { canonicalJson } from './cookKey.js';
import type { AssetLookup, CookPlan, DependencyEdge, PlannedAsset } from './planCook.js';

export const PLAN_FILE_NAME = 'CookPlan.json';
/** Where a carried plan's new key and fingerprints are kept (see the module comment). */
export const PLAN_CARRY_FILE_NAME = 'CookPlan.carry';

/** What a stored plan takes its records from: by file when the lookup can (AssetRegistry.fileAsset), else by GUID. */
export type PlanLookup = Pick<AssetLookup, 'get' | 'fileAsset'>;
const VERSION = 2;

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
  /**
   * Every record the plan names (planned or not: a clash's record), sorted by file, as its folder
   * (an index into `dirs`), its file name and its GUID: asked for in this order, the registry finds
   * each a few rows after the last in its folder (RowFolder.find).
   */
  dirs: string[];
  refDirs: number[];
  /** The file names, joined by '/' (no file name holds one). */
  refNames: string;
  /** The GUIDs, 32 hex digits each. */
  guids: string;
  /** The planned packages in plan order, as record indexes; their chunks and how each was reached. */
  packages: number[];
  packageChunks: number[];
  via: string;
  texts: number[];
  textChunks: number[];
  /** [referrer (a record index), GUID, type] */
  missing: Array<[number, string, number]>;
  softExcluded: Array<[number, string, number]>;
  softOnly: number;
  roots: Array<[string, string, string, ResolvedRoot['reason']]>;
  missingRoots: string[];
  clashes: Array<[string, number[]]>;
  fingerprints?: [string, string];
}

const VIA: Record<PlannedAsset['via'], string> = { root: 'r', hard: 'h', soft: 's', mount: 'm' };
const VIA_OF: Record<string, PlannedAsset['via']> = { r: 'root', h: 'hard', s: 'soft', m: 'mount' };
const GUID_RE = /^[0-9a-f]{32}$/;

/** The planning modules, beside this one (the same extension: .ts under tsx, .js when built). */
const CODE = ['./planStore', './planCook', './Cooker', '../src/registry/cookRoots', '../src/registry/AssetRegistry', '../src/registry/registryCache'];

/** A hash of the planning code's bytes, once per process; null when one cannot be read (then no plan is stored or taken). */
const planningCode = (): string | null => codeIdentity(import.meta.url, CODE);

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
  const chunks = (list: readonly PlannedAsset[]) => list.map((a) => chunkIndex.get(a.chunk) ?? -1);
  const byFile = new Map<string, AssetRecord>();
  for (const a of p.packages) byFile.set(a.record.file, a.record);
  for (const a of p.textAssets) byFile.set(a.record.file, a.record);
  // Each planned asset is its own record (two planned with one file cannot be told apart).
  if (byFile.size !== p.packages.length + p.textAssets.length) return undefined;
  for (const e of [...p.missing, ...p.softExcluded]) byFile.set(e.referrer.file, e.referrer);
  for (const c of p.clashes) for (const r of c.records) byFile.set(r.file, r);
  const files = [...byFile.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const refOf = new Map<string, number>();
  const dirIndex = new Map<string, number>();
  const dirs: string[] = [];
  const refDirs: number[] = [];
  const names: string[] = [];
  const guids: string[] = [];
  for (const file of files) {
    const r = byFile.get(file)!;
    const at = file.lastIndexOf(path.sep);
    const dir = file.slice(0, at);
    const name = file.slice(at + 1);
    if (at < 0 || name.includes('/') || !GUID_RE.test(r.guid) || byFile.get(r.file) !== r) return undefined;
    let d = dirIndex.get(dir);
    if (d === undefined) {
      dirIndex.set(dir, (d = dirs.length));
      dirs.push(dir);
    }
    refOf.set(file, names.length);
    refDirs.push(d);
    names.push(name);
    guids.push(r.guid);
  }
  const ref = (r: AssetRecord) => refOf.get(r.file)!;
  const edges = (list: readonly DependencyEdge[]): Array<[number, string, number]> => list.map((e) => [ref(e.referrer), e.guid, e.type]);
  const stored: Stored = {
    v: VERSION,
    key,
    chunks: p.chunks,
    dirs,
    refDirs,
    refNames: names.join('/'),
    guids: guids.join(''),
    packages: p.packages.map((a) => ref(a.record)),
    packageChunks: chunks(p.packages),
    via: p.packages.map((a) => VIA[a.via]).join(''),
    texts: p.textAssets.map((a) => ref(a.record)),
    textChunks: chunks(p.textAssets),
    missing: edges(p.missing),
    softExcluded: edges(p.softExcluded),
    softOnly: p.softOnly,
    roots: p.roots.map((r) => [r.guid, r.packagePath, r.chunk, r.reason]),
    missingRoots: p.missingRoots,
    clashes: p.clashes.map((c) => [c.name, c.records.map(ref)]),
    ...(p.fingerprints ? { fingerprints: [p.fingerprints.outputs, p.fingerprints.registryInputs] as [string, string] } : {}),
  };
  if (stored.packageChunks.includes(-1) || stored.textChunks.includes(-1)) return undefined;
  if (p.textAssets.some((a) => a.via !== 'mount') || p.packages.some((a) => a.via === 'mount')) return undefined;
  const body = JSON.stringify(stored);
  return `${body}\n${hashString(body)}\n`;
}

/**
 * The plan stored as `text` when it was made under `key`, with every record taken from `lookup`
 * by its file (`fileAsset`; by GUID when the lookup has no such query); undefined when it was not,
 * or is damaged, or names a record `lookup` does not answer with the same GUID.
 */
export function decodePlan(text: string, key: string, lookup: PlanLookup, carry?: PlanCarry): PlanFacts | undefined {
  return decodeStored(text, key, lookup, carry)?.plan;
}

/** decodePlan, and the key the text was stored under (`key`, or the carry's `from`). */
function decodeStored(text: string, key: string, lookup: PlanLookup, carry?: PlanCarry): { plan: PlanFacts; storedKey: string } | undefined {
  // A plan stored under another key (and not carried to this one) is not this key's, whatever the
  // rest says: refused before its checksum and parse (~0.8 MB at 20k assets), which a cook after
  // an edit paid for nothing before taking the plan it carries. Only a refusal is taken from
  // unchecked bytes; a plan that is taken is checked whole below.
  const named = storedKeyOf(text);
  if (named !== undefined && named !== key && !(carry !== undefined && carry.to === key && carry.from === named)) return undefined;
  const nl = text.indexOf('\n');
  if (nl < 0 || text.slice(nl + 1) !== `${hashString(text.slice(0, nl))}\n`) return undefined;
  let s: Stored;
  try {
    s = JSON.parse(text.slice(0, nl)) as Stored;
  } catch {
    return undefined;
  }
  if (s.v !== VERSION) return undefined;
  if (s.key !== key) {
    // Carried to `key` from the key this plan was stored under: its fingerprints are the carry's.
    if (carry === undefined || carry.to !== key || carry.from !== s.key) return undefined;
    s.fingerprints = carry.fingerprints;
  }
  const storedKey = s.key;
  try {
    const names = s.refDirs.length === 0 ? [] : s.refNames.split('/');
    const count = names.length;
    if (s.refDirs.length !== count || s.guids.length !== count * 32 || s.packages.length !== s.packageChunks.length || s.texts.length !== s.textChunks.length) return undefined;
    const records = new Array<AssetRecord>(count);
    for (let i = 0; i < count; i++) {
      const guid = s.guids.slice(i * 32, i * 32 + 32);
      const dir = s.dirs[s.refDirs[i]];
      if (dir === undefined) return undefined;
      const r = lookup.fileAsset ? lookup.fileAsset(dir, names[i]) : lookup.get(guid);
      // The file's asset must still be the GUID the plan was made with (and, by GUID, still that file).
      if (!r || r.guid !== guid || (!lookup.fileAsset && r.file !== dir + path.sep + names[i])) return undefined;
      records[i] = r;
    }
    const rec = (i: number): AssetRecord => records[i] ?? fail();
    const planned = (refs: number[], chunks: number[], via: (i: number) => PlannedAsset['via']): PlannedAsset[] => {
      const out = new Array<PlannedAsset>(chunks.length);
      for (let i = 0; i < chunks.length; i++) {
        const chunk = s.chunks[chunks[i]];
        if (chunk === undefined) throw new Missing();
        out[i] = { record: rec(refs[i]), chunk, via: via(i) };
      }
      return out;
    };
    const edges = (list: Array<[number, string, number]>): DependencyEdge[] => list.map(([from, guid, type]) => ({ referrer: rec(from), guid, type: type as DependencyType }));
    if (s.via.length !== s.packageChunks.length) return undefined;
    const plan: PlanFacts = {
      packages: planned(s.packages, s.packageChunks, (i) => VIA_OF[s.via[i]] ?? fail()),
      textAssets: planned(s.texts, s.textChunks, () => 'mount'),
      chunks: s.chunks,
      missing: edges(s.missing),
      softExcluded: edges(s.softExcluded),
      softOnly: s.softOnly,
      roots: s.roots.map(([guid, packagePath, chunk, reason]) => ({ guid, packagePath, chunk, reason })),
      missingRoots: s.missingRoots,
      clashes: s.clashes.map(([name, refs]) => ({ name, records: refs.map(rec) })),
      ...(s.fingerprints ? { fingerprints: { outputs: s.fingerprints[0], registryInputs: s.fingerprints[1] } } : {}),
    };
    return { plan, storedKey };
  } catch (e) {
    if (e instanceof Missing) return undefined;
    throw e;
  }
}

class Missing extends Error {}

/** The key a plan's text names at its start (`{"v":<VERSION>,"key":"<key>"`, as encodePlan writes it); undefined when it does not start so. */
function storedKeyOf(text: string): string | undefined {
  const head = `{"v":${VERSION},"key":"`;
  if (!text.startsWith(head)) return undefined;
  const end = text.indexOf('"', head.length);
  return end < 0 ? undefined : text.slice(head.length, end);
}

function fail(): never {
  throw new Missing();
}

/**
 * Whether two records of one file agree on everything planning reads (planCook, the root
 * resolver, primary-name clashes): GUID, kind, paths and names, mount, class, flags and every
 * dependency in order. A plan made with `before` is the plan with `after` (its hash, size and
 * mtime are the cook's business, and the shipped fingerprints, which name the hash, are not
 * part of this).
 */
export function samePlanningFacts(before: AssetRecord, after: AssetRecord): boolean {
  if (
    before.guid !== after.guid ||
    before.kind !== after.kind ||
    before.file !== after.file ||
    before.virtualPath !== after.virtualPath ||
    before.packagePath !== after.packagePath ||
    before.name !== after.name ||
    before.mount !== after.mount ||
    before.className !== after.className ||
    before.flags !== after.flags ||
    before.dependencies.length !== after.dependencies.length
  ) {
    return false;
  }
  for (let i = 0; i < before.dependencies.length; i++) {
    const a = before.dependencies[i];
    const b = after.dependencies[i];
    if (a.guid !== b.guid || a.type !== b.type) return false;
  }
  return true;
}

/**
 * The key of the plan a cook may carry over the last scan's changes: that of the content the scan
 * started from, when every file it changed was read again with the same planning facts (none
 * added or removed); else undefined.
 */
export function carriedPlanKey(config: ProjectConfig, changes: ScanChanges | undefined): string | undefined {
  if (changes === undefined) return undefined;
  for (const f of changes.files) if (f.before === undefined || f.after === undefined || !samePlanningFacts(f.before, f.after)) return undefined;
  return planKey(config, changes.from);
}

/** A carried plan: the plan stored under `from` is also the plan of `to`, whose fingerprints these are. */
export interface PlanCarry {
  from: string;
  to: string;
  fingerprints: [string, string];
}

export function planCarryFile(intermediatesDir: string): string {
  return path.join(intermediatesDir, PLAN_CARRY_FILE_NAME);
}

/** The carry's text: one line of JSON, then its xxh64 (hex). */
export function encodePlanCarry(c: PlanCarry): string {
  const body = JSON.stringify({ v: VERSION, from: c.from, to: c.to, fingerprints: c.fingerprints });
  return `${body}\n${hashString(body)}\n`;
}

/** A carry's text read back; undefined when it is not one (damaged, another version). */
export function decodePlanCarry(text: string): PlanCarry | undefined {
  const nl = text.indexOf('\n');
  if (nl < 0 || text.slice(nl + 1) !== `${hashString(text.slice(0, nl))}\n`) return undefined;
  try {
    const c = JSON.parse(text.slice(0, nl)) as { v?: unknown; from?: unknown; to?: unknown; fingerprints?: unknown };
    const fp = c.fingerprints;
    if (c.v !== VERSION || typeof c.from !== 'string' || typeof c.to !== 'string' || !Array.isArray(fp) || fp.length !== 2 || typeof fp[0] !== 'string' || typeof fp[1] !== 'string') return undefined;
    return { from: c.from, to: c.to, fingerprints: [fp[0], fp[1]] };
  } catch {
    return undefined;
  }
}

function readPlanCarry(intermediatesDir: string): PlanCarry | undefined {
  try {
    return decodePlanCarry(fs.readFileSync(planCarryFile(intermediatesDir), 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * The stored plan of `intermediatesDir` made under `key` (or carried to it), or undefined (none,
 * another key, damaged). `storedKey` is the key the plan file itself was stored under: what a
 * further carry starts from.
 */
export function readStoredPlanAs(intermediatesDir: string, key: string, lookup: PlanLookup): { plan: PlanFacts; storedKey: string } | undefined {
  let text: string;
  try {
    text = fs.readFileSync(planFile(intermediatesDir), 'utf8');
  } catch {
    return undefined;
  }
  // The carry is read first (a few hundred bytes): the plan file is decoded once either way.
  const carry = readPlanCarry(intermediatesDir);
  try {
    return decodeStored(text, key, lookup, carry?.to === key ? carry : undefined);
  } catch {
    return undefined;
  }
}

/** The stored plan of `intermediatesDir` made under `key` (or carried to it), or undefined (none, another key, damaged). */
export function readStoredPlan(intermediatesDir: string, key: string, lookup: PlanLookup): PlanFacts | undefined {
  return readStoredPlanAs(intermediatesDir, key, lookup)?.plan;
}

/**
 * Say that the plan stored under `carry.from` is also that of `carry.to` (see the module
 * comment). No fsync: the carry is checked by its hash and by the plan file's key, so a lost or
 * torn one only costs planning again.
 */
export function storePlanCarry(intermediatesDir: string, carry: PlanCarry): void {
  const file = planCarryFile(intermediatesDir);
  const tmp = tempPathFor(file);
  try {
    fs.writeFileSync(tmp, encodePlanCarry(carry));
    fs.renameSync(tmp, file);
  } catch {
    fs.rmSync(tmp, { force: true });
  }
}

/** Store a plan (atomically); a plan that cannot be written is simply planned again next time. */
export async function storePlan(intermediatesDir: string, key: string, p: PlanFacts): Promise<void> {
  const text = encodePlan(key, p);
  const file = planFile(intermediatesDir);
  try {
    // A carry names the plan it was made from; this one replaces it (a stale carry is ignored anyway).
    fs.rmSync(planCarryFile(intermediatesDir), { force: true });
    if (text === undefined) fs.rmSync(file, { force: true });
    else await writeFileAtomic(file, Buffer.from(text, 'utf8'));
  } catch {
    // A cache never fails a cook.
  }
}
