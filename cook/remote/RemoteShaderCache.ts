/**
 * Compiled shader permutations in the shared remote cache: the shader cook's ShaderRemote, on the
 * RemoteCookCache's client, breaker and failure counts (one action entry per permutation, its one
 * output `shader.spv` the validated SPIR-V in the CAS).
 *
 * The key hashes everything that decides the SPIR-V bytes and nothing else, so machines with
 * different checkout folders agree:
 * - the preprocessor's whole input: the virtual path and SHA-256 of the source and of every file
 *   it includes, transitively (the include graph's closure; virtual paths decide how includes
 *   resolve, the bytes decide the rest). Hashing the inputs, not glslang's `-E` output, costs no
 *   process per permutation and only misses more (a comment edit), never less;
 * - the permutation: source virtual path, entry point, stage, sorted defines, and the language;
 * - the compiler's and validator's name and version, and the shader cook's version (its arguments);
 * - `remoteCache.salt`. Never an absolute path, a time or a machine name.
 * The files are read again and their xxh64 compared with the scan's: a file edited since the scan
 * is not looked up (the local compile reports what it finds).
 *
 * A downloaded blob is used only when the client found its SHA-256 and size right, it is a whole
 * SPIR-V module declaring this permutation's entry point for its stage (spirvCheck.ts), and
 * spirv-val accepts it; anything else is a local compile and a counted warning.
 */
import fs from 'node:fs';
import { permutationText } from '../../src/format/shaderCache.js';
import { hashHex, xxh64 } from '../../src/util/hash.js';
import { canonicalJson } from '../cookKey.js';
import { validateSpirv } from '../shaders/compiler.js';
import { SHADER_COOK_VERSION } from '../shaders/cookShaders.js';
import type { ShaderRemote, ShaderRemoteRequest } from '../shaders/ShaderRemote.js';
import { checkSpirvModule } from '../shaders/spirvCheck.js';
import { sha256Hex } from './RemoteCacheClient.js';
import type { RemoteCookCache } from './RemoteCookCache.js';

/** Changes when what the key means changes (the parts below, the ActionResult layout). */
export const REMOTE_SHADER_KEY_SCHEME = 'lumina-cook/shader/1';

/** The action key of a permutation, or undefined when a file of its closure changed since the scan. */
export function remoteShaderKey(req: ShaderRemoteRequest, salt: string): string | undefined {
  const files: Array<{ virtualPath: string; sha256: string }> = [];
  for (const f of req.files) {
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(f.file);
    } catch {
      return undefined;
    }
    if (hashHex(xxh64(bytes)) !== f.hash) return undefined;
    files.push({ virtualPath: f.virtualPath, sha256: sha256Hex(bytes) });
  }
  const parts = {
    scheme: REMOTE_SHADER_KEY_SCHEME,
    cook: SHADER_COOK_VERSION,
    compiler: req.compiler.id,
    validator: req.compiler.validatorId,
    language: req.language,
    permutation: permutationText(req.id),
    files,
    salt,
  };
  return sha256Hex(Buffer.from(canonicalJson(parts), 'utf8'));
}

export class RemoteShaderCache implements ShaderRemote {
  constructor(readonly remote: RemoteCookCache) {}

  async fetch(req: ShaderRemoteRequest): Promise<Uint8Array | undefined> {
    if (!this.remote.reading) return undefined;
    const key = remoteShaderKey(req, this.remote.opts.salt);
    if (!key) return undefined;
    const code = await this.remote.lookupShader(key, req.file, async (bytes) => {
      const why = checkSpirvModule(bytes, req.id.stage, req.id.entry);
      if (why) return why;
      const invalid = await validateSpirv(req.compiler, bytes, req);
      return invalid ? `spirv-val: ${invalid}` : undefined;
    });
    return code && new Uint8Array(code.buffer, code.byteOffset, code.byteLength);
  }

  async publish(req: ShaderRemoteRequest, code: Uint8Array, ms: number): Promise<void> {
    if (!this.remote.writing) return;
    const key = remoteShaderKey(req, this.remote.opts.salt);
    if (key) await this.remote.putShader(key, code, ms, req.file);
  }

  async flush(): Promise<void> {
    await this.remote.flush();
  }
}
