/** `lumina-cook inspect <file.lasset> [--json]`: header, imports, exports and their properties. */
import type { CommandModule } from 'yargs';
import { readPackageFile, decodeExport } from '../../src/format/packageReader.js';
import { formatProperty, jsonReplacer, propertiesToJson } from '../../src/format/propertyText.js';
import { AssetFlags, ObjectFlags, type LoadedPackage, type Property } from '../../src/format/packageTypes.js';
import { isLuminaError, type LuminaLog } from '../../src/errors.js';

export interface InspectResult {
  pkg: LoadedPackage;
  /** Per export: its properties, or the typed error that stopped its decode. */
  properties: Array<Property[] | LuminaLog>;
}

/** Read a package and decode every export; one bad export does not hide the others. */
export async function inspectPackage(file: string): Promise<InspectResult> {
  const pkg = await readPackageFile(file);
  const properties = pkg.exports.map((_, i) => {
    try {
      return decodeExport(pkg, i);
    } catch (e) {
      if (isLuminaError(e)) return e.toLog();
      throw e;
    }
  });
  return { pkg, properties };
}

function flagNames(flags: number, table: Record<string, number>): string {
  const names = Object.entries(table)
    .filter(([, bit]) => (flags & bit) !== 0)
    .map(([n]) => n);
  const known = Object.values(table).reduce((a, b) => a | b, 0);
  if (flags & ~known) names.push(`0x${(flags & ~known).toString(16)}`);
  return names.length ? names.join('|') : '0';
}

export function formatInspect({ pkg, properties }: InspectResult): string {
  const h = pkg.header;
  const lines: string[] = [];
  lines.push(`${pkg.file}: ${pkg.fileSize} bytes`);
  lines.push(`header: version ${h.version}, imports ${h.importCount} @${h.importTableOffset}, exports ${h.exportCount} @${h.exportTableOffset}, object data @${h.objectDataOffset}, thumbnail ${pkg.thumbnail ? `${pkg.thumbnail.width}x${pkg.thumbnail.height} @${h.thumbnailDataOffset}` : 'none'}`);
  lines.push(`imports (${pkg.imports.length}):`);
  pkg.imports.forEach((imp, i) => lines.push(`  [${i}] ${imp.guid} ${imp.type === 0 ? 'Hard' : 'Soft'}`));
  lines.push(`exports (${pkg.exports.length}):`);
  pkg.exports.forEach((e, i) => {
    lines.push(`  [${i}] ${e.objectName ?? 'None'} : ${e.className ?? 'None'}`);
    lines.push(`      guid ${e.objectGuid}, flags ${flagNames(e.objectFlags, ObjectFlags)}, asset flags ${flagNames(e.assetFlags, AssetFlags)}, ${e.size} bytes @${h.objectDataOffset + e.offset}`);
    const props = properties[i];
    if (Array.isArray(props)) {
      for (const p of props) lines.push(`      ${formatProperty(p, pkg, '      ')}`);
    } else {
      lines.push(`      !! cannot decode: [${props.code}] @${props.offset ?? '?'}: ${props.message}`);
    }
  });
  return lines.join('\n');
}

export function inspectToJson({ pkg, properties }: InspectResult): unknown {
  return {
    file: pkg.file,
    fileSize: pkg.fileSize,
    header: pkg.header,
    imports: pkg.imports.map((i) => ({ guid: i.guid, type: i.type === 0 ? 'Hard' : 'Soft' })),
    exports: pkg.exports.map((e, i) => ({
      ...e,
      ...(Array.isArray(properties[i]) ? { properties: propertiesToJson(properties[i] as Property[]) } : { error: properties[i] }),
    })),
    thumbnail: pkg.thumbnail ? { width: pkg.thumbnail.width, height: pkg.thumbnail.height } : null,
  };
}

export const inspectCommand: CommandModule<object, { file: string; json: boolean }> = {
  command: 'inspect <file>',
  describe: 'Print a package: header, imports, exports and each export\'s properties',
  builder: (y) =>
    y
      .positional('file', { type: 'string', demandOption: true, describe: 'a .lasset file' })
      .option('json', { type: 'boolean', default: false, describe: 'print JSON' }) as never,
  handler: async (argv) => {
    const result = await inspectPackage(argv.file);
    process.stdout.write(argv.json ? `${JSON.stringify(inspectToJson(result), jsonReplacer, 2)}\n` : `${formatInspect(result)}\n`);
  },
};
