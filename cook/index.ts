/** The cook pipeline's public API. */
export { cookProject, REGISTRY_ENTRY } from './cookProject.js';
export type { AssetReport, CookProblem, CookProjectOptions, CookSummary } from './cookProject.js';
export { Cooker } from './Cooker.js';
export type { CookerOpenOptions, FullCookOptions } from './Cooker.js';
export type { CookStore, CookStoreRequest, CookStorePublish, StoredCook } from './CookStore.js';
export { cookKeyFor, changedPart, COOK_FORMAT_VERSION } from './cookKey.js';
export type { CookKey, CookKeyInput, CookKeyPart, CookKeyParts } from './cookKey.js';
export { assetCookContext, cookPackageAsset, cookTextAsset, cookedPathFor } from './cookAsset.js';
export type { AssetCookContext, AssetCookResult, AssetStatus } from './cookAsset.js';
export { CookCache, CACHE_FILE_NAME, JOURNAL_FILE_NAME, settingsHashes } from './cookCache.js';
export type { CacheEntry, RecookReason } from './cookCache.js';
export { resolveCookRoots } from './cookRoots.js';
export type { ResolvedRoots, RootLookup } from './cookRoots.js';
export { planCook, compareChunks, MAIN_CHUNK } from './planCook.js';
export type { AssetLookup, CookPlan, CookRoot, PlannedAsset } from './planCook.js';
export { cookPackageBytes, stripReason, STRIP_OBJECT_FLAGS } from './stripPackage.js';
export type { CookedPackageBytes, StripOptions } from './stripPackage.js';
export { readTextureSettings, textureTransform, TEXTURE_CLASS } from './textureExport.js';
