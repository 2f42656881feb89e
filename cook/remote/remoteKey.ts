/**
 * The remote cache key of one package's cook: SHA-256 over a canonical encoding of everything that
 * decides its cooked bytes and nothing else, so two machines with different checkout folders, clocks
 * and caches agree, and any change that could change the bytes misses.
 *
 * The parts are the cook key's own (cook/cookKey.ts: content, format, settings, the texture
 * encoder's identity for texture packages, and whatever parts it gains), hashed again with SHA-256
 * together with what sharing adds: the source's SHA-256 (a studio-wide cache must not be one 64-bit
 * xxh64 collision away from shipping another asset's bytes) and `salt`, which disowns a whole
 * generation at once. No timestamp, path or machine name is part of it.
 */
import { canonicalJson, type CookKeyParts } from '../cookKey.js';
import { sha256Hex } from './RemoteCacheClient.js';

/** Changes when what the key means changes (the parts below, the ActionResult layout). */
export const REMOTE_KEY_SCHEME = 'lumina-cook/cook/1';

export interface RemoteKeyInput {
  /** The cook key's parts (content, format, settings, ...), as the Cooker computed them. */
  parts: CookKeyParts;
  /** SHA-256 of the source file's bytes, hex. */
  source: string;
  salt: string;
}

/** The action-cache key: 64 lowercase hex digits. */
export function remoteCookKey(p: RemoteKeyInput): string {
  return sha256Hex(Buffer.from(canonicalJson({ scheme: REMOTE_KEY_SCHEME, parts: p.parts, source: p.source, salt: p.salt }), 'utf8'));
}
