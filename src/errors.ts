/**
 * The one error catalogue. Every user-facing failure is a `LuminaError` with a stable string code,
 * a message that says what is wrong, and where: `file` (absolute or as given), `offset` (bytes),
 * `field` (a format field or config key). The location prefix is added by `formatLog` only, never
 * at the throw, so messages stay short and tests can assert `{ code, message }` exactly.
 *
 * Codes are sorted alphabetically; add a factory next to its neighbours.
 */
import path from 'node:path';

export type ErrorCode =
  | 'ASSET_MISSING'
  | 'ASSET_NOT_FOUND'
  | 'CACHE_INVALID'
  | 'CONFIG_INVALID'
  | 'CONFIG_NOT_FOUND'
  | 'CONFIG_PARSE'
  | 'COOK_FAILED'
  | 'COOK_NO_ROOTS'
  | 'COOKED_INVALID'
  | 'DAEMON_RUNNING'
  | 'DAEMON_UNAVAILABLE'
  | 'DEPENDENCY_MISSING'
  | 'DUPLICATE_GUID'
  | 'IMAGE_INVALID'
  | 'IMAGE_TOO_LARGE'
  | 'IO_FAILED'
  | 'LMETA_INVALID'
  | 'LMETA_MISSING'
  | 'MOUNT_CONFLICT'
  | 'NATIVE_TAIL_MISMATCH'
  | 'NATIVE_TAIL_UNMAPPED'
  | 'PACKAGE_INVALID'
  | 'PACKAGE_NAME_NONE'
  | 'PACKAGE_TRUNCATED'
  | 'PACKAGE_VERSION'
  | 'PAK_ENTRY_CORRUPT'
  | 'PAK_ENTRY_NOT_FOUND'
  | 'PAK_ENTRY_TOO_LARGE'
  | 'PAK_INVALID'
  | 'PAK_PATH_INVALID'
  | 'PATCH_BASE_INVALID'
  | 'PRIMARY_NAME_DUPLICATE'
  | 'PROJECT_LOCKED'
  | 'REGISTRY_INVALID'
  | 'REMOTE_CACHE'
  | 'SCHEMA_INVALID'
  | 'SHADER_CACHE_INVALID'
  | 'SHADER_COMPILE_FAILED'
  | 'SHADER_COMPILER_FAILED'
  | 'SHADER_COMPILER_MISSING'
  | 'SHADER_DEFINE_INVALID'
  | 'SHADER_INCLUDE_CYCLE'
  | 'SHADER_INCLUDE_MISSING'
  | 'SHADER_NOT_FOUND'
  | 'SHADER_SIDECAR_INVALID'
  | 'SHADER_SPIRV_INVALID'
  | 'TEXTURE_INVALID'
  | 'USAGE'
  | 'WATCH_FAILED';

export interface LuminaLog {
  code: ErrorCode;
  message: string;
  file?: string;
  offset?: number;
  field?: string;
  hint?: string;
}

export class LuminaError extends Error implements LuminaLog {
  readonly code: ErrorCode;
  readonly file?: string;
  readonly offset?: number;
  readonly field?: string;
  readonly hint?: string;

  constructor(log: LuminaLog, options?: { cause?: unknown }) {
    super(log.message, options);
    this.name = 'LuminaError';
    this.code = log.code;
    if (log.file !== undefined) this.file = log.file;
    if (log.offset !== undefined) this.offset = log.offset;
    if (log.field !== undefined) this.field = log.field;
    if (log.hint !== undefined) this.hint = log.hint;
  }

  /** The plain fields, for structured logs and JSON output. */
  toLog(): LuminaLog {
    const out: LuminaLog = { code: this.code, message: this.message };
    if (this.file !== undefined) out.file = this.file;
    if (this.offset !== undefined) out.offset = this.offset;
    if (this.field !== undefined) out.field = this.field;
    if (this.hint !== undefined) out.hint = this.hint;
    return out;
  }
}

export function isLuminaError(e: unknown): e is LuminaError {
  return e instanceof LuminaError;
}

const IO_REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EEXIST: 'already exists',
  EISDIR: 'is a folder, not a file',
  ELOOP: 'too many levels of symbolic links',
  EMFILE: 'too many open files',
  ENAMETOOLONG: 'the name is too long for this filesystem',
  ENOENT: 'no such file or folder',
  ENOSPC: 'the disk is full',
  ENOTDIR: 'a part of the path is not a folder',
  EPERM: 'operation not permitted',
  EROFS: 'the filesystem is read-only',
  EDQUOT: 'the disk quota is exceeded',
};

function describeIo(cause: unknown): string {
  const code = (cause as NodeJS.ErrnoException)?.code;
  if (code) return IO_REASONS[code] ? `${IO_REASONS[code]} (${code})` : code;
  return cause instanceof Error ? cause.message : String(cause);
}

interface Where {
  file?: string;
  offset?: number;
  field?: string;
  hint?: string;
}

function make(code: ErrorCode, message: string, where: Where = {}, cause?: unknown): LuminaError {
  return new LuminaError({ code, message, ...where }, cause === undefined ? undefined : { cause });
}

/** Factories, one per code, sorted by code. */
export const errors = {
  assetMissing: (file: string, stem: string) =>
    make('ASSET_MISSING', `no export is named "${stem}", so the package has no asset`, {
      file,
      field: 'objectName',
      hint: 'the asset export must be named like the file; was the file renamed outside the editor?',
    }),
  assetNotFound: (asset: string, where?: Where) => make('ASSET_NOT_FOUND', `no asset matches "${asset}"`, where),
  cacheInvalid: (file: string, why: string, offset?: number) =>
    make('CACHE_INVALID', `cache is unusable: ${why}`, { file, offset }),
  configInvalid: (file: string, key: string, why: string) =>
    make('CONFIG_INVALID', `"${key}" ${why}`, { file, field: key }),
  configNotFound: (file: string) =>
    make('CONFIG_NOT_FOUND', 'no lumina-cook.json here', {
      file,
      hint: 'pass --project <dir> pointing at a folder that holds lumina-cook.json',
    }),
  configParse: (file: string, why: string, at?: { offset: number; line: number; column: number }) =>
    make('CONFIG_PARSE', at ? `not valid JSON at line ${at.line}, column ${at.column}: ${why}` : `not valid JSON: ${why}`, { file, offset: at?.offset }),
  cookFailed: (file: string, why: string, cause?: unknown) => make('COOK_FAILED', why, { file }, cause),
  cookNoRoots: (file: string) =>
    make('COOK_NO_ROOTS', 'nothing to cook: no cook roots are declared and no asset is flagged Primary', {
      file,
      hint: 'add "cookRoots": ["/Game/Maps/YourMap"] to lumina-cook.json, or set "GameStartupMap"',
    }),
  cookedInvalid: (file: string, field: string, why: string, offset?: number) =>
    make('COOKED_INVALID', `${field}: ${why}`, { file, field, offset }),
  daemonRunning: (file: string, pid: number) =>
    make('DAEMON_RUNNING', `a watch daemon (pid ${pid}) is already running for this project`, {
      file,
      hint: 'stop it first (lumina-cook daemon stop), or remove daemon.json if that pid is not a daemon',
    }),
  daemonUnavailable: (file: string, why: string) => make('DAEMON_UNAVAILABLE', why, { file }),
  dependencyMissing: (referrer: string, guid: string) =>
    make('DEPENDENCY_MISSING', `references ${guid}, which no mounted asset has`, { file: referrer }),
  duplicateGuid: (guid: string, first: string, second: string) =>
    make('DUPLICATE_GUID', `GUID ${guid} is also used by ${first}`, {
      file: second,
      hint: 'a copied file keeps its GUID; re-save the copy so it gets a new one',
    }),
  imageInvalid: (file: string, why: string, cause?: unknown) => make('IMAGE_INVALID', why, { file }, cause),
  imageTooLarge: (file: string, why: string, field: string) => make('IMAGE_TOO_LARGE', why, { file, field }),
  ioFailed: (file: string, op: string, cause: unknown) => make('IO_FAILED', `${op} failed: ${describeIo(cause)}`, { file }, cause),
  lmetaInvalid: (file: string, why: string, field?: string) => make('LMETA_INVALID', why, { file, field }),
  lmetaMissing: (file: string) =>
    make('LMETA_MISSING', 'text asset has no .lmeta sidecar', {
      file,
      hint: 'run the editor or `lumina-cook registry scan` once outside --ci to mint it, then commit it',
    }),
  mountConflict: (alias: string, why: string) => make('MOUNT_CONFLICT', `${alias}: ${why}`, { field: alias }),
  nativeTailMismatch: (file: string, className: string, exportName: string, offset: number, why: string) =>
    make('NATIVE_TAIL_MISMATCH', `the schema of ${className} does not fit export "${exportName}": ${why}`, {
      file,
      field: `${exportName}.native`,
      offset,
      hint: 'the class schema and the package disagree: re-export the schemas from the engine that saved the package',
    }),
  nativeTailUnmapped: (file: string, className: string, exportName: string, offset: number, bytes: number) =>
    make('NATIVE_TAIL_UNMAPPED', `export "${exportName}" (${className}) has ${bytes} bytes of native data and no class schema, and the package loses exports, so its references cannot be renumbered`, {
      file,
      field: `${exportName}.native`,
      offset,
      hint: `add ${className} to a class schema in the schemas folder, or set cook.onCookFailure to "verbatim" to ship the source`,
    }),
  packageInvalid: (file: string, field: string, offset: number, why: string) =>
    make('PACKAGE_INVALID', `${field}: ${why}`, { file, field, offset }),
  packageNameNone: (file: string, field: string, offset: number) =>
    make('PACKAGE_NAME_NONE', `${field}: the display string NAME_None in a version 2 package is read as None`, {
      file,
      field,
      offset,
      hint: 'a writer saved a display string where None belongs; re-save the package',
    }),
  packageTruncated: (file: string, field: string, offset: number, need: number, size: number) =>
    make('PACKAGE_TRUNCATED', `${field}: needs ${need} bytes at offset ${offset} but the file ends at ${size}`, {
      file,
      field,
      offset,
    }),
  packageVersion: (file: string, version: number, offset = 4) =>
    make(
      'PACKAGE_VERSION',
      version > 2 ? `version ${version} was written by a newer engine (this reads 1 and 2)` : `version ${version} is not a package version`,
      { file, field: 'version', offset },
    ),
  pakEntryCorrupt: (file: string, entry: string, why: string, offset?: number) =>
    make('PAK_ENTRY_CORRUPT', `entry "${entry}" ${why}`, { file, field: 'path', offset }),
  pakEntryNotFound: (file: string, entry: string) => make('PAK_ENTRY_NOT_FOUND', `no entry "${entry}"`, { file, field: 'path' }),
  pakEntryTooLarge: (file: string, entry: string, rawSize: number, limit: number) =>
    make('PAK_ENTRY_TOO_LARGE', `entry "${entry}" is ${rawSize} bytes, more than the ${limit} a whole read may hold`, {
      file,
      field: 'rawSize',
      hint: 'pak cat and pak extract stream entries of any size',
    }),
  pakInvalid: (file: string, field: string, why: string, offset?: number) =>
    make('PAK_INVALID', `${field}: ${why}`, { file, field, offset }),
  pakPathInvalid: (file: string, entry: string, why: string) =>
    make('PAK_PATH_INVALID', `entry "${entry}" ${why}`, { file, field: 'path' }),
  patchBaseInvalid: (file: string, why: string, hint?: string) => make('PATCH_BASE_INVALID', why, { file, hint }),
  primaryNameDuplicate: (file: string, name: string, first: string) =>
    make('PRIMARY_NAME_DUPLICATE', `Primary asset name "${name}" is also used by ${first}; the runtime finds Primary assets by name`, {
      file,
      field: 'objectName',
      hint: 'rename one of them, or clear its Primary flag',
    }),
  projectLocked: (file: string, holder: { pid: number; holder: 'cook' | 'watch' }) =>
    make('PROJECT_LOCKED', `${holder.holder === 'watch' ? 'a watch daemon' : 'another cook'} (pid ${holder.pid}) is writing this project`, {
      file,
      hint: holder.holder === 'watch' ? 'stop it (lumina-cook daemon stop), or ask it to cook (lumina-cook daemon cook)' : 'wait for it to finish',
    }),
  registryInvalid: (file: string, field: string, why: string, offset?: number) =>
    make('REGISTRY_INVALID', `${field}: ${why}`, { file, field, offset }),
  remoteCache: (url: string, why: string, cause?: unknown) => make('REMOTE_CACHE', why, { file: url }, cause),
  schemaInvalid: (file: string, jsonPath: string, why: string) =>
    make('SCHEMA_INVALID', `${jsonPath}: ${why}`, { file, field: jsonPath }),
  shaderCacheInvalid: (file: string, field: string, why: string, offset?: number) =>
    make('SHADER_CACHE_INVALID', `${field}: ${why}`, { file, field, offset }),
  /** `where` is `file:line:column` of the first error; `file` the source (absolute) it is in. */
  shaderCompileFailed: (file: string, where: string, why: string, permutation: string, askedBy: string) =>
    make('SHADER_COMPILE_FAILED', `${where}: ${why} (compiling ${permutation}, asked for by ${askedBy})`, { file }),
  shaderCompilerFailed: (file: string, permutation: string, why: string, askedBy: string) =>
    make('SHADER_COMPILER_FAILED', `${why} (compiling ${permutation}, asked for by ${askedBy})`, { file }),
  shaderCompilerMissing: (file: string, why: string) =>
    make('SHADER_COMPILER_MISSING', why, { file, hint: 'run `bash .ci/install-system-deps` (glslang-tools, spirv-tools), or put Slang\'s slangc on PATH' }),
  shaderDefineInvalid: (file: string, define: string, field: string) =>
    make('SHADER_DEFINE_INVALID', `define ${JSON.stringify(define)} is refused: it must be NAME or NAME=VALUE (NAME letters, digits and _, not starting with a digit; VALUE letters, digits and _ . + -)`, { file, field }),
  shaderIncludeCycle: (file: string, chain: readonly string[]) =>
    make('SHADER_INCLUDE_CYCLE', `#include cycle: ${chain.join(' -> ')}`, { file }),
  shaderIncludeMissing: (file: string, include: string, line: number) =>
    make('SHADER_INCLUDE_MISSING', `line ${line}: #include "${include}" matches no file beside it or in any mount's Shaders/`, { file }),
  shaderNotFound: (file: string, source: string, field: string) =>
    make('SHADER_NOT_FOUND', `shader source "${source}" is not a compiled source under any mount's Shaders/ (.slang, .hlsl, .glsl)`, { file, field }),
  shaderSidecarInvalid: (file: string, why: string, field?: string) => make('SHADER_SIDECAR_INVALID', why, { file, field }),
  shaderSpirvInvalid: (file: string, permutation: string, why: string) =>
    make('SHADER_SPIRV_INVALID', `spirv-val rejected the code of ${permutation}: ${why}`, { file }),
  textureInvalid: (file: string, why: string, cause?: unknown) => make('TEXTURE_INVALID', why, { file }, cause),
  usage: (message: string, hint?: string) => make('USAGE', message, { hint }),
  /** A content folder the watch daemon cannot watch: `why` is the OS reason, `hint` the fix when known. */
  watchFailed: (folder: string, why: string, hint?: string, cause?: unknown) =>
    make('WATCH_FAILED', `cannot watch this folder: ${why}`, { file: folder, hint }, cause),
} as const;

/**
 * One line for a human: `Content/Maps/Main.lasset @0x10 (importCount): message`.
 * `root` makes the file relative to the project; the prefix is added only here.
 */
export function formatLog(log: LuminaLog, root?: string): string {
  let where = '';
  if (log.file) {
    where = log.file;
    // Relative to the project when inside it; outside it an absolute path is clearer than ../..
    if (root && path.isAbsolute(log.file)) {
      const rel = path.relative(root, log.file);
      if (rel && !rel.startsWith('..')) where = rel;
    }
  }
  if (log.offset !== undefined) where += `${where ? ' ' : ''}@${log.offset}`;
  if (log.field !== undefined && !log.message.startsWith(`${log.field}:`) && !log.message.startsWith(`"${log.field}"`)) {
    where += `${where ? ' ' : ''}(${log.field})`;
  }
  let line = where ? `${where}: ${log.message}` : log.message;
  if (log.hint) line += `\n  hint: ${log.hint}`;
  return `[${log.code}] ${line}`;
}

/**
 * Wrap an unknown failure from a filesystem call into a typed error. Errors that are already
 * typed pass through unchanged, so callers can wrap whole blocks.
 */
export function asLuminaError(e: unknown, file: string, op: string): LuminaError {
  if (e instanceof LuminaError) return e;
  return errors.ioFailed(file, op, e);
}
