/**
 * The seam between the shader cook and a shared cache of compiled permutations (the remote cache,
 * cook/remote/RemoteShaderCache.ts), like cook/CookStore.ts is for packages. The shader cook asks
 * it after a local cache miss and before compiling, and offers it what it compiled.
 *
 * The remote owns its failures: `fetch` resolves undefined for a miss, a bad blob, a timeout or a
 * server that is off, and `publish` never rejects. What `fetch` returns must already be verified
 * (SHA-256 and size of the blob, a SPIR-V module of the right entry point and stage, spirv-val).
 */
import type { PermutationId } from '../../src/format/shaderCache.js';
import type { ShaderLanguage } from '../../src/registry/shaderSources.js';
import type { ShaderCompiler } from './compiler.js';

export interface ShaderRemoteRequest {
  id: PermutationId;
  language: ShaderLanguage;
  compiler: ShaderCompiler;
  /** The source and every file it includes, transitively, sorted by virtual path; `hash` is the scan's xxh64. */
  files: ReadonlyArray<{ virtualPath: string; file: string; hash: string }>;
  /** The source's absolute path, for messages. */
  file: string;
  /** For spirv-val on a downloaded module. */
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface ShaderRemote {
  /** Verified code of this permutation, or undefined. Never rejects. */
  fetch(req: ShaderRemoteRequest): Promise<Uint8Array | undefined>;
  /** Offer code compiled (or, for a shard, cached) here. Never rejects; does nothing when writes are off. */
  publish(req: ShaderRemoteRequest, code: Uint8Array, ms: number): Promise<void>;
  /** Wait for publishes in flight. */
  flush(): Promise<void>;
}
