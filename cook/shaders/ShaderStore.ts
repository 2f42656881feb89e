/**
 * The local cache of compiled permutations: `Intermediates/ShaderCache/<key>.spv`, one file per
 * permutation holding exactly its validated SPIR-V. The key (see cookShaders.ts) already names
 * everything the code depends on, so an entry is just key -> bytes: nothing to compare, nothing
 * to keep in a manifest, and the same shape a remote key/value cache can carry.
 *
 * Only validated code is put here. An entry is trusted when it reads back as SPIR-V (magic, word
 * size); anything else is ignored and overwritten, since a cache never fails a cook. Writes are
 * atomic (temp, fsync, rename), so a killed cook leaves whole entries or none.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { SPIRV_MAGIC } from '../../src/format/shaderCache.js';
import { sweepTempFiles, TEMP_MARKER, writeFileAtomic } from '../../src/util/atomicWrite.js';

export const SHADER_STORE_DIR = 'ShaderCache';

export class ShaderStore {
  readonly dir: string;

  constructor(intermediatesDir: string) {
    this.dir = path.join(intermediatesDir, SHADER_STORE_DIR);
  }

  private fileOf(key: string): string {
    if (!/^[0-9a-f]{16}$/.test(key)) throw new RangeError(`shader cache key "${key}" is not 16 hex digits`);
    return path.join(this.dir, `${key}.spv`);
  }

  /** The code stored under `key`, or undefined (absent or not SPIR-V). */
  async get(key: string): Promise<Uint8Array | undefined> {
    let b: Buffer;
    try {
      b = await fsp.readFile(this.fileOf(key));
    } catch {
      return undefined;
    }
    if (b.byteLength < 20 || b.byteLength % 4 !== 0 || b.readUInt32LE(0) !== SPIRV_MAGIC) return undefined;
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  }

  async put(key: string, code: Uint8Array): Promise<void> {
    await fsp.mkdir(this.dir, { recursive: true });
    await writeFileAtomic(this.fileOf(key), code);
  }

  /** The keys of the entries there (not checked: `get` checks what it reads). */
  keys(): Set<string> {
    const out = new Set<string>();
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return out;
    }
    for (const name of names) if (!name.includes(TEMP_MARKER) && name.endsWith('.spv')) out.add(name.slice(0, -4));
    return out;
  }

  /** Remove temp files of killed runs and every entry whose key is not in `keep`. Returns how many entries went. */
  async prune(keep: ReadonlySet<string>): Promise<number> {
    await sweepTempFiles(this.dir).catch(() => 0);
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return 0;
    }
    let n = 0;
    for (const name of names) {
      if (name.includes(TEMP_MARKER) || !name.endsWith('.spv') || keep.has(name.slice(0, -4))) continue;
      await fsp.rm(path.join(this.dir, name), { force: true });
      n++;
    }
    return n;
  }
}
