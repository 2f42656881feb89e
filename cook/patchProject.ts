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
import { listFiles, sourceOf } from '../pak/collectSources.js';
import type { PakSource } from '../pak/writePak.js';
import { CACHE_FILE_NAME, CookCache } from './cookCache.js';
import { readReleaseManifest, RELEASE_MANIFEST, type ReleaseManifest } from '../pak/releaseManifest.js';
import { cookProject, type CookProjectOptions, type CookSummary } from './cookProject.js';

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
  /** The release the patch is built against. */
  base: (ReleaseManifest & { file: string }) | null;
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

/** Cooked file ("/Game/A.lasset") -> its raw identity and the size and mtime it had, from the cook cache. */
async function cookedIdentities(config: ProjectConfig): Promise<Map<string, { rawSize: number; xxh64: bigint; size: number; mtimeMs: number }>> {
  const out = new Map<string, { rawSize: number; xxh64: bigint; size: number; mtimeMs: number }>();
  const { cache, warning } = await CookCache.load(path.join(config.intermediatesDir, CACHE_FILE_NAME), config.cookedDir, { readOnly: true });
  if (warning) return out;
  try {
    for (const [, e] of cache.list()) out.set(`/${e.cookedFile}`, { rawSize: e.rawSize, xxh64: BigInt(`0x${e.xxh64}`), size: e.cookedSize, mtimeMs: e.cookedMtimeMs });
  } finally {
    cache.close();
  }
  return out;
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
  // after the cook rather than held through it: at a million assets it is ~60 MB of JSON, and the
  // cook's own peak is the process's.
  const baseFile = resolveReleaseBase(config, opts.base);
  await readReleaseManifest(baseFile);
  const cook = await cookProject({ ...opts, config });
  const base = await readReleaseManifest(baseFile);
  if (!cook.ok) return { ok: false, configFile: config.configFile, cook, base, patch: null };
  // What the cook wrote is in the cook cache with its raw size and xxh64: only files the cache
  // cannot vouch for (the registry, the shader cache, verbatim outputs) and those that go into the
  // patch are opened, not every cooked file twice.
  const known = await cookedIdentities(config);
  const patch = await buildPatchPak({
    base,
    entries: (await listFiles(config.cookedDir)).map((f): PakSource => ({ ...f, kind: 'file' })),
    known: (s) => {
      const k = known.get(s.path);
      if (!k || !('file' in s)) return undefined;
      // The cache vouches for the file only while it is the one it recorded (size and mtime, as a cook checks).
      const st = fs.statSync(s.file, { throwIfNoEntry: false });
      return st && st.size === k.size && st.mtimeMs === k.mtimeMs ? { rawSize: k.rawSize, xxh64: k.xxh64 } : undefined;
    },
    resolve: async (s) => (s.kind === 'file' ? sourceOf(s) : s),
    out: path.resolve(config.projectDir, opts.out),
    mountPoint: opts.mountPoint,
  });
  return { ok: true, configFile: config.configFile, cook, base, patch };
}
