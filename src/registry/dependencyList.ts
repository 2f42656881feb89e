/**
 * A record's dependency list, made the one way every record's is: a `new Array(n)` of objects
 * (HOLEY_ELEMENTS), also when empty. V8 tracks the map of what a record's `dependencies` field
 * holds; lists of four array kinds (`[]` for a text asset, `Array.map` for a read package, a filled
 * `new Array(n)` or an empty one for a thawed record) each deprecated the records' map and sent the
 * code that walks records (the registry cache encoder above all, on every thread of a first cook)
 * back to the interpreter to be compiled again.
 */
import type { AssetDependency } from './types.js';

const FILLER: AssetDependency = Object.freeze({ guid: '', type: 0 });

/** An array of `n` slots for dependencies (fill every slot); for 0, an empty one of the same kind. */
export function dependencyList(n: number): AssetDependency[] {
  const list = new Array<AssetDependency>(n > 0 ? n : 1);
  if (n > 0) return list;
  // An object stored once gives the array its kind for good; the slot goes again.
  list[0] = FILLER;
  list.length = 0;
  return list;
}
