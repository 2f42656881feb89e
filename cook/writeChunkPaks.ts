/**
 * One pak per chunk, `Saved/Paks/<Chunk>.pak` (Main first), each holding its chunk's cooked
 * packages and text assets plus `/AssetRegistry.bin`, and a listing `<Chunk>.contents.txt` beside
 * it. The registry in every pak is the same bytes: the registry of ALL cooked assets.
 *
 * A pak whose inputs did not change (same entry paths, same output identities, same options) and
 * whose file is still there with the recorded size is not rewritten: a no-op re-cook copies
 * nothing. Paks of chunks that no longer exist are removed (only files this cook wrote, known by
 * their contents listing, so a hand-placed patch pak is never touched).
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { ProjectConfig } from '../config/index.js';
import { errors, isLuminaError } from '../src/errors.js';
import type { ProgressBus } from '../src/log/events.js';
import { tempPathFor, writeFileAtomic } from '../src/util/atomicWrite.js';
import { createTextHasher, hashHex, xxh64 } from '../src/util/hash.js';
import { entryPathUnder } from '../pak/pakFormat.js';
import { compressBlocks, type CompressedBlocks } from '../src/format/deflateBlocks.js';
import { compressionId, decodePakSeal, encodePakSeal, writePak, type PakSeal, type PakSource, type WritePakResult } from '../pak/writePak.js';
import { SHADER_CACHE_ENTRY } from '../src/format/shaderCache.js';
import type { AssetCookResult } from './cookAsset.js';
import type { CookCache } from './cookCache.js';
import type { CookPlan } from './planCook.js';
import { LISTING_COLUMNS, SPLICE_SUFFIX, encodeSplice, keepQuietly, listingLine, spliceChunkPak, spliceRecord } from './chunkPakSplice.js';

export const CONTENTS_SUFFIX = '.contents.txt';
/** Where each chunk pak's seal (pak/writePak.ts PakSeal) is kept for its next rebuild: `Intermediates/PakSeals/<Chunk>.seal`. */
export const PAK_SEALS_DIR = 'PakSeals';
/** The watch daemon's patch pak over the chunk paks; a full cook removes it (its paks hold everything). */
export const DEV_PAK_NAME = 'Dev.pak';

export interface PakOutput {
  chunk: string;
  file: string;
  contents: string;
  entries: number;
  bytes: number;
  /** False when the pak was already up to date. */
  written: boolean;
  /** Cooked entries whose blocks were copied from the pak this one replaced (checked by hash), not read from Saved/Cooked. */
  reused: number;
  /** Entries of the replaced pak found damaged (their blocks did not hash to the cooked file's): taken from Saved/Cooked instead. */
  previousDamaged: number;
  /** Text assets, AssetRegistry.bin and ShaderCache.bin entries copied from the pak this one replaced (checked), not compressed again. */
  reusedCompressed: number;
  /** The pak and its listing were spliced from the ones they replace (cook/chunkPakSplice.ts). */
  spliced?: boolean;
}

export interface ChunkPakInput {
  config: ProjectConfig;
  plan: CookPlan;
  /**
   * Each shipped asset's result by GUID (a full cook's are packed: `get` may build a new object
   * each call; `identity`, when there, gives `get(guid).identity` without building it).
   */
  results: Pick<ReadonlyMap<string, AssetCookResult>, 'get'> & {
    identity?(guid: string): string | undefined;
    /** `cookedSize`: the output file's size as its cook wrote it (its identity's), when known. */
    pakSource?(guid: string): (Pick<AssetCookResult, 'output' | 'cookedXxh64' | 'bytes'> & { cookedSize?: number }) | undefined;
    /** Whether the asset's cooked file hash is `hi`/`lo` (u32 halves), without building a string. */
    cookedXxh64Is?(guid: string, hi: number, lo: number): boolean;
  };
  registryBytes: Uint8Array;
  /** `/ShaderCache.bin` of each chunk (FORMAT.md: the permutations of its materials; Main's also the global ones). */
  shaderBytes: ReadonlyMap<string, Uint8Array>;
  cache: CookCache;
  bus: ProgressBus;
  /**
   * Cook one asset again from its source, with its cache entry dropped. The pak writer checks
   * every cooked block against its hash; when a cooked file fails that (damaged on disk after its
   * cook), its asset is re-cooked through this and the pak written again, rather than shipped.
   * Without it such a file fails the pak with COOKED_INVALID.
   */
  recook?: (guid: string) => Promise<AssetCookResult>;
}

/** Write (or keep) every chunk's pak; remove paks of chunks that are gone. */
export async function writeChunkPaks(input: ChunkPakInput): Promise<PakOutput[]> {
  const { config, plan, results, registryBytes, cache, bus } = input;
  const recooked = new Set<string>();
  const mountPoint = config.paks.mountPoint;
  const under = (virtualPath: string): string => {
    const p = entryPathUnder(mountPoint, virtualPath);
    if (p === undefined) throw errors.configInvalid(config.configFile, 'paks.mountPoint', `"${mountPoint}" does not contain ${virtualPath}`);
    return p;
  };
  const identityOf = results.identity ? (guid: string) => results.identity!(guid)! : (guid: string) => results.get(guid)!.identity!;
  const registryXxh64 = xxh64(registryBytes);
  const registryIdentity = hashHex(registryXxh64);
  const compression = compressionId({ level: config.cook.compressionLevel });
  // The registry is the same bytes in every pak: compressed once, by the first pak that needs it.
  let registryBlocks: Promise<CompressedBlocks> | undefined;
  const registryCompressed = () => (registryBlocks ??= compressBlocks(registryBytes, { level: config.cook.compressionLevel }));
  const outputs: PakOutput[] = [];
  for (const chunk of plan.chunks) {
    // The fingerprint's text: every entry's virtual path and identity, in plan order (by GUID,
    // deterministic, so no sort), one line each, hashed once; the sources are only built when the
    // pak is written. (A sorted canonical JSON of 60k pairs was 1.8 s of a 100k no-op cook.) The
    // text is hashed in batches as it is made: at a million assets it would be a ~60 MB string.
    const packages = plan.packages.filter((a) => a.chunk === chunk);
    const texts = plan.textAssets.filter((a) => a.chunk === chunk);
    const printer = createTextHasher();
    printer.update(`v2\t${mountPoint}\t${config.paks.priority}\t${config.cook.compressionLevel}`);
    for (const a of packages) printer.update(`\n${a.record.virtualPath}\t${identityOf(a.record.guid)}`);
    for (const a of texts) printer.update(`\n${a.record.virtualPath}\t${identityOf(a.record.guid)}`);
    printer.update(`\n/AssetRegistry.bin\t${registryIdentity}`);
    const shaders = input.shaderBytes.get(chunk);
    const shadersXxh64 = shaders && xxh64(shaders);
    if (shaders) printer.update(`\n/${SHADER_CACHE_ENTRY}\t${hashHex(shadersXxh64!)}`);
    const fingerprint = printer.digestHex();
    const file = path.join(config.paksDir, `${chunk}.pak`);
    const contents = path.join(config.paksDir, `${chunk}${CONTENTS_SUFFIX}`);
    const key = `${chunk}.pak`;
    const prev = cache.getPak(key);
    if (prev && prev.fingerprint === fingerprint && (await sizeOf(file)) === prev.size && (await sizeOf(contents)) !== undefined) {
      outputs.push({ chunk, file, contents, entries: prev.entries, bytes: prev.size, written: false, reused: 0, previousDamaged: 0, reusedCompressed: 0 });
      continue;
    }
    // The sources in this order: the packages, the text assets, AssetRegistry.bin, ShaderCache.bin.
    const pakSourceOf = results.pakSource ? (guid: string) => results.pakSource!(guid)! : (guid: string) => results.get(guid)!;
    /** The output's size as its cook recorded it (a cache entry's is its file's), so the writer reads it without a stat. */
    const recordedSize = (r: ReturnType<typeof pakSourceOf>): number | undefined => ('cookedSize' in r ? r.cookedSize : 'entry' in r ? r.entry?.cookedSize : undefined);
    const sourceAt = (i: number): PakSource => {
      if (i < packages.length) {
        const a = packages[i];
        const r = pakSourceOf(a.record.guid);
        // One literal, no spreads: built once per entry, mostly before V8 optimizes this (a cold cook's pak phase).
        return {
          path: under(a.record.virtualPath),
          kind: 'cooked',
          file: r.output!,
          cookedXxh64: r.cookedXxh64 === undefined ? undefined : BigInt(`0x${r.cookedXxh64}`),
          bytes: r.bytes,
          size: r.bytes ? undefined : recordedSize(r),
        };
      }
      i -= packages.length;
      if (i < texts.length) {
        const a = texts[i];
        const r = results.get(a.record.guid)!;
        // A text asset ships byte for byte: its identity starts with the hash of those bytes, which
        // lets the previous pak's entry serve (checked).
        const known = /^([0-9a-f]{16}):/.exec(r.identity ?? '');
        return { path: under(a.record.virtualPath), kind: 'file', file: r.output!, ...(known ? { xxh64: BigInt(`0x${known[1]}`) } : {}) };
      }
      if (i === texts.length) return { path: under('/AssetRegistry.bin'), kind: 'bytes', data: registryBytes, xxh64: registryXxh64, compressed: registryCompressed };
      return { path: under(`/${SHADER_CACHE_ENTRY}`), kind: 'bytes', data: shaders!, xxh64: shadersXxh64 };
    };
    const sourceCount = packages.length + texts.length + 1 + (shaders ? 1 : 0);
    // The listing's first line says how the pak it lists was compressed, for the pak it lists (by TOC hash).
    const previousCompression = listedCompression(contents);
    // What the writer vouched for about the pak it replaces: its entries are copied without a check each (see PakSeal).
    const sealFile = path.join(config.intermediatesDir, PAK_SEALS_DIR, `${chunk}.seal`);
    const spliceFile = path.join(config.intermediatesDir, PAK_SEALS_DIR, `${chunk}${SPLICE_SUFFIX}`);
    const previousSeal = readSeal(sealFile);
    // The entry paths in source order, named by one hash: a splice needs the same paths as the pak it splices.
    const pathsPrinter = createTextHasher();
    pathsPrinter.update(`${mountPoint}\n`);
    for (const a of packages) pathsPrinter.update(`${a.record.virtualPath}\n`);
    for (const a of texts) pathsPrinter.update(`${a.record.virtualPath}\n`);
    pathsPrinter.update(shaders ? `/AssetRegistry.bin\n/${SHADER_CACHE_ENTRY}\n` : '/AssetRegistry.bin\n');
    const pathsHash = pathsPrinter.digestHex();
    const header = (count: number, tocHash: bigint) =>
      `# ${chunk}.pak: ${count} entries, mount point ${mountPoint}, priority ${config.paks.priority}, toc ${hashHex(tocHash)}${compression ? `, compression ${compression}` : ''}`;

    // A few entries changed of a pak this cook wrote: the old one spliced (pak/splicePak.ts), its listing too.
    if (previousSeal && compression !== undefined) {
      const spliced = await spliceChunkPak({
        file,
        contents,
        spliceFile,
        seal: previousSeal,
        pathsHash,
        compression,
        // Entries the old pak compressed itself serve only when it compressed them as this cook would (listing's line 1).
        compressedAlike: previousCompression !== undefined && previousCompression.compression === compression && previousCompression.tocHash === previousSeal.tocHash,
        level: config.cook.compressionLevel,
        sourceCount,
        sourceAt,
        packages: packages.map((a) => a.record.guid),
        texts: texts.map((a) => identityOf(a.record.guid)),
        registryXxh64,
        shadersXxh64,
        results: { get: (guid) => results.get(guid), ...(results.cookedXxh64Is ? { cookedXxh64Is: (guid, hi, lo) => results.cookedXxh64Is!(guid, hi, lo) } : {}) },
        header,
      });
      if (spliced) {
        keepSeal(sealFile, spliced.seal);
        keepQuietly(spliceFile, encodeSplice(spliced.splice));
        cache.setPak(key, { fingerprint, size: spliced.size, entries: spliced.entryCount });
        bus.emit({ type: 'PAK_WRITTEN', file, chunk, entries: spliced.entryCount, bytes: spliced.size });
        outputs.push({ chunk, file, contents, entries: spliced.entryCount, bytes: spliced.size, written: true, reused: spliced.reused, previousDamaged: 0, reusedCompressed: spliced.reusedCompressed, spliced: true });
        continue;
      }
    }
    const sources: PakSource[] = [];
    for (let i = 0; i < sourceCount; i++) sources.push(sourceAt(i));
    // Only a damaged cooked file needs its GUID back (rare): found by a scan then, not a map of every entry.
    const guidOf = (file: string): string | undefined => packages.find((a) => results.get(a.record.guid)!.output === file)?.record.guid;
    let res: WritePakResult;
    for (;;) {
      try {
        // The previous pak lends the blocks of every cooked entry that did not change (checked
        // against the cooked file's hash): a one-asset change copies the rest, it reads no cooked file.
        res = await writePak(file, sources, {
          mountPoint,
          priority: config.paks.priority,
          level: config.cook.compressionLevel,
          previous: file,
          ...(previousCompression ? { previousCompression } : {}),
          ...(previousSeal ? { previousSeal } : {}),
        });
        break;
      } catch (e) {
        // A cooked file that no longer matches its hash: re-cook that asset (once) and try again.
        const guid = isLuminaError(e) && e.code === 'COOKED_INVALID' && e.file !== undefined ? guidOf(e.file) : undefined;
        if (guid === undefined || input.recook === undefined || recooked.has(guid)) throw e;
        recooked.add(guid);
        const again = await input.recook(guid);
        if (again.output === undefined) throw again.error ?? e;
        // The re-cooked asset's source now carries its new bytes and hash.
        const i = sources.findIndex((x) => x.kind === 'cooked' && x.file === again.output);
        if (i >= 0) sources[i] = { path: sources[i].path, kind: 'cooked', file: again.output, ...(again.cookedXxh64 === undefined ? {} : { cookedXxh64: BigInt(`0x${again.cookedXxh64}`) }), ...(again.bytes ? { bytes: again.bytes } : {}) };
      }
    }
    // The listing goes out as buffers of a few thousand lines, never one string of every entry.
    const listing: Buffer[] = [];
    let lines = [header(res.toc.entries.length, res.tocHash), LISTING_COLUMNS];
    for (const e of res.toc.entries) {
      lines.push(listingLine(e));
      if (lines.length >= 4096) {
        listing.push(Buffer.from(lines.join('\n') + '\n', 'utf8'));
        lines = [];
      }
    }
    if (lines.length) listing.push(Buffer.from(lines.join('\n') + '\n', 'utf8'));
    await writeFileAtomic(contents, listing);
    keepSeal(sealFile, res.seal);
    // What the next rebuild splices from: where each source went in the TOC, the listing's hash.
    const splice = res.seal && compression !== undefined ? spliceRecord(res, sources, pathsHash, compression, listing) : undefined;
    if (splice) keepQuietly(spliceFile, encodeSplice(splice));
    else fs.rmSync(spliceFile, { force: true });
    cache.setPak(key, { fingerprint, size: res.size, entries: res.toc.entries.length });
    bus.emit({ type: 'PAK_WRITTEN', file, chunk, entries: res.toc.entries.length, bytes: res.size });
    outputs.push({ chunk, file, contents, entries: res.toc.entries.length, bytes: res.size, written: true, reused: res.reused, previousDamaged: res.previousDamaged, reusedCompressed: res.reusedCompressed });
  }
  await removeStalePaks(config.paksDir, config.intermediatesDir, new Set(plan.chunks), cache);
  return outputs;
}

/** The compression and TOC hash a chunk pak's listing records on its first line (see writeChunkPaks), if it has them. */
function listedCompression(contents: string): { compression: string; tocHash: bigint } | undefined {
  let head: string;
  try {
    const fd = fs.openSync(contents, 'r');
    try {
      const buf = Buffer.alloc(1024);
      head = buf.toString('utf8', 0, fs.readSync(fd, buf, 0, buf.byteLength, 0));
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return undefined;
  }
  const m = /^#[^\n]*, toc ([0-9a-f]{16}), compression (\S+)\n/.exec(head);
  return m ? { compression: m[2], tocHash: BigInt(`0x${m[1]}`) } : undefined;
}

async function sizeOf(file: string): Promise<number | undefined> {
  try {
    return (await fsp.stat(file)).size;
  } catch {
    return undefined;
  }
}

/** The seal kept for a chunk pak, if there is one that reads back (a damaged one is none). */
function readSeal(file: string): PakSeal | undefined {
  try {
    return decodePakSeal(fs.readFileSync(file));
  } catch {
    return undefined;
  }
}

/**
 * Keep the new pak's seal (or drop the old one when there is none). No fsync: a seal names its
 * pak by TOC hash and is checked against the pak's data before any entry is trusted, so a lost,
 * torn or stale one only costs the checks it saves.
 */
function keepSeal(file: string, seal: PakSeal | undefined): void {
  try {
    if (!seal) {
      fs.rmSync(file, { force: true });
      return;
    }
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const tmp = tempPathFor(file);
    try {
      fs.writeFileSync(tmp, encodePakSeal(seal));
      fs.renameSync(tmp, file);
    } catch (e) {
      fs.rmSync(tmp, { force: true });
      throw e;
    }
  } catch {
    // A cache: the next rebuild checks every entry.
  }
}

async function removeStalePaks(dir: string, intermediatesDir: string, chunks: ReadonlySet<string>, cache: CookCache): Promise<void> {
  let names: string[];
  try {
    names = await fsp.readdir(dir);
  } catch {
    return;
  }
  for (const n of names) {
    if (!n.endsWith(CONTENTS_SUFFIX)) continue;
    const chunk = n.slice(0, -CONTENTS_SUFFIX.length);
    if (chunks.has(chunk)) continue;
    await fsp.rm(path.join(dir, `${chunk}.pak`), { force: true });
    await fsp.rm(path.join(dir, n), { force: true });
    await fsp.rm(path.join(intermediatesDir, PAK_SEALS_DIR, `${chunk}.seal`), { force: true });
    await fsp.rm(path.join(intermediatesDir, PAK_SEALS_DIR, `${chunk}${SPLICE_SUFFIX}`), { force: true });
    cache.setPak(`${chunk}.pak`, undefined);
  }
}
