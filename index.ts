/**
 * lumina-cook's programmatic API: `import { cookProject } from 'lumina-cook'`. The CLI (cli/) is a
 * thin wrapper over these; everything a build script or an editor integration needs is exported
 * here, named, with its public types beside it.
 */

// Errors: every user-facing failure is a LuminaError with a stable code.
export { errors, formatLog, isLuminaError, LuminaError } from './src/errors.js';
export type { ErrorCode, LuminaLog } from './src/errors.js';

// Logging and progress events (the CLI's bar, its JSON log and the daemon's stream share them).
export { initHash, xxh64 } from './src/util/hash.js';
export { createLogger } from './src/log/logger.js';
export type { Logger, LoggerOptions } from './src/log/logger.js';
export { ProgressBus } from './src/log/events.js';
export type { ProgressEvent, ProgressListener } from './src/log/events.js';

// Project config (lumina-cook.json).
export { loadConfig, normalizeConfig, CONFIG_FILE_NAME } from './config/index.js';
export type { LoadedConfig, MountConfig, PluginConfig, ProjectConfig } from './config/index.js';

// Package and cooked formats.
export { parsePackage, parsePackageTables, readPackageFile, readPackageTables, decodeExport, decodeExportData, findAssetExport } from './src/format/packageReader.js';
export { writePackage } from './src/format/packageWriter.js';
export { buildPackage, prop, ref, hard, soft } from './src/format/packageBuilder.js';
export { decodeProperties, encodeProperties, encodeExportObject, mapObjectRefs } from './src/format/properties.js';
export { decodeNativeTail, encodeNativeTail } from './src/format/nativeTail.js';
export { NaNBits, BUILTIN_STRUCTS } from './src/format/packageTypes.js';
export { ClassSchemas, parseSchemaFile } from './src/schemas/classSchemas.js';
export type { ClassSchema, SchemaField, StructSchema } from './src/schemas/classSchemas.js';
export { loadSchemas } from './src/schemas/loadSchemas.js';
export { encodeCooked, decodeCooked, parseCookedHeader } from './src/format/cookedPackage.js';
export { encodeCookedRegistry, decodeCookedRegistry } from './src/format/cookedRegistry.js';
export type * from './src/format/packageTypes.js';

// The virtual file system and the asset registry.
export { Vfs } from './src/vfs/Vfs.js';
export { AssetRegistry, resolveCookRoots, findDependencyChain } from './src/registry/index.js';
export type { AssetRecord, ChainLink, CookRoot, RegistryChange, RegistryOptions, ScanProblem, ScanResult } from './src/registry/index.js';

// Cooking and patching.
export { cookProject, patchProject, resolveReleaseBase, Cooker } from './cook/index.js';
export type { AssetReport, CookerOpenOptions, CookProblem, CookProjectOptions, CookStore, CookSummary, FullCookOptions, PatchProjectOptions, PatchProjectResult } from './cook/index.js';
export { cookTexture, decodeImage, generateMips } from './cook/texture/index.js';
export { buildCookReport, renderReportHtml, reportFiles, writeCookReport } from './cook/report/index.js';
export type { CookReport, ReportAsset, ReportFiles, ReportReference } from './cook/report/index.js';

// Paks: write, read, mount (with patches and a loose-file overlay), diff, releases.
export { writePak, PakReader, MountedPaks, diffPaks, buildPatchPak, writeRelease, readReleaseManifest, collectSources, ReleaseContent } from './pak/index.js';
export type { MountOptions, PakDiff, PakEntry, PakSource, PakToc, PatchSummary, ReleaseManifest, ReleaseSummary, VerifyResult, WritePakOptions, WritePakResult } from './pak/index.js';

// The watch daemon and its client.
export { Daemon } from './watch/Daemon.js';
export type { DaemonOptions } from './watch/Daemon.js';
export { runWatch } from './watch/runWatch.js';
export type { WatchArgs } from './watch/runWatch.js';
export { daemonCook, daemonCookAndWait, daemonShutdown, daemonStatus, readDaemonInfo } from './watch/daemonClient.js';
export type { DaemonInfo, DaemonStatus, LastCook } from './watch/controlServer.js';

// Sample projects.
export { generateProject } from './samples/index.js';
export type { GenerateOptions, GenerateResult } from './samples/index.js';
