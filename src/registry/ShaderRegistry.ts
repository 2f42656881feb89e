/**
 * The shader registry: every shader source, include and `.shader.json` sidecar under each content
 * mount's `Shaders/` folder (`/Game/Shaders`, `/Engine/Shaders`, `/<Plugin>/Shaders`), tracked
 * incrementally like packages, with the include graph.
 *
 * - A file whose mtime and size match the cache is not opened; one whose mtime moved but whose
 *   size did not is hashed, and re-parsed only when its xxh64 changed too. The cache is
 *   `Intermediates/ShaderRegistry.json` (small: projects hold tens to hundreds of shaders).
 * - `#include "x"` resolves beside the including file, then in each mount's `Shaders/` in mount
 *   order (/Game, /Engine, plugins): the same order the compiler is given (`includeDirs`), so the
 *   graph recorded here is the graph the compiler follows.
 * - `closure(source)` is the source plus every file it includes, transitively, with their hashes:
 *   what a permutation's cache key is built from, so editing an include changes the key of
 *   exactly the permutations whose source reaches it. A missing include or a cycle is a typed
 *   error naming the including file.
 * - A cache that cannot be read is a warning and a re-read of every shader, never a failure.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ProjectConfig } from '../../config/index.js';
import { errors, isLuminaError, type LuminaError } from '../errors.js';
import { TEMP_MARKER, writeFileAtomicSync } from '../util/atomicWrite.js';
import { hashHex, initHash, xxh64 } from '../util/hash.js';
import { assetKindOf } from './walkMount.js';
import { parseIncludes, parseShaderSidecar, SHADER_SIDECAR_EXT, SHADERS_DIR, shaderKindOf, type IncludeDirective, type ShaderEntry, type ShaderFileKind, type ShaderLanguage } from './shaderSources.js';

export const SHADER_REGISTRY_FILE = 'ShaderRegistry.json';
const CACHE_VERSION = 1;

export interface ShaderFileRecord {
  /** `/Game/Shaders/Lit.hlsl`. */
  virtualPath: string;
  /** Absolute path on disk. */
  file: string;
  mount: string;
  kind: ShaderFileKind;
  language: ShaderLanguage;
  mtimeMs: number;
  size: number;
  /** xxh64 of the file, 16 hex digits. */
  hash: string;
  includes: IncludeDirective[];
  /** Compiled sources: the sidecar's entry points, when it is there and valid. */
  entries?: ShaderEntry[];
  /** Compiled sources: why the sidecar is missing or unusable. */
  sidecarError?: { message: string; field?: string };
  /** Compiled sources: the sidecar's stat and hash when it was read. */
  sidecar?: { mtimeMs: number; size: number; hash: string };
}

export interface ShaderScanResult {
  /** Shader files tracked now (sources and includes). */
  files: number;
  /** Files read and parsed (new or changed content). */
  read: number;
  /** Virtual paths whose content or sidecar changed, or that appeared or disappeared, sorted. */
  changed: string[];
  /** Warnings: an unusable cache, an unreadable folder. */
  problems: LuminaError[];
}

export interface ShaderClosure {
  /** The source and everything it includes, transitively, sorted by virtual path, with hashes. */
  files: Array<{ virtualPath: string; hash: string }>;
}

interface CacheFile {
  version: number;
  files: ShaderFileRecord[];
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export class ShaderRegistry {
  readonly cacheFile: string;
  private readonly mounts: ReadonlyArray<{ alias: string; dir: string }>;
  /** By virtual path. */
  private readonly files = new Map<string, ShaderFileRecord>();
  private dirty = false;
  private loadProblem: LuminaError | undefined;

  private constructor(config: Pick<ProjectConfig, 'mounts' | 'intermediatesDir'>, cacheFile?: string) {
    this.mounts = config.mounts.map((m) => ({ alias: m.alias, dir: path.resolve(m.dir) }));
    this.cacheFile = cacheFile ?? path.join(config.intermediatesDir, SHADER_REGISTRY_FILE);
  }

  /** Open the registry and load its cache; call `scan()` before asking anything. */
  static async open(config: Pick<ProjectConfig, 'mounts' | 'intermediatesDir'>, opts: { cacheFile?: string } = {}): Promise<ShaderRegistry> {
    await initHash();
    const reg = new ShaderRegistry(config, opts.cacheFile);
    reg.loadCache();
    return reg;
  }

  /** The folders the compiler searches for includes after the including file's own: each mount's Shaders/, in mount order. */
  get includeDirs(): string[] {
    return this.mounts.map((m) => path.join(m.dir, SHADERS_DIR));
  }

  /** True when `abs` lies in some mount's Shaders/ folder (the daemon asks before re-scanning). */
  isShaderPath(abs: string): boolean {
    const p = path.resolve(abs);
    return this.includeDirs.some((d) => p === d || p.startsWith(d + path.sep));
  }

  get(virtualPath: string): ShaderFileRecord | undefined {
    return this.files.get(virtualPath);
  }

  /** Every tracked file, sorted by virtual path. */
  all(): ShaderFileRecord[] {
    return [...this.files.values()].sort((a, b) => cmp(a.virtualPath, b.virtualPath));
  }

  /** The files that include `virtualPath` directly or through other includes, sorted (for `why did this re-compile`). */
  includers(virtualPath: string): string[] {
    const out = new Set<string>();
    const stack = [virtualPath];
    while (stack.length) {
      const v = stack.pop()!;
      for (const r of this.files.values()) {
        if (out.has(r.virtualPath)) continue;
        if (r.includes.some((inc) => this.resolveInclude(r, inc.spec) === v)) {
          out.add(r.virtualPath);
          stack.push(r.virtualPath);
        }
      }
    }
    return [...out].sort(cmp);
  }

  /** Where `#include "<spec>"` in `from` leads: beside it, then each mount's Shaders/. Undefined when nowhere. */
  resolveInclude(from: Pick<ShaderFileRecord, 'virtualPath'>, spec: string): string | undefined {
    const norm = (p: string) => {
      const n = path.posix.normalize(p);
      return n.startsWith('/') && !n.split('/').includes('..') ? n : undefined;
    };
    const beside = norm(path.posix.join(path.posix.dirname(from.virtualPath), spec));
    if (beside && this.files.has(beside)) return beside;
    for (const m of this.mounts) {
      const v = norm(path.posix.join(m.alias, SHADERS_DIR, spec));
      if (v && v.startsWith(`${m.alias}/${SHADERS_DIR}/`) && this.files.has(v)) return v;
    }
    return undefined;
  }

  /**
   * The source and everything it includes, transitively. Throws SHADER_INCLUDE_MISSING (naming the
   * including file and line) or SHADER_INCLUDE_CYCLE (naming the file that closes the cycle).
   */
  closure(virtualPath: string): ShaderClosure {
    const root = this.files.get(virtualPath);
    if (!root) throw errors.shaderNotFound(virtualPath, virtualPath, 'source');
    const done = new Set<string>();
    const onPath: string[] = [];
    const visit = (r: ShaderFileRecord): void => {
      if (done.has(r.virtualPath)) return;
      onPath.push(r.virtualPath);
      for (const inc of r.includes) {
        const target = this.resolveInclude(r, inc.spec);
        if (target === undefined) throw errors.shaderIncludeMissing(r.file, inc.spec, inc.line);
        const at = onPath.indexOf(target);
        if (at >= 0) throw errors.shaderIncludeCycle(r.file, [...onPath.slice(at), target]);
        visit(this.files.get(target)!);
      }
      onPath.pop();
      done.add(r.virtualPath);
    };
    visit(root);
    return { files: [...done].sort(cmp).map((v) => ({ virtualPath: v, hash: this.files.get(v)!.hash })) };
  }

  /** A full incremental pass over every mount's Shaders/ folder. */
  scan(): ShaderScanResult {
    const result: ShaderScanResult = { files: 0, read: 0, changed: [], problems: [] };
    if (this.loadProblem) {
      result.problems.push(this.loadProblem);
      this.loadProblem = undefined;
    }
    const seen = new Set<string>();
    for (const m of this.mounts) {
      const dir = path.join(m.dir, SHADERS_DIR);
      this.walk(dir, `${m.alias}/${SHADERS_DIR}`, m.alias, seen, result);
    }
    for (const v of [...this.files.keys()]) {
      if (seen.has(v)) continue;
      this.files.delete(v);
      this.dirty = true;
      result.changed.push(v);
    }
    result.changed.sort(cmp);
    result.files = this.files.size;
    this.saveIfDirty(result);
    return result;
  }

  /**
   * The daemon's entry point: re-scan when any of `paths` lies under a Shaders/ folder (a scan
   * of a few hundred small files stats them, reading only what changed). Returns null when none does.
   */
  updateFiles(paths: readonly string[]): ShaderScanResult | null {
    return paths.some((p) => this.isShaderPath(p)) ? this.scan() : null;
  }

  private walk(dir: string, vdir: string, mount: string, seen: Set<string>, result: ShaderScanResult): void {
    let ents: fs.Dirent[];
    try {
      ents = fs.readdirSync(dir, { withFileTypes: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') result.problems.push(errors.ioFailed(dir, 'readdir', e));
      return;
    }
    const names = new Set(ents.map((e) => e.name));
    for (const ent of ents) {
      const abs = path.join(dir, ent.name);
      const v = `${vdir}/${ent.name}`;
      if (ent.isDirectory()) {
        if (!ent.name.startsWith('.')) this.walk(abs, v, mount, seen, result);
        continue;
      }
      if (!ent.isFile() || assetKindOf(ent.name) !== null) continue;
      const k = shaderKindOf(ent.name);
      if (!k || ent.name.includes(TEMP_MARKER)) continue;
      seen.add(v);
      this.visitFile(abs, v, mount, k, names.has(ent.name + SHADER_SIDECAR_EXT), result);
    }
  }

  private visitFile(abs: string, v: string, mount: string, k: { kind: ShaderFileKind; language: ShaderLanguage }, hasSidecar: boolean, result: ShaderScanResult): void {
    let st: fs.Stats;
    try {
      st = fs.statSync(abs);
    } catch {
      return; // deleted since readdir: the reap below drops it
    }
    const prev = this.files.get(v);
    let rec: ShaderFileRecord;
    let contentChanged = false;
    if (prev && prev.file === abs && prev.kind === k.kind && prev.mtimeMs === st.mtimeMs && prev.size === st.size) {
      rec = prev;
    } else {
      let bytes: Buffer;
      try {
        bytes = fs.readFileSync(abs);
      } catch (e) {
        result.problems.push(errors.ioFailed(abs, 'read', e));
        return;
      }
      const hash = hashHex(xxh64(bytes));
      if (prev && prev.file === abs && prev.kind === k.kind && prev.hash === hash) {
        rec = { ...prev, mtimeMs: st.mtimeMs, size: st.size };
      } else {
        result.read++;
        contentChanged = true;
        rec = { virtualPath: v, file: abs, mount, kind: k.kind, language: k.language, mtimeMs: st.mtimeMs, size: st.size, hash, includes: parseIncludes(bytes.toString('utf8')) };
      }
      this.dirty = true;
    }
    if (k.kind === 'source' && this.refreshSidecar(rec, abs + SHADER_SIDECAR_EXT, hasSidecar, result)) contentChanged = true;
    this.files.set(v, rec);
    if (contentChanged) result.changed.push(v);
  }

  /** Bring a source's sidecar up to date; true when what it declares changed. */
  private refreshSidecar(rec: ShaderFileRecord, sidecarFile: string, present: boolean, result: ShaderScanResult): boolean {
    const before = JSON.stringify([rec.entries, rec.sidecarError]);
    let st: fs.Stats | undefined;
    if (present) {
      try {
        st = fs.statSync(sidecarFile);
      } catch {
        st = undefined;
      }
    }
    if (!st) {
      if (rec.sidecar === undefined && rec.sidecarError) return false;
      rec.sidecar = undefined;
      rec.entries = undefined;
      rec.sidecarError = { message: `compiled shader source has no ${SHADER_SIDECAR_EXT} sidecar declaring its entry points` };
    } else if (!rec.sidecar || rec.sidecar.mtimeMs !== st.mtimeMs || rec.sidecar.size !== st.size) {
      let text: Buffer;
      try {
        text = fs.readFileSync(sidecarFile);
      } catch (e) {
        result.problems.push(errors.ioFailed(sidecarFile, 'read', e));
        return false;
      }
      const hash = hashHex(xxh64(text));
      if (rec.sidecar?.hash === hash) {
        rec.sidecar = { mtimeMs: st.mtimeMs, size: st.size, hash };
      } else {
        rec.sidecar = { mtimeMs: st.mtimeMs, size: st.size, hash };
        try {
          rec.entries = parseShaderSidecar(text.toString('utf8'), sidecarFile);
          rec.sidecarError = undefined;
        } catch (e) {
          if (!isLuminaError(e)) throw e;
          rec.entries = undefined;
          rec.sidecarError = { message: e.message, field: e.field };
        }
      }
    } else {
      return false;
    }
    this.dirty = true;
    return JSON.stringify([rec.entries, rec.sidecarError]) !== before;
  }

  /** The sidecar problem of a compiled source as a typed error naming the sidecar, or undefined. */
  sidecarProblem(rec: ShaderFileRecord): LuminaError | undefined {
    if (!rec.sidecarError) return undefined;
    return errors.shaderSidecarInvalid(rec.file + SHADER_SIDECAR_EXT, rec.sidecarError.message, rec.sidecarError.field);
  }

  private loadCache(): void {
    let text: string;
    try {
      text = fs.readFileSync(this.cacheFile, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') this.loadProblem = errors.cacheInvalid(this.cacheFile, `cannot be read (${(e as NodeJS.ErrnoException).code ?? e}); re-reading every shader`);
      return;
    }
    try {
      const c = JSON.parse(text) as CacheFile;
      if (c?.version !== CACHE_VERSION || !Array.isArray(c.files)) throw new Error(`version ${c?.version} is not ${CACHE_VERSION}`);
      for (const r of c.files) {
        if (!r || typeof r.virtualPath !== 'string' || typeof r.file !== 'string' || typeof r.hash !== 'string' || !Array.isArray(r.includes)) throw new Error('an entry is malformed');
        this.files.set(r.virtualPath, r);
      }
    } catch (e) {
      this.files.clear();
      this.dirty = true;
      this.loadProblem = errors.cacheInvalid(this.cacheFile, `${(e as Error).message}; re-reading every shader`);
    }
  }

  private saveIfDirty(result: ShaderScanResult): void {
    if (!this.dirty) return;
    try {
      fs.mkdirSync(path.dirname(this.cacheFile), { recursive: true });
      writeFileAtomicSync(this.cacheFile, JSON.stringify({ version: CACHE_VERSION, files: this.all() } satisfies CacheFile));
      this.dirty = false;
    } catch (e) {
      // A cache never fails a run.
      result.problems.push(isLuminaError(e) ? e : errors.ioFailed(this.cacheFile, 'write', e));
    }
  }
}
