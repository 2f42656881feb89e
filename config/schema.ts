/**
 * The shape of lumina-cook.json, checked key by key so an error names the exact key
 * (`cook.soft`, `plugins[1].cookRoots[0]`). Unknown keys are collected as warnings, not errors,
 * so a newer config still loads in an older tool.
 */
/** null when valid; else why, or `[the exact key, why]` when a nested item is at fault. */
export type Check = (value: unknown, key: string) => string | [string, string] | null;

export type Shape = { [key: string]: Check | Shape };

/** A bad value as its error echoes it: JSON, cut short so one line stays one line. */
export function shown(v: unknown): string {
  const text = v === undefined ? 'undefined' : JSON.stringify(v);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

export const isString: Check = (v) => (typeof v === 'string' && v.length > 0 ? null : 'must be a non-empty string');
export const isStringOrNull: Check = (v) => (v === null || (typeof v === 'string' && v.length > 0) ? null : 'must be a non-empty string or null');
export const isBoolean: Check = (v) => (typeof v === 'boolean' ? null : 'must be true or false');
export const oneOf =
  (...options: string[]): Check =>
  (v) =>
    typeof v === 'string' && options.includes(v) ? null : `must be one of ${options.map((o) => `"${o}"`).join(', ')}`;
export const intRange =
  (min: number, max: number): Check =>
  (v) =>
    Number.isInteger(v) && (v as number) >= min && (v as number) <= max ? null : `must be a whole number from ${min} to ${max}`;

/** A virtual package path: `/Mount/Folder/Name`, optionally `.Object`. */
export const isVirtualPath: Check = (v) =>
  typeof v === 'string' && /^\/[A-Za-z0-9_]+(\/[A-Za-z0-9_ .-]+)+$/.test(v) && !v.split('/').some((s) => s === '..' || s === '.')
    ? null
    : 'must be a virtual path like "/Game/Maps/Main"';

export const arrayOf =
  (item: Check): Check =>
  (v, key) => {
    if (!Array.isArray(v)) return 'must be an array';
    for (let i = 0; i < v.length; i++) {
      const why = item(v[i], `${key}[${i}]`);
      if (why) return Array.isArray(why) ? why : [`${key}[${i}]`, `${why}, not ${shown(v[i])}`];
    }
    return null;
  };

export const PLUGIN_SHAPE: Shape = {
  name: (v) => (typeof v === 'string' && /^[A-Za-z][A-Za-z0-9_]*$/.test(v) ? null : 'must be a plugin name of letters, digits and _'),
  path: isString,
  enabled: isBoolean,
  chunk: (v) => (typeof v === 'string' && /^[A-Za-z0-9_-]+$/.test(v) ? null : 'must be a chunk name of letters, digits, _ and -'),
  cookRoots: arrayOf(isVirtualPath),
};

export const CONFIG_SHAPE: Shape = {
  $schema: isString,
  name: isString,
  contentDir: isString,
  engineContentDir: isStringOrNull,
  savedDir: isString,
  intermediatesDir: isString,
  schemas: isString,
  cookRoots: arrayOf(isVirtualPath),
  GameStartupMap: (v, k) => (v === null ? null : isVirtualPath(v, k)),
  plugins: (v) => (Array.isArray(v) ? null : 'must be an array of plugins'),
  cook: {
    soft: oneOf('include', 'exclude'),
    editorOnlyClassPrefixes: arrayOf(isString),
    onCookFailure: oneOf('fail', 'verbatim'),
    compressionLevel: intRange(0, 9),
    concurrency: intRange(0, 256),
    workers: intRange(0, 64),
  },
  textures: {
    encoder: oneOf('basis', 'rgba8'),
    maxSize: intRange(1, 16384),
    maxMemoryMiB: intRange(16, 65_536),
    etc1sQuality: intRange(1, 255),
    etc1sEffort: intRange(0, 6),
    uastcLevel: intRange(0, 4),
    encoderPath: isStringOrNull,
    encoderTimeoutMs: intRange(100, 86_400_000),
  },
  paks: {
    mountPoint: (v) => (typeof v === 'string' && v.startsWith('/') ? null : 'must start with "/"'),
    priority: intRange(-1_000_000, 1_000_000),
  },
  watch: {
    debounceMs: intRange(0, 10_000),
    port: intRange(0, 65_535),
  },
  remoteCache: {
    // Returned as [key, why] so the loader does not echo the value: it may hold a password.
    url: (v, key) => {
      const why = v === null ? null : remoteCacheUrlProblem(v);
      return why === null ? null : [key, why];
    },
    read: isBoolean,
    write: isBoolean,
    salt: (v) => (typeof v === 'string' ? null : 'must be a string'),
    timeoutMs: intRange(100, 600_000),
  },
  shaders: {
    global: arrayOf((v) =>
      typeof v === 'string' && /^\/[A-Za-z0-9_]+\/Shaders(\/[A-Za-z0-9_ .-]+)+$/.test(v) && !v.split('/').some((s) => s === '..' || s === '.')
        ? null
        : 'must be a shader source path like "/Engine/Shaders/Lit.hlsl"',
    ),
    timeoutMs: intRange(100, 3_600_000),
    concurrency: intRange(0, 256),
  },
};

/**
 * A remote cache URL: http(s), no credentials (those come only from the environment, so none is
 * ever committed with the project), no query or fragment. Its path is the instance prefix.
 */
export function remoteCacheUrlProblem(v: unknown): string | null {
  if (typeof v !== 'string') return 'must be an http:// or https:// URL, or null';
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    return 'must be an http:// or https:// URL, or null';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'must be an http:// or https:// URL, or null';
  if (u.username || u.password) return 'must not carry credentials: set LUMINA_REMOTE_CACHE_TOKEN or LUMINA_REMOTE_CACHE_BASIC in the environment';
  if (u.search || u.hash) return 'must not have a query or fragment';
  return null;
}
