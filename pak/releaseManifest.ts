/**
 * The release manifest (`<release dir>/release.json`): what a shipped release's paks hold, by
 * path, size and hash, so a later patch can be built against it with no old content on disk.
 * Written by `cook --release NAME` beside the paks, with a copy of the cooked AssetRegistry.bin.
 *
 * The base TOC hash a patch carries (FORMAT.md: "the xxh64 of the base pak's table of contents"):
 * with one base pak it is exactly that pak's TOC hash. With several (chunks, or a base that is
 * itself release + patches) it is the xxh64 of their TOC hashes as u64 LE, concatenated in mount
 * order (priority ascending, ties by file name bytes). The runtime computes the same over the
 * paks it mounts below the patch, so a patch never applies to a set it was not built against.
 */
import fsp from 'node:fs/promises';
import { printParseErrorCode, visit } from 'jsonc-parser';
import path from 'node:path';
import { errors } from '../src/errors.js';
import { withAtomicFile, writeFileAtomic, writeFully } from '../src/util/atomicWrite.js';
import { hashHex, initHash, xxh64 } from '../src/util/hash.js';
import { PakReader } from './PakReader.js';
import { comparePathBytes, mountedPath, priorityOrder, validateMountPoint, virtualPathProblem } from './pakFormat.js';

export const RELEASE_MANIFEST = 'release.json';
export const RELEASE_REGISTRY = 'AssetRegistry.bin';
const FORMAT_TAG = 'lumina-release';
const FORMAT_VERSION = 1;

export interface ReleaseEntry {
  /** Entry path inside the pak (relative to its mount point). */
  path: string;
  rawSize: number;
  /** 16 lowercase hex digits; "0000000000000000" for a tombstone. */
  xxh64: string;
  /** 0 stored, 1 DEFLATE, 2 tombstone. */
  method: 0 | 1 | 2;
}

export interface ReleasePak {
  /** File name of the pak, relative to the manifest's folder. */
  file: string;
  priority: number;
  mountPoint: string;
  /** 16 hex digits: xxh64 of the pak's TOC. */
  tocHash: string;
  /** Header flags (0x1 patch). */
  flags: number;
  entries: ReleaseEntry[];
}

/** A release manifest's pak without its entry list: what is kept of a big release (see ReleaseContent). */
export type ReleasePakInfo = Omit<ReleasePak, 'entries'> & { entryCount: number };

/** A release manifest without its entry lists. */
export interface ReleaseSummary extends Omit<ReleaseManifest, 'paks'> {
  paks: ReleasePakInfo[];
}

export interface ReleaseManifest {
  name: string;
  paks: ReleasePak[];
  /** File name of the registry copy beside the manifest, when one was written. */
  registry?: string;
  /**
   * Identity of the release's whole shader cache (every permutation it ships, what
   * `Saved/Cooked/ShaderCache.bin` held). Each chunk pak carries only its chunk's, so a patch
   * compares the new whole one against this, not against whichever pak's copy resolves first.
   */
  shaderCache?: { rawSize: number; xxh64: string };
}

/** The manifest record of an opened pak. `fileName` defaults to the pak's base name. */
export function describePak(pak: PakReader, fileName = path.basename(pak.file)): ReleasePak {
  const { entries, ...head } = describePakHead(pak, fileName);
  return { ...head, entries: entries.map(releaseEntry) };
}

/** describePak with the pak's TOC entries as they are. */
function describePakHead(pak: PakReader, fileName: string): Omit<ReleasePak, 'entries'> & { entries: PakReader['entries'] } {
  return { file: fileName, priority: pak.toc.priority, mountPoint: pak.toc.mountPoint, tocHash: hashHex(pak.tocHash), flags: pak.header.flags, entries: pak.entries };
}

function releaseEntry(e: PakReader['entries'][number]): ReleaseEntry {
  return { path: e.path, rawSize: e.rawSize, xxh64: hashHex(e.xxh64), method: e.method };
}

/** Open a pak just long enough to describe it. */
export async function describePakFile(file: string, fileName?: string): Promise<ReleasePak> {
  const pak = await PakReader.open(file);
  try {
    return describePak(pak, fileName);
  } finally {
    await pak.close();
  }
}

/**
 * Write `<dir>/release.json` atomically, plus `<dir>/AssetRegistry.bin` when `registry` is given.
 * Returns the manifest's path.
 */
export async function writeReleaseManifest(
  dir: string,
  release: { name: string; paks: readonly ReleasePak[]; registry?: Uint8Array; shaderCache?: Uint8Array },
): Promise<string> {
  const target = path.join(dir, RELEASE_MANIFEST);
  const manifest: ReleaseManifest = { name: release.name, paks: release.paks.map((p) => ({ ...p })) };
  await addShadersAndRegistry(dir, release, manifest);
  validateManifest({ format: FORMAT_TAG, version: FORMAT_VERSION, ...manifest }, target);
  await writeFileAtomic(target, manifestJson({ format: FORMAT_TAG, version: FORMAT_VERSION, ...manifest }));
  return target;
}

/** The whole shader cache's identity into `m`, and the registry's copy written beside the manifest and named in it. */
async function addShadersAndRegistry(dir: string, release: { registry?: Uint8Array; shaderCache?: Uint8Array }, m: Pick<ReleaseManifest, 'shaderCache' | 'registry'>): Promise<void> {
  if (release.shaderCache !== undefined) {
    await initHash();
    m.shaderCache = { rawSize: release.shaderCache.byteLength, xxh64: hashHex(xxh64(release.shaderCache)) };
  }
  if (release.registry !== undefined) {
    await writeFileAtomic(path.join(dir, RELEASE_REGISTRY), release.registry);
    m.registry = RELEASE_REGISTRY;
  }
}

/**
 * The manifest as compact JSON (one entry object per pak entry, no indentation), made as buffers of
 * a few thousand entries: at a million entries one string of it would be ~60 MB (and pretty-printed
 * it was 84 MB on disk). Parses to exactly the same value as JSON.stringify of `m`.
 */
function manifestJson(m: ReleaseManifest & { format: string; version: number }): Buffer[] {
  const { paks, ...rest } = m;
  const out: Buffer[] = [manifestHeadJson(rest)];
  paks.forEach((p, i) => {
    const { entries, ...pakRest } = p;
    out.push(pakHeadJson(pakRest, i));
    for (let at = 0; at < entries.length; at += ENTRIES_PER_PART) out.push(entriesJson(entries.slice(at, at + ENTRIES_PER_PART), at));
    out.push(PAK_END);
  });
  out.push(MANIFEST_END);
  return out;
}

/** Entries per piece of the manifest's JSON. */
const ENTRIES_PER_PART = 4096;
const PAK_END = Buffer.from(']}', 'utf8');
const MANIFEST_END = Buffer.from(']}\n', 'utf8');

/** The manifest's fields but its paks, and the opening of its pak list. */
function manifestHeadJson(rest: object): Buffer {
  const head = JSON.stringify(rest);
  return Buffer.from(`${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"paks":[`, 'utf8');
}

/** Pak `i`'s fields but its entries, and the opening of its entry list. */
function pakHeadJson(pak: Omit<ReleasePak, 'entries'>, i: number): Buffer {
  const ph = JSON.stringify(pak);
  return Buffer.from(`${i ? ',' : ''}${ph.slice(0, -1)},"entries":[`, 'utf8');
}

/** Entries of a pak's list from index `at` on. */
function entriesJson(entries: readonly ReleaseEntry[], at: number): Buffer {
  const part = JSON.stringify(entries);
  return Buffer.from(`${at ? ',' : ''}${part.slice(1, -1)}`, 'utf8');
}

/**
 * What `cook --release NAME` calls after writing the paks into `dir`: describe each pak (its TOC
 * is read back, so the manifest matches the bytes on disk) and write the manifest and registry.
 * The manifest is written as each pak is read, a few thousand entries at a time: at a million
 * entries, describing every pak first (an object and a hex string per entry) and then the whole
 * JSON in memory stood ~0.1 GB on top of a cold cook's peak, which is here. Checked as
 * writeReleaseManifest checks it, before the file takes the place of release.json.
 */
export async function writeRelease(dir: string, release: { name: string; pakFiles: readonly string[]; registry?: Uint8Array; shaderCache?: Uint8Array }): Promise<string> {
  const files = release.pakFiles.map((f) => {
    const full = path.resolve(dir, f);
    if (path.dirname(full) !== path.resolve(dir)) throw errors.usage(`release pak ${f} must be inside ${dir}`);
    return full;
  });
  const target = path.join(dir, RELEASE_MANIFEST);
  // The key order of writeReleaseManifest's: format, version, name, (paks), shaderCache, registry.
  const rest: Omit<ReleaseManifest, 'paks'> & { format: string; version: number } = { format: FORMAT_TAG, version: FORMAT_VERSION, name: release.name };
  await addShadersAndRegistry(dir, release, rest);
  await withAtomicFile(target, async (fh) => {
    await writeFully(fh, manifestHeadJson(rest));
    const paks: Array<Omit<ReleasePak, 'entries'> & { entries: StreamedEntries }> = [];
    for (const [i, full] of files.entries()) {
      const pak = await PakReader.open(full);
      try {
        const { entries, ...head } = describePakHead(pak, path.basename(full));
        const checked = new StreamedEntries();
        paks.push({ ...head, entries: checked });
        await writeFully(fh, pakHeadJson(head, i));
        for (let at = 0; at < entries.length; at += ENTRIES_PER_PART) {
          const part = entries.slice(at, at + ENTRIES_PER_PART).map(releaseEntry);
          for (const [j, e] of part.entries()) {
            const r = checkEntry(e, () => `paks[${i}].entries[${at + j}]`, checked.prev);
            if (Array.isArray(r)) checked.bad ??= r;
            else checked.prev = r.path;
          }
          checked.count += part.length;
          await writeFully(fh, entriesJson(part, at));
        }
        await writeFully(fh, PAK_END);
      } finally {
        await pak.close();
      }
    }
    await writeFully(fh, MANIFEST_END);
    validateManifest({ ...rest, paks }, target);
  });
  return target;
}

/** Read and validate a release manifest; a folder means `<folder>/release.json`. */
export async function readReleaseManifest(folderOrJson: string): Promise<ReleaseManifest & { file: string }> {
  const { file, text } = await readManifestText(folderOrJson);
  const entries: ReleaseEntry[][] = [];
  const summary = parseReleaseManifest(text, file, (pak, e) => {
    (entries[pak] ??= []).push({ ...e, path: ownString(e.path) });
  });
  const { paks, ...rest } = summary;
  return { ...rest, paks: paks.map(({ entryCount: _, ...p }, i) => ({ ...p, entries: entries[i] ?? [] })), file };
}

/** The text of `<folder>/release.json` (or of the file named), and which file that was. */
export async function readManifestText(folderOrJson: string): Promise<{ file: string; text: string }> {
  let file = folderOrJson;
  try {
    if ((await fsp.stat(folderOrJson)).isDirectory()) file = path.join(folderOrJson, RELEASE_MANIFEST);
  } catch (e) {
    throw errors.patchBaseInvalid(folderOrJson, `cannot read the base release: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  try {
    return { file, text: await fsp.readFile(file, 'utf8') };
  } catch (e) {
    throw errors.patchBaseInvalid(file, `cannot read the base release: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
}

/**
 * A copy of `s` that does not share memory with the text it was parsed from. The parser's strings
 * are slices of the whole release.json text (61 MB at a million entries): one kept path would keep
 * all of it alive.
 */
export function ownString(s: string): string {
  return s.length < 13 ? s : Buffer.from(s, 'utf8').toString('utf8');
}

/** Receives a manifest's entries as they are parsed, each pak's in file order; `pak` is the pak's index in `paks`. */
export type ManifestEntrySink = (pak: number, entry: ReleaseEntry) => void;

/** A pak's entry list as the streaming parse saw it: how many, the last path, and the first bad entry (thrown in validation order). */
class StreamedEntries {
  count = 0;
  prev: string | undefined;
  bad: [key: string, why: string] | undefined;
}

class JsonSyntaxError extends Error {
  constructor(
    readonly code: number,
    readonly offset: number,
  ) {
    super(`${printParseErrorCode(code)} at offset ${offset}`);
  }
}

type Frame = { obj: Record<string, unknown>; key: string } | { arr: unknown[] } | { entries: StreamedEntries; pak: number };

/**
 * Parse and validate release.json's text without building its entry lists: each entry is checked
 * and handed to `sink` as it is read, so a million-entry manifest never exists as a million
 * objects (JSON.parse of it held ~250 MB at once, where a patch step's peak is). Everything but the
 * entries is built as JSON.parse would and validated as a whole; the first bad entry of a pak is
 * reported where the validation of that pak reaches its entries. Returns the manifest without its
 * entry lists (each pak's `entryCount` instead).
 */
export function parseReleaseManifest(text: string, file: string, sink: ManifestEntrySink): ReleaseSummary {
  const stack: Frame[] = [];
  let root: unknown;
  let done = false;
  const put = (v: unknown): void => {
    const top = stack[stack.length - 1];
    if (top === undefined) {
      root = v;
      done = true;
    } else if ('obj' in top) setOwn(top.obj, top.key, v);
    else if ('arr' in top) top.arr.push(v);
    else {
      const s = top.entries;
      const j = s.count++;
      if (s.bad) return;
      const r = checkEntry(v, () => `paks[${top.pak}].entries[${j}]`, s.prev);
      if (Array.isArray(r)) s.bad = r;
      else {
        s.prev = r.path;
        sink(top.pak, r);
      }
    }
  };
  // Inside one of the root object's "paks" (stack: root object, paks array, pak object).
  const inPak = (): boolean => {
    const [r, ps, p] = stack;
    return stack.length === 3 && 'obj' in r && r.key === 'paks' && 'arr' in ps && 'obj' in p;
  };
  const given = (key: string): never => {
    throw errors.patchBaseInvalid(file, `"${key}" is given twice`);
  };
  try {
    visit(
      text,
      {
        onObjectBegin: () => {
          stack.push({ obj: {}, key: '' });
        },
        onObjectProperty: (k) => {
          const top = stack[stack.length - 1] as { obj: Record<string, unknown>; key: string };
          // Entries already went to the sink: a second "paks" or "entries" cannot replace them, as JSON.parse's last-one-wins would.
          if (stack.length === 1 && k === 'paks' && Object.hasOwn(top.obj, 'paks')) given('paks');
          if (k === 'entries' && inPak() && Object.hasOwn(top.obj, 'entries')) given(`paks[${(stack[1] as { arr: unknown[] }).arr.length}].entries`);
          top.key = k;
        },
        onObjectEnd: () => put((stack.pop() as { obj: Record<string, unknown> }).obj),
        onArrayBegin: () => {
          // A pak's "entries": streamed to the sink, not built.
          if (inPak() && (stack[2] as { key: string }).key === 'entries') {
            stack.push({ entries: new StreamedEntries(), pak: (stack[1] as { arr: unknown[] }).arr.length });
          } else stack.push({ arr: [] });
        },
        onArrayEnd: () => {
          const f = stack.pop()!;
          put('arr' in f ? f.arr : (f as { entries: StreamedEntries }).entries);
        },
        onLiteralValue: (v: unknown) => put(v),
        onError: (code, offset) => {
          throw new JsonSyntaxError(code, offset);
        },
      },
      { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false },
    );
  } catch (e) {
    if (!(e instanceof JsonSyntaxError)) throw e;
    // JSON.parse's message, as before the streaming parse, when it refuses the text too.
    let why = e.message;
    try {
      JSON.parse(text);
    } catch (pe) {
      why = (pe as Error).message;
    }
    throw errors.patchBaseInvalid(file, `not valid JSON: ${why}`);
  }
  if (!done) throw errors.patchBaseInvalid(file, 'not valid JSON: no value');
  // Validated (its regular expressions run) on copies: the last match of one is kept by the engine.
  return validateManifest(ownStrings(root), file);
}

/** `v` with every string an own copy (ownString), for the small part of the manifest that is built: its names and hashes are slices of the text. */
function ownStrings(v: unknown): unknown {
  if (typeof v === 'string') return ownString(v);
  if (Array.isArray(v)) return v.map(ownStrings);
  if (!isObj(v) || v instanceof StreamedEntries) return v;
  const o: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) setOwn(o, k, ownStrings(x));
  return o;
}

/** `o[k] = v` as JSON.parse does it: "__proto__" is an own property, not the prototype. */
function setOwn(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
  else o[k] = v;
}

const HEX16 = /^[0-9a-f]{16}$/;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One entry checked: the entry, or the key and what is wrong with it (`key` names the entry, made only on an error). */
function checkEntry(e: unknown, key: () => string, prev: string | undefined): ReleaseEntry | [string, string] {
  if (!isObj(e)) return [key(), 'is not an object'];
  if (typeof e.path !== 'string') return [`${key()}.path`, 'is not a string'];
  const why = virtualPathProblem(e.path);
  if (why !== undefined) return [`${key()}.path`, why];
  if (prev !== undefined && comparePathBytes(prev, e.path) >= 0) return [`${key()}.path`, 'is not after the previous entry in byte order'];
  if (!Number.isSafeInteger(e.rawSize) || (e.rawSize as number) < 0) return [`${key()}.rawSize`, 'is not a size'];
  if (typeof e.xxh64 !== 'string' || !HEX16.test(e.xxh64)) return [`${key()}.xxh64`, 'is not 16 lowercase hex digits'];
  if (e.method !== 0 && e.method !== 1 && e.method !== 2) return [`${key()}.method`, 'is not 0, 1 or 2'];
  return { path: e.path, rawSize: e.rawSize as number, xxh64: e.xxh64, method: e.method };
}

/** Validate a parsed manifest (entry lists as StreamedEntries, or arrays of entries, checked here) and return it without its entry lists. */
function validateManifest(json: unknown, file: string): ReleaseSummary {
  const bad = (key: string, why: string): never => {
    throw errors.patchBaseInvalid(file, `"${key}" ${why}`);
  };
  if (!isObj(json)) return bad('(root)', 'is not an object');
  if (json.format !== FORMAT_TAG) bad('format', `is not "${FORMAT_TAG}"`);
  if (json.version !== FORMAT_VERSION) bad('version', `is not ${FORMAT_VERSION}`);
  if (typeof json.name !== 'string' || json.name === '') bad('name', 'is not a non-empty string');
  if (json.registry !== undefined && (typeof json.registry !== 'string' || json.registry.includes('/') || json.registry.includes('\\'))) {
    bad('registry', 'is not a file name');
  }
  if (!Array.isArray(json.paks) || json.paks.length === 0) bad('paks', 'is not a non-empty array');
  const names = new Set<string>();
  const paks = (json.paks as unknown[]).map((p, i): ReleasePakInfo => {
    const k = `paks[${i}]`;
    if (!isObj(p)) return bad(k, 'is not an object');
    if (typeof p.file !== 'string' || p.file === '' || p.file.includes('/') || p.file.includes('\\') || p.file.startsWith('.')) {
      bad(`${k}.file`, 'is not a pak file name');
    }
    if (names.has(p.file as string)) bad(`${k}.file`, `repeats "${p.file}"`);
    names.add(p.file as string);
    if (!Number.isInteger(p.priority) || (p.priority as number) < -(2 ** 31) || (p.priority as number) >= 2 ** 31) bad(`${k}.priority`, 'is not a 32-bit integer');
    if (typeof p.mountPoint !== 'string') bad(`${k}.mountPoint`, 'is not a string');
    try {
      validateMountPoint(p.mountPoint as string, file);
    } catch {
      bad(`${k}.mountPoint`, 'is not "/" or a virtual path ending in "/"');
    }
    if (typeof p.tocHash !== 'string' || !HEX16.test(p.tocHash)) bad(`${k}.tocHash`, 'is not 16 lowercase hex digits');
    if (p.flags !== 0 && p.flags !== 1) bad(`${k}.flags`, 'is not 0 or 1');
    let entryCount: number;
    if (p.entries instanceof StreamedEntries) {
      if (p.entries.bad) bad(...p.entries.bad);
      entryCount = p.entries.count;
    } else if (Array.isArray(p.entries)) {
      // A manifest about to be written (writeReleaseManifest): its entries are objects already.
      let prev: string | undefined;
      p.entries.forEach((e, j) => {
        const r = checkEntry(e, () => `${k}.entries[${j}]`, prev);
        if (Array.isArray(r)) bad(...r);
        else prev = r.path;
      });
      entryCount = p.entries.length;
    } else return bad(`${k}.entries`, 'is not an array');
    return {
      file: p.file as string,
      priority: p.priority as number,
      mountPoint: p.mountPoint as string,
      tocHash: p.tocHash as string,
      flags: p.flags as number,
      entryCount,
    };
  });
  const out: ReleaseSummary = { name: json.name as string, paks };
  if (json.registry !== undefined) out.registry = json.registry as string;
  if (json.shaderCache !== undefined) {
    const sc = json.shaderCache;
    if (!isObj(sc) || !Number.isSafeInteger(sc.rawSize) || (sc.rawSize as number) < 0 || typeof sc.xxh64 !== 'string' || !HEX16.test(sc.xxh64)) {
      bad('shaderCache', 'is not { rawSize, xxh64 }');
    }
    out.shaderCache = { rawSize: (sc as { rawSize: number }).rawSize, xxh64: (sc as { xxh64: string }).xxh64 };
  }
  return out;
}

/** The hash a patch against this release records as its base TOC hash (see the file comment). */
export async function baseTocHash(release: { paks: readonly Pick<ReleasePak, 'file' | 'priority' | 'tocHash'>[] }): Promise<bigint> {
  if (release.paks.length === 1) return BigInt(`0x${release.paks[0].tocHash}`);
  await initHash();
  const ordered = [...release.paks].sort((a, b) => a.priority - b.priority || comparePathBytes(a.file, b.file));
  const buf = Buffer.alloc(8 * ordered.length);
  ordered.forEach((p, i) => buf.writeBigUInt64LE(BigInt(`0x${p.tocHash}`), 8 * i));
  return xxh64(buf);
}

/** What the release serves: full virtual path -> (rawSize, xxh64 hex), tombstones applied. */
export function resolveRelease(release: ReleaseManifest): Map<string, { rawSize: number; xxh64: string }> {
  const decided = new Map<string, { rawSize: number; xxh64: string } | null>();
  for (const i of priorityOrder(release.paks)) {
    const pak = release.paks[i];
    for (const e of pak.entries) {
      const full = mountedPath(pak.mountPoint, e.path);
      if (!decided.has(full)) decided.set(full, e.method === 2 ? null : { rawSize: e.rawSize, xxh64: e.xxh64 });
    }
  }
  const live = new Map<string, { rawSize: number; xxh64: string }>();
  for (const [p, v] of decided) if (v) live.set(p, v);
  return live;
}
