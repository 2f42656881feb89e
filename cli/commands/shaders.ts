/**
 * `lumina-cook shaders ls <file>...`: the permutations of a `ShaderCache.bin`, given as the file
 * itself (`Saved/Cooked/ShaderCache.bin`, or one written by `pak cat`) or as a pak holding
 * `/ShaderCache.bin`. `inspect` on a ShaderCache.bin prints the same.
 */
import fsp from 'node:fs/promises';
import type { Argv, CommandModule } from 'yargs';
import { errors } from '../../src/errors.js';
import { decodeShaderCache, isShaderCache, SHADER_CACHE_ENTRY, type ShaderCacheFile } from '../../src/format/shaderCache.js';
import { hashHex, initHash, xxh64 } from '../../src/util/hash.js';
import { PakReader } from '../../pak/PakReader.js';
import { commandGroup, printOutput, type CommandOutput } from '../commandOutput.js';

export interface LsShaderCache {
  file: string;
  compiler: string;
  permutations: Array<{ key: string; source: string; entry: string; stage: string; defines: string[]; codeSize: number; codeXxh64: string }>;
}

const PAK_MAGIC = 0x4b41504c;

/** Read a ShaderCache.bin from the file, or from a pak's `/ShaderCache.bin`. */
export async function readShaderCache(file: string): Promise<ShaderCacheFile> {
  await initHash();
  let bytes: Uint8Array;
  try {
    bytes = await fsp.readFile(file);
  } catch (e) {
    throw errors.ioFailed(file, 'read', e);
  }
  if (bytes.byteLength >= 4 && Buffer.from(bytes.buffer, bytes.byteOffset, 4).readUInt32LE(0) === PAK_MAGIC) {
    const pak = await PakReader.open(file);
    try {
      if (!pak.getEntry(`/${SHADER_CACHE_ENTRY}`)) throw errors.pakEntryNotFound(file, `/${SHADER_CACHE_ENTRY}`);
      bytes = await pak.readEntry(`/${SHADER_CACHE_ENTRY}`);
    } finally {
      await pak.close();
    }
  }
  return decodeShaderCache(bytes, file);
}

/** The permutations of each file, sorted by key as stored. */
export async function shadersLs(files: readonly string[]): Promise<CommandOutput<LsShaderCache[]>> {
  const data: LsShaderCache[] = [];
  const lines: string[] = [];
  for (const file of files) {
    const c = await readShaderCache(file);
    const d: LsShaderCache = {
      file,
      compiler: c.compiler,
      permutations: c.permutations.map((p) => ({
        key: hashHex(p.key),
        source: p.source,
        entry: p.entry,
        stage: p.stage,
        defines: [...p.defines],
        codeSize: p.code.byteLength,
        codeXxh64: hashHex(xxh64(p.code)),
      })),
    };
    data.push(d);
    lines.push(`# ${file}: ${d.permutations.length} permutations, compiler ${d.compiler}`);
    lines.push('# key\tstage\tentry\tsource\tdefines\tcodeSize');
    for (const p of d.permutations) lines.push(`${p.key}\t${p.stage}\t${p.entry}\t${p.source}\t${p.defines.join(' ') || '-'}\t${p.codeSize}`);
  }
  return { data, text: lines.join('\n') + '\n' };
}

/** True when the file starts with the ShaderCache.bin magic (so `inspect` can hand it over). */
export async function looksLikeShaderCache(file: string): Promise<boolean> {
  let fh: fsp.FileHandle | undefined;
  try {
    fh = await fsp.open(file, 'r');
    const b = Buffer.alloc(4);
    const { bytesRead } = await fh.read(b, 0, 4, 0);
    return bytesRead === 4 && isShaderCache(b);
  } catch {
    return false;
  } finally {
    await fh?.close();
  }
}

const lsCommand: CommandModule<object, { files: string[]; json: boolean }> = {
  command: 'ls <files..>',
  describe: 'list the permutations of a ShaderCache.bin (or of a pak\'s /ShaderCache.bin)',
  builder: (y) =>
    y
      .positional('files', { type: 'string', array: true, demandOption: true })
      .option('json', { type: 'boolean', default: false, describe: 'print JSON' }) as unknown as Argv<{ files: string[]; json: boolean }>,
  handler: async (a) => printOutput(await shadersLs(a.files), a.json),
};

export const shadersCommand = commandGroup('shaders', 'inspect shader caches (ShaderCache.bin)', [lsCommand]);
