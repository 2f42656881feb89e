/**
 * The asset registry's public model. The cook, the pak writer and the watch daemon all depend on
 * this shape; change it only together with them.
 */
import type { DependencyType } from '../format/packageTypes.js';

export type AssetKind = 'package' | 'text';

export interface AssetDependency {
  guid: string;
  type: DependencyType;
}

export interface AssetRecord {
  /** 32 lowercase hex digits: the asset export's objectGuid, or the text asset's .lmeta guid. */
  guid: string;
  /** The asset's name: the package's stem (its asset export's objectName), or a text file's name with extension. */
  name: string;
  /** `/Script/Engine.CTexture`...; for text assets `Text.rml`, `Text.rcss`, `Text.luau`. */
  className: string;
  /** Package path without extension, e.g. `/Game/Materials/Rock` (object path is `<packagePath>.<name>`). */
  packagePath: string;
  /** The file's virtual path with extension, e.g. `/Game/Materials/Rock.lasset`: the pak entry path. */
  virtualPath: string;
  /** Absolute path on disk. */
  file: string;
  /** The mount alias it lives under, e.g. `/Game` or `/Foliage`. */
  mount: string;
  kind: AssetKind;
  /** assetFlags of the asset export (0x1 Primary); 0 for text assets. */
  flags: number;
  /** Imports of the package, in import-table order; empty for text assets. */
  dependencies: AssetDependency[];
  /** What the cache keys on. */
  mtimeMs: number;
  size: number;
  /** xxh64 of the whole file, 16 hex digits. */
  hash: string;
}

export interface ScanProblem {
  code: string;
  message: string;
  file?: string;
  /** 'warning' when only time is lost (an unusable cache was rebuilt); 'error' for a content problem. */
  severity?: 'error' | 'warning';
  hint?: string;
  /** The GUID the file had at its last good read, when the registry knew it (so a cook can say which reference it breaks). */
  guid?: string;
}

export interface ScanResult {
  /** Assets now in the registry. */
  assets: number;
  /** Files whose tables were read (new or changed content). */
  read: number;
  /** Files taken from the cache without reading (unchanged mtime + size). */
  cached: number;
  /** Files whose mtime changed but whose hash did not: not re-parsed. */
  rehashed: number;
  /** Entries reaped because their file is gone. */
  removed: number;
  /** Packages that could not be read (corrupt, truncated...), duplicate GUIDs, missing sidecars. */
  problems: ScanProblem[];
  ms: number;
}
