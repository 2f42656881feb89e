/** The registry's public API: import from here rather than from the individual modules. */
export { AssetRegistry } from './AssetRegistry.js';
export type { CacheStatus, Referrer, RegistryChange, RegistryListener, RegistryOptions } from './AssetRegistry.js';
export { findDependencyChain, resolveCookRoots } from './cookRoots.js';
export type { ChainLink, CookRoot, CookRootReason, CookRoots, RegistryView } from './cookRoots.js';
export { CACHE_FILE_NAME, CACHE_FORMAT_VERSION } from './registryCache.js';
export { assetKindOf, PACKAGE_EXT, SIDECAR_EXT, TEXT_EXTS } from './walkMount.js';
export type { AssetDependency, AssetKind, AssetRecord, ScanProblem, ScanResult } from './types.js';
