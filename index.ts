/**
 * lumina-cook's programmatic API. The CLI is a thin wrapper over these; everything a build script
 * or an editor integration needs is exported here, named.
 */
export { errors, formatLog, isLuminaError, LuminaError } from './src/errors.js';
export type { ErrorCode, LuminaLog } from './src/errors.js';
export { initHash, xxh64 } from './src/util/hash.js';
export { createLogger } from './src/log/logger.js';
export { ProgressBus } from './src/log/events.js';
export type { ProgressEvent, ProgressListener } from './src/log/events.js';

export { loadConfig, normalizeConfig } from './config/index.js';
export type { LoadedConfig, MountConfig, PluginConfig, ProjectConfig } from './config/index.js';

export { parsePackage, parsePackageTables, readPackageFile, readPackageTables, decodeExport, findAssetExport } from './src/format/packageReader.js';
export { writePackage } from './src/format/packageWriter.js';
export { buildPackage, prop, ref, hard, soft } from './src/format/packageBuilder.js';
export { decodeProperties, encodeProperties, mapObjectRefs } from './src/format/properties.js';
export { encodeCooked, decodeCooked, parseCookedHeader } from './src/format/cookedPackage.js';
export { encodeCookedRegistry, decodeCookedRegistry } from './src/format/cookedRegistry.js';
export type * from './src/format/packageTypes.js';

export { Vfs } from './src/vfs/Vfs.js';
export { AssetRegistry, resolveCookRoots, findDependencyChain } from './src/registry/index.js';
export type { AssetRecord, ScanResult, RegistryChange } from './src/registry/index.js';

export { cookProject } from './cook/index.js';
export type { CookSummary, CookProjectOptions } from './cook/index.js';
export { cookTexture, decodeImage, generateMips } from './cook/texture/index.js';

export { writePak, PakReader, MountedPaks, diffPaks, buildPatchPak, writeRelease, readReleaseManifest } from './pak/index.js';
export type { PakSource, ReleaseManifest, PatchSummary } from './pak/index.js';

export { generateProject } from './samples/index.js';
