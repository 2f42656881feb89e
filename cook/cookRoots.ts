/**
 * Cook roots come from the registry's resolver (src/registry/cookRoots.ts), shared with
 * `registry why` so "why is this cooked" and the cook can never disagree. Re-exported here for
 * the cook's callers (the watch daemon), with the lookup type the cook needs on top.
 */
import type { RegistryView } from '../src/registry/cookRoots.js';
import type { AssetLookup } from './planCook.js';

export { primaryNameClashes, resolveCookRoots } from '../src/registry/cookRoots.js';
export type { CookRoots as ResolvedRoots } from '../src/registry/cookRoots.js';

/** What a cook reads from a registry: root resolution plus lookups. `AssetRegistry` satisfies it. */
export type RootLookup = RegistryView & AssetLookup;
