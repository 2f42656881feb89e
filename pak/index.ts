/** The pak layer's public API: write, read, mount, diff and patch paks; release manifests. */
export { writePak, sortSources, type PakSource, type WritePakOptions, type WritePakResult } from './writePak.js';
export { PakReader, type VerifyResult } from './PakReader.js';
export { MountedPaks, type MountOptions, type Resolved } from './MountedPaks.js';
export { diffPaks, type PakDiff } from './diffPaks.js';
export { collectSources, listFiles, walkFiles } from './collectSources.js';
export { ReleaseContent } from './releaseContent.js';
export { buildPatchPak, sourceIdentity, type BuildPatchOptions, type PatchSummary } from './buildPatch.js';
export {
  RELEASE_MANIFEST,
  RELEASE_REGISTRY,
  baseTocHash,
  describePak,
  describePakFile,
  readReleaseManifest,
  resolveRelease,
  writeRelease,
  writeReleaseManifest,
  type ReleaseEntry,
  type ReleaseManifest,
  type ReleasePak,
  type ReleasePakInfo,
  type ReleaseSummary,
} from './releaseManifest.js';
export {
  METHOD_TOMBSTONE,
  PAK_FLAG_PATCH,
  comparePathBytes,
  mountedPath,
  validateVirtualPath,
  virtualPathProblem,
  type PakEntry,
  type PakToc,
} from './pakFormat.js';
export { catPath, extractPaks, type ExtractResult } from './extractPaks.js';
