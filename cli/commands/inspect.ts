/**
 * `lumina-cook inspect <file> [--json] [--schemas DIR]`: header, imports, exports and their
 * properties, native tails included, of a `.lasset` package or a cooked (LCKD) one.
 *
 * A property that does not decode is shown as its bytes with the error, and the rest of the export
 * goes on; a native tail is decoded under `// native` when a class schema covers it, else shown as
 * bytes. The exit code is 1 when any property or tail failed to decode. When the file lies inside a
 * project (a lumina-cook.json above it), that project's schemas folder is used and imports are
 * named by their asset path from its registry cache.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { CommandModule } from 'yargs';
import { loadConfig } from '../../config/index.js';
import { CONFIG_FILE_NAME } from '../../config/defaults.js';
import { BinaryReader } from '../../src/format/BinaryReader.js';
import { decodeCooked } from '../../src/format/cookedPackage.js';
import { decodeNativeTail } from '../../src/format/nativeTail.js';
import { decodeExportForDisplay, exportContext, parsePackage } from '../../src/format/packageReader.js';
import { formatProperty, jsonReplacer, propertiesToJson, type RefNames } from '../../src/format/propertyText.js';
import { AssetFlags, ObjectFlags, type LoadedPackage, type Property, type UndecodedProperty } from '../../src/format/packageTypes.js';
import { CACHE_FILE_NAME as REGISTRY_CACHE, thawRecord } from '../../src/registry/registryCache.js';
import { readCacheEntries } from '../../src/registry/registryJournal.js';
import { ClassSchemas } from '../../src/schemas/classSchemas.js';
import { loadSchemas } from '../../src/schemas/loadSchemas.js';
import { asLuminaError, errors, isLuminaError, type LuminaLog } from '../../src/errors.js';
import { initHash } from '../../src/util/hash.js';

const LCKD_MAGIC = Buffer.from('LCKD');

export interface ExportView {
  /** The tagged properties; an UndecodedProperty where a value did not decode. */
  items?: Array<Property | UndecodedProperty>;
  /** Set when not even the tags could be read. */
  error?: LuminaLog;
  /** The native tail, when not empty. */
  native?: { bytes: Uint8Array; schema: boolean; fields?: Property[]; error?: LuminaLog };
}
import { cliLogger, outputSettings, printOutput } from '../commandOutput.js';
import { looksLikeShaderCache, shadersLs } from './shaders.js';

export interface InspectResult {
  pkg: LoadedPackage;
  /** The file was a cooked (LCKD) package; offsets are in its raw bytes. */
  cooked: boolean;
  exports: ExportView[];
  /** Import GUID -> object path, from the project's registry cache when one was found. */
  importPaths: Map<string, string>;
  /** Everything that did not decode (exit code 1), and warnings (NAME_None). */
  problems: Array<LuminaLog & { severity: 'error' | 'warning' }>;
}

export interface InspectOptions {
  /** The schemas folder; default: the enclosing project's, if any. */
  schemasDir?: string;
}

/** The folder holding lumina-cook.json above `file`, or undefined. */
function findProject(file: string): string | undefined {
  for (let dir = path.dirname(path.resolve(file)); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, CONFIG_FILE_NAME))) return dir;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** Import GUID -> object path from the registry cache; empty when there is none or it cannot be read. */
function readImportPaths(registryFile: string): Map<string, string> {
  const out = new Map<string, string>();
  try {
    // The snapshot plus the journal: a daemon's recent batches are only in the journal.
    for (const e of readCacheEntries(registryFile)) {
      const r = thawRecord(e);
      out.set(r.guid, r.kind === 'package' ? `${r.packagePath}.${r.name}` : r.virtualPath);
    }
  } catch {
    // A stale or broken cache only costs the names: inspect still shows GUIDs.
  }
  return out;
}

/** Read a package (or a cooked one) and decode every export; one bad property hides nothing else. */
export async function inspectPackage(file: string, opts: InspectOptions = {}): Promise<InspectResult> {
  await initHash();
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (e) {
    throw asLuminaError(e, file, 'read');
  }
  const cooked = bytes.subarray(0, 4).equals(LCKD_MAGIC);
  const pkg = parsePackage(cooked ? await decodeCooked(bytes, file) : bytes, file);

  const problems: InspectResult['problems'] = (pkg.warnings ?? []).map((w) => ({ ...(w as LuminaLog), severity: 'warning' as const }));
  let schemas = ClassSchemas.empty;
  let importPaths = new Map<string, string>();
  let schemasDir = opts.schemasDir;
  const projectDir = findProject(file);
  if (projectDir) {
    try {
      const { config } = loadConfig(projectDir);
      schemasDir ??= config.schemasDir;
      importPaths = readImportPaths(path.join(config.intermediatesDir, REGISTRY_CACHE));
    } catch {
      // Not a usable project: inspect the file on its own.
    }
  }
  if (schemasDir !== undefined) {
    try {
      schemas = loadSchemas(schemasDir);
    } catch (e) {
      if (!isLuminaError(e)) throw e;
      problems.push({ ...e.toLog(), severity: 'error' });
    }
  }

  const exports = pkg.exports.map((e, i): ExportView => {
    const onNameNone = (field: string, offset: number) => problems.push({ ...errors.packageNameNone(file, field, offset).toLog(), severity: 'warning' });
    let decoded: ReturnType<typeof decodeExportForDisplay>;
    try {
      decoded = decodeExportForDisplay(pkg, i, onNameNone);
    } catch (err) {
      if (!isLuminaError(err)) throw err;
      problems.push({ ...err.toLog(), severity: 'error' });
      return { error: err.toLog() };
    }
    for (const item of decoded.items) if ('undecoded' in item) problems.push({ ...(item.error as LuminaLog), file, severity: 'error' });
    const view: ExportView = { items: decoded.items };
    if (decoded.tail.byteLength > 0) {
      const native: NonNullable<ExportView['native']> = { bytes: decoded.tail, schema: schemas.has(e.className) };
      if (native.schema) {
        const at = pkg.header.objectDataOffset + e.offset + e.size - decoded.tail.byteLength;
        try {
          native.fields = decodeNativeTail(new BinaryReader(decoded.tail, file, at, pkg.fileSize), schemas, { className: e.className!, exportName: e.objectName ?? `export[${i}]` }, exportContext(pkg, onNameNone));
        } catch (err) {
          if (!isLuminaError(err)) throw err;
          native.error = err.toLog();
          problems.push({ ...err.toLog(), severity: 'error' });
        }
      }
      view.native = native;
    }
    return view;
  });
  return { pkg, cooked, exports, importPaths, problems };
}

/** True when anything failed to decode: the command exits 1. */
export function inspectFailed(result: InspectResult): boolean {
  return result.problems.some((p) => p.severity === 'error');
}

function flagNames(flags: number, table: Record<string, number>): string {
  const names = Object.entries(table)
    .filter(([, bit]) => (flags & bit) !== 0)
    .map(([n]) => n);
  const known = Object.values(table).reduce((a, b) => a | b, 0);
  if (flags & ~known) names.push(`0x${(flags & ~known).toString(16)}`);
  return names.length ? names.join('|') : '0';
}

function bytesText(b: Uint8Array): string {
  const hex = Buffer.from(b.subarray(0, 16)).toString('hex');
  return `@bytes(${b.byteLength}: ${hex}${b.byteLength > 16 ? '...' : ''})`;
}

const problemText = (p: { code: string; message: string; offset?: number }) => `!! [${p.code}] @${p.offset ?? '?'}: ${p.message}`;

export function formatInspect({ pkg, cooked, exports, importPaths, problems }: InspectResult): string {
  const h = pkg.header;
  const names: RefNames = { exports: pkg.exports, imports: pkg.imports, importPaths };
  const lines: string[] = [];
  lines.push(`${pkg.file}: ${cooked ? `cooked (LCKD), ${pkg.fileSize} raw bytes` : `${pkg.fileSize} bytes`}`);
  lines.push(`header: version ${h.version}, imports ${h.importCount} @${h.importTableOffset}, exports ${h.exportCount} @${h.exportTableOffset}, object data @${h.objectDataOffset}, thumbnail ${pkg.thumbnail ? `${pkg.thumbnail.width}x${pkg.thumbnail.height} @${h.thumbnailDataOffset}` : 'none'}`);
  lines.push(`imports (${pkg.imports.length}):`);
  pkg.imports.forEach((imp, i) => {
    const where = importPaths.get(imp.guid);
    lines.push(`  [${i}] ${imp.guid} ${imp.type === 0 ? 'Hard' : 'Soft'}${where ? ` ${where}` : ''}`);
  });
  lines.push(`exports (${pkg.exports.length}):`);
  const pad = '      ';
  pkg.exports.forEach((e, i) => {
    lines.push(`  [${i}] ${e.objectName ?? 'None'} : ${e.className ?? 'None'}`);
    lines.push(`${pad}guid ${e.objectGuid}, flags ${flagNames(e.objectFlags, ObjectFlags)}, asset flags ${flagNames(e.assetFlags, AssetFlags)}, ${e.size} bytes @${h.objectDataOffset + e.offset}`);
    const view = exports[i];
    if (view.error) {
      lines.push(`${pad}!! cannot decode: [${view.error.code}] @${view.error.offset ?? '?'}: ${view.error.message}`);
      return;
    }
    for (const p of view.items ?? []) {
      if ('undecoded' in p) {
        const name = p.arrayIndex !== 0 ? `${p.name}[${p.arrayIndex}]` : p.name;
        lines.push(`${pad}${name} = ${bytesText(p.undecoded)}  ${problemText(p.error)}`);
      } else lines.push(`${pad}${formatProperty(p, names, pad)}`);
    }
    const n = view.native;
    if (!n) return;
    if (n.fields) {
      lines.push(`${pad}// native`);
      for (const p of n.fields) lines.push(`${pad}${formatProperty(p, names, pad)}`);
    } else if (n.error) lines.push(`${pad}// native: ${bytesText(n.bytes)}  ${problemText(n.error)}`);
    else lines.push(`${pad}// native: ${bytesText(n.bytes)} (no class schema for ${e.className ?? 'None'})`);
  });
  for (const p of problems.filter((x) => x.severity === 'warning')) lines.push(`warning ${problemText(p)}`);
  return lines.join('\n');
}

export function inspectToJson({ pkg, cooked, exports, importPaths, problems }: InspectResult): unknown {
  return {
    file: pkg.file,
    cooked,
    fileSize: pkg.fileSize,
    header: pkg.header,
    imports: pkg.imports.map((i) => ({ guid: i.guid, type: i.type === 0 ? 'Hard' : 'Soft', ...(importPaths.has(i.guid) ? { path: importPaths.get(i.guid) } : {}) })),
    exports: pkg.exports.map((e, i) => {
      const v = exports[i];
      if (v.error) return { ...e, error: v.error };
      return {
        ...e,
        properties: propertiesToJson((v.items ?? []) as Property[]),
        ...(v.native
          ? { native: { bytes: { bytes: v.native.bytes.byteLength, hex: Buffer.from(v.native.bytes).toString('hex') }, schema: v.native.schema, ...(v.native.fields ? { fields: propertiesToJson(v.native.fields) } : {}), ...(v.native.error ? { error: v.native.error } : {}) } }
          : {}),
      };
    }),
    thumbnail: pkg.thumbnail ? { width: pkg.thumbnail.width, height: pkg.thumbnail.height } : null,
    problems,
  };
}

export const inspectCommand: CommandModule<object, { file: string; json: boolean; schemas?: string }> = {
  command: 'inspect <file>',
  describe: "Print a package or a cooked package: header, imports, exports, each export's properties and native tail (or a ShaderCache.bin's permutations)",
  builder: (y) =>
    y
      .positional('file', { type: 'string', demandOption: true, describe: 'a .lasset file, source or cooked (LCKD)' })
      .option('schemas', { type: 'string', describe: "the class schemas folder (default: the enclosing project's)" }) as never,
  handler: async (argv) => {
    // A ShaderCache.bin is listed permutation by permutation, like `shaders ls`.
    if (await looksLikeShaderCache(argv.file)) return printOutput(await shadersLs([argv.file]), argv.json);
    const result = await inspectPackage(argv.file, { schemasDir: argv.schemas === undefined ? undefined : path.resolve(argv.schemas) });
    const failed = inspectFailed(result);
    // jsonReplacer turns bytes and 64-bit values into JSON first; then the one result shape.
    printOutput({ data: argv.json ? JSON.parse(JSON.stringify(inspectToJson(result), jsonReplacer)) : null, text: `${formatInspect(result)}\n`, ok: !failed }, argv.json);
    // What did not decode is also said on stderr, so a script sees it without parsing the listing.
    const log = outputSettings().json ? cliLogger() : undefined;
    for (const p of result.problems) {
      if (p.severity !== 'error') continue;
      if (log) log.error({ code: p.code }, p.message);
      else process.stderr.write(`error [${p.code}] ${p.message}\n`);
    }
    if (failed) process.exitCode = 1;
  },
};
