/**
 * Sharing the repeated parts of records read from files, as `thawRecord` does for records decoded
 * from the cache: one frozen dependency object per (GUID, type), one string per class name.
 *
 * Why: a cold scan parsed every import into its own `{ guid, type }` with its own 32-character GUID
 * string, and every record got its own copy of its class name. At a million assets (~2.4 imports
 * each, most pointing at a few shared assets) that was a few hundred MiB more heap after a cold scan
 * than after a warm open of the same registry, held for the whole cook.
 */
import { DependencyType } from '../format/packageTypes.js';
import type { AssetDependency, AssetRecord } from './types.js';

export class RecordInterner {
  private readonly hard = new Map<string, AssetDependency>();
  private readonly soft = new Map<string, AssetDependency>();
  private readonly classNames = new Map<string, string>();

  /**
   * @param knownGuid the GUID string an asset already in the registry holds, if any: a new
   * dependency object takes that string instead of its own copy.
   */
  constructor(private readonly knownGuid: (guid: string) => string | undefined = () => undefined) {}

  /** The shared frozen dependency for (guid, type). */
  dep(guid: string, type: DependencyType): AssetDependency {
    const map = type === DependencyType.Soft ? this.soft : this.hard;
    let d = map.get(guid);
    if (d === undefined) {
      d = Object.freeze({ guid: this.knownGuid(guid) ?? this.guid(guid), type });
      map.set(guid, d);
    }
    return d;
  }

  /** The string already held for this GUID (by a dependency object), else `guid` itself. */
  guid(guid: string): string {
    return this.hard.get(guid)?.guid ?? this.soft.get(guid)?.guid ?? guid;
  }

  className(name: string): string {
    const s = this.classNames.get(name);
    if (s !== undefined) return s;
    this.classNames.set(name, name);
    return name;
  }

  /**
   * Replace, in place, a freshly read record's GUID, class name and dependencies with shared ones
   * (same values). Only for records nobody else holds yet: the dependency array is rewritten.
   */
  record(r: AssetRecord): AssetRecord {
    r.guid = this.guid(r.guid);
    r.className = this.className(r.className);
    const deps = r.dependencies;
    for (let i = 0; i < deps.length; i++) deps[i] = this.dep(deps[i].guid, deps[i].type);
    return r;
  }
}
