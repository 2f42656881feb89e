/**
 * Cook the current content and write a patch pak against a shipped release: the programmatic side
 * of `lumina-cook patch`. The base is found relative to the project (or by release name under
 * Saved/Releases), because that is where `cook --release` writes it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig, type ProjectConfig } from '../config/index.js';
import { errors } from '../src/errors.js';
import { buildPatchPak, type PatchSummary } from '../pak/buildPatch.js';
import { sourceOf, walkFiles } from '../pak/collectSources.js';
import { mountedPath } from '../pak/pakFormat.js';
import { ReleaseContent } from '../pak/releaseContent.js';
import type { PakSource } from '../pak/writePak.js';
import { CACHE_FILE_NAME, CookCache } from './cookCache.js';
import { parseReleaseManifest, readManifestText, RELEASE_MANIFEST, type ReleaseSummary } from '../pak/releaseManifest.js';
import { cookProject, type CookProjectOptions, type CookSummary } from './cookProject.js';
import { collectGarbage } from '../src/util/leanHeap.js';

export interface PatchProjectOptions extends Omit<CookProjectOptions, 'release' | 'paks'> {
  /**
   * The shipped release: its folder, its release.json, or its name under Saved/Releases. A relative
   * path resolves against the project folder.
   */
  base: string;
  /** The patch pak to write; a relative path resolves against the project folder. */
  out: string;
  /** Mount point written into the patch TOC (default "/"). */
  mountPoint?: string;
}

export interface PatchProjectResult {
  /** False when the cook failed; then no patch was written. */
  ok: boolean;
  /** The project's lumina-cook.json. */
  configFile: string;
  cook: CookSummary;
  /** The release the patch is built against (its manifest without the entry lists: `entryCount` per pak). */
  base: (ReleaseSummary & { file: string }) | null;
  patch: PatchSummary | null;
}

/**
 * Where `base` points: a path relative to the project, else a release name under Saved/Releases.
 * A base that is neither is PATCH_BASE_INVALID with a hint at `cook --release`.
 */
export function resolveReleaseBase(config: ProjectConfig, base: string): string {
  const candidates = path.isAbsolute(base) ? [base] : [path.resolve(config.projectDir, base), path.resolve(config.releasesDir, base)];
  for (const c of candidates) if (fs.existsSync(c)) return c;
  const name = path.basename(base) === RELEASE_MANIFEST ? path.basename(path.dirname(base)) : path.basename(base);
  const known = fs.existsSync(config.releasesDir) ? fs.readdirSync(config.releasesDir).filter((n) => fs.existsSync(path.join(config.releasesDir, n, RELEASE_MANIFEST))) : [];
  return fail(candidates[0], name, known);
}

function fail(file: string, name: string, known: string[]): never {
  const have = known.length ? ` (releases here: ${known.sort().join(', ')})` : '';
  throw errors.patchBaseInvalid(file, `no release at ${file}${have}`, `a release is written by \`lumina-cook cook --release ${name || 'NAME'}\` into Saved/Releases/${name || 'NAME'}/`);
}

/**
 * What the cook cache vouches for, by the release's slot of the cooked file's path: its raw
 * identity and the size and mtime the file had. Only paths the release serves are kept (any other
 * file goes into the patch whatever it holds), in flat arrays rather than an object per file.
 */
interface CookedIdentities {
  has: Uint8Array;
  rawSize: Float64Array;
  xxh64: BigUint64Array;
  size: Float64Array;
  mtimeMs: Float64Array;
}

async function cookedIdentities(config: ProjectConfig, base: ReleaseContent, mountPoint: string): Promise<CookedIdentities> {
  const n = base.slotCount;
  const out: CookedIdentities = { has: new Uint8Array(n), rawSize: new Float64Array(n), xxh64: new BigUint64Array(n), size: new Float64Array(n), mtimeMs: new Float64Array(n) };
  const { cache, warning } = await CookCache.load(path.join(config.intermediatesDir, CACHE_FILE_NAME), config.cookedDir, { readOnly: true });
  if (warning) return out;
  try {
    for (const [, e] of cache.list()) {
      const slot = base.slot(mountedPath(mountPoint, `/${e.cookedFile}`));
      if (slot === undefined) continue;
      out.has[slot] = 1;
      out.rawSize[slot] = e.rawSize;
      out.xxh64[slot] = BigInt(`0x${e.xxh64}`);
      out.size[slot] = e.cookedSize;
      out.mtimeMs[slot] = e.cookedMtimeMs;
    }
  } finally {
    cache.close();
  }
  return out;
}

/** Every file under `dir` as a 'file' source, one folder at a time (resolved to 'cooked' by sourceOf when needed). */
async function* fileSources(dir: string): AsyncGenerator<PakSource> {
  for await (const f of walkFiles(dir)) yield { path: f.path, kind: 'file', file: f.file };
}

/** Cook (incrementally, through the cook cache), then write the patch pak. A failed cook writes no patch. */
export async function patchProject(opts: PatchProjectOptions): Promise<PatchProjectResult> {
  let config = opts.config;
  if (!config) {
    if (!opts.projectDir) throw errors.usage('patchProject needs projectDir or config');
    const loaded = loadConfig(opts.projectDir);
    for (const w of loaded.warnings) opts.log?.warn({ file: loaded.config.configFile }, w);
    config = loaded.config;
  }
  // Check the base before the cook, so a typo or a broken release costs nothing. It is read again
  // after the cook rather than held through it: the cook's own peak is the process's.
  const baseFile = resolveReleaseBase(config, opts.base);
  await checkReleaseManifest(baseFile);
  const cook = await cookProject({ ...opts, config });
  // The cook's garbage goes now, before the patch step allocates: a million-asset cook leaves
  // ~1 GB of dead objects that V8 collects only under pressure, and the patch step's first
  // allocations (release.json's text, the cook cache's file) stacked on them were the whole
  // process's peak (2.2 GB RSS at 1M; the patch step alone stays near 1.1 GB after this).
  collectGarbage();
  if (!cook.ok) return { ok: false, configFile: config.configFile, cook, base: await checkReleaseManifest(baseFile), patch: null };
  // At a million assets nothing of either side is held whole: the release as its compact content
  // (a map of paths to slots), the cook cache's identities in arrays by slot, Saved/Cooked walked
  // one folder at a time. What the cook wrote is in the cook cache with its raw size and xxh64:
  // only files the cache cannot vouch for (the registry, the shader cache, verbatim outputs) and
  // those that go into the patch are opened, not every cooked file twice.
  const base = await ReleaseContent.read(baseFile);
  const mountPoint = opts.mountPoint ?? '/';
  const known = await cookedIdentities(config, base, mountPoint);
  const patch = await buildPatchPak({
    base,
    entries: fileSources(config.cookedDir),
    known: (s) => {
      const slot = base.slot(mountedPath(mountPoint, s.path));
      if (slot === undefined || !known.has[slot] || !('file' in s)) return undefined;
      // The cache vouches for the file only while it is the one it recorded (size and mtime, as a cook checks).
      const st = fs.statSync(s.file, { throwIfNoEntry: false });
      return st && st.size === known.size[slot] && st.mtimeMs === known.mtimeMs[slot] ? { rawSize: known.rawSize[slot], xxh64: known.xxh64[slot] } : undefined;
    },
    resolve: async (s) => (s.kind === 'file' ? sourceOf(s) : s),
    out: path.resolve(config.projectDir, opts.out),
    mountPoint: opts.mountPoint,
  });
  return { ok: true, configFile: config.configFile, cook, base: { ...base.summary, file: base.file }, patch };
}

/** Read and validate the release manifest without keeping its entries: what the result reports of the base. */
async function checkReleaseManifest(file: string): Promise<ReleaseSummary & { file: string }> {
  const { file: manifest, text } = await readManifestText(file);
  return { ...parseReleaseManifest(text, manifest, () => {}), file: manifest };
}
