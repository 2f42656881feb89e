/**
 * The cook key: the one place that says what decides an asset's cooked bytes. The local cook
 * cache, the remote cache and shards all key on it, so they can never disagree.
 *
 * key = hash of the named parts, in order. Parts are kept beside the key (in the cache entry), so
 * a re-cook can say WHICH part changed: the reason is the name of the first part that differs.
 *
 * - `content`: xxh64 of the source file (the registry's hash).
 * - `format`: COOK_FORMAT_VERSION (bump when the cooker's output for the same input changes).
 * - `settings`: a hash of the settings that touch THIS asset: every package depends on the
 *   editor-only class prefixes and the compression level; a package with a texture export also on
 *   the texture settings; text assets on none (they are copied).
 * - `encoder` (packages with a texture export only): the texture encoder's identity and levels
 *   (textureEncoderKey: which basisu build, by version and the xxh64 of its executable, and its
 *   quality and effort levels), so a new basisu or another level re-cooks every texture and says
 *   so. A texture that fell back to RGBA8 because basisu could not run is never cached at all.
 * - `schema`: only for a package whose exports use a class that has a class schema: the hash of
 *   those classes' schemas (each with its super chain and the structs it reaches).
 *
 * Never a timestamp or an absolute path: two machines with different checkout folders agree.
 * Soft/hard traversal, onCookFailure, concurrency and pak settings decide what ships, not an
 * asset's bytes, so they are not in any key.
 *
 * To add a part (class schema hashes, a texture encoder's identity): add its name to
 * CookKeyPart, compute it in `cookKeyFor` (only for the assets it touches) and that is all; the
 * cache stores and compares parts by name, and an entry without the new part re-cooks as that part.
 */
import type { ProjectConfig } from '../config/index.js';
import { hashString } from '../src/util/hash.js';
import { textureEncoderKey } from './textureExport.js';

/** Bump when the cooked bytes for the same input and settings change. */
export const COOK_FORMAT_VERSION = 1;

/** The named inputs of a cook key, in the order they are hashed and compared. */
export type CookKeyPart = 'content' | 'format' | 'settings' | 'encoder' | 'schema';

export type CookKeyParts = { [P in CookKeyPart]?: string };

export interface CookKey {
  /** 16 hex digits: what caches are addressed by. */
  key: string;
  /** The parts, for "why re-cooked" (compare with a stored entry's parts). */
  parts: CookKeyParts;
}

/** What the key of one asset depends on besides the project settings. */
export interface CookKeyInput {
  kind: 'package' | 'text';
  /** The source file's xxh64 (16 hex digits). */
  contentHash: string;
  /** The package holds a texture export (texture settings apply). */
  texture: boolean;
  /**
   * The class schemas' part (ClassSchemas.packageHash of the package's export classes): '' or
   * absent when no schema touches the package, which then has no `schema` part at all, so adding
   * or editing schemas never moves the key of a package whose classes they do not cover.
   */
  schema?: string;
}

/** JSON with object keys sorted at every level: the same settings always hash the same. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .filter((k) => o[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** The settings that change cooked bytes, split by what they affect (hashed once per cook). */
export interface CookSettingsHashes {
  package: string;
  texture: string;
  text: string;
  /** The texture encoder's identity and levels (the `encoder` part of texture packages). */
  encoder: string;
}

export function settingsHashes(config: Pick<ProjectConfig, 'cook' | 'textures'>): CookSettingsHashes {
  const pkg = { editorOnlyClassPrefixes: [...config.cook.editorOnlyClassPrefixes], compressionLevel: config.cook.compressionLevel };
  const tex = { ...pkg, textures: { encoder: config.textures.encoder, maxSize: config.textures.maxSize } };
  return { package: hashString(canonicalJson(pkg)), texture: hashString(canonicalJson(tex)), text: 'text', encoder: hashString(canonicalJson(textureEncoderKey(config.textures))) };
}

/** Hash parts in their declared order into a key. */
export function keyOfParts(parts: CookKeyParts): string {
  // `k=v` lines in the parts' own order (Object.entries' order), without an array per part.
  let text = '';
  for (const k in parts) text += `${text === '' ? '' : '\n'}${k}=${parts[k as CookKeyPart]}`;
  return hashString(text);
}

const FORMAT_PART = String(COOK_FORMAT_VERSION);

/**
 * The parts of one asset's cook key under the given settings, in their declared order, without
 * the hash: what a cache check compares with an entry's stored parts (equal parts are an equal key).
 */
export function cookKeyParts(input: CookKeyInput, settings: CookSettingsHashes): CookKeyParts {
  const parts: CookKeyParts = {
    content: input.contentHash,
    format: FORMAT_PART,
    settings: input.kind === 'text' ? settings.text : input.texture ? settings.texture : settings.package,
  };
  if (input.kind === 'package' && input.texture) parts.encoder = settings.encoder;
  if (input.schema) parts.schema = input.schema;
  return parts;
}

/** The cook key of one asset under the given settings. */
export function cookKeyFor(input: CookKeyInput, settings: CookSettingsHashes): CookKey {
  const parts = cookKeyParts(input, settings);
  return { key: keyOfParts(parts), parts };
}

/**
 * Do two sets of parts name the same key? Every key is `keyOfParts` of parts built by
 * `cookKeyParts` (fixed order), so the same names with the same values hash to the same key: a
 * cache check compares a handful of short strings instead of hashing the key per asset.
 */
export function sameParts(had: CookKeyParts, want: CookKeyParts): boolean {
  let n = 0;
  for (const k in want) {
    if (had[k as CookKeyPart] !== want[k as CookKeyPart]) return false;
    n++;
  }
  for (const _ in had) n--;
  return n === 0;
}

/**
 * The first part of `want` that `had` does not match (the "why re-cooked" reason), or undefined
 * when every part matches. A part `had` lacks counts as changed, and so does one only `had` has
 * (a schema that no longer covers the package).
 */
export function changedPart(had: CookKeyParts, want: CookKeyParts): CookKeyPart | undefined {
  for (const [k, v] of Object.entries(want) as Array<[CookKeyPart, string]>) if (had[k] !== v) return k;
  for (const k of Object.keys(had) as CookKeyPart[]) if (!(k in want)) return k;
  return undefined;
}
