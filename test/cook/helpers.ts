/** Fixture projects for the cook tests: real folders under the OS temp dir. */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildPackage, type PackageSpec } from '../../src/format/packageBuilder.js';

/** A readable GUID: `g(1)` is 0000...0001, `g(0xab)` ...00ab. */
export function g(n: number): string {
  return n.toString(16).padStart(32, '0');
}

export async function tempDir(prefix = 'lumina-cook-'): Promise<string> {
  return fsp.mkdtemp(path.join(os.tmpdir(), prefix));
}

export type FixtureFile = Uint8Array | string | PackageSpec;

/**
 * Write a project: `config` becomes lumina-cook.json, `files` are paths relative to the project.
 * A PackageSpec is built with buildPackage; a text asset's sidecar is written when `guid` is given
 * as `{ text, guid }`.
 */
export async function writeProject(
  dir: string,
  config: Record<string, unknown>,
  files: Record<string, FixtureFile | { text: string; guid: string }>,
): Promise<string> {
  await fsp.mkdir(dir, { recursive: true });
  await fsp.writeFile(path.join(dir, 'lumina-cook.json'), JSON.stringify(config, null, 2));
  for (const [rel, content] of Object.entries(files)) await writeFixture(dir, rel, content);
  return dir;
}

export async function writeFixture(dir: string, rel: string, content: FixtureFile | { text: string; guid: string }): Promise<void> {
  const file = path.join(dir, rel);
  await fsp.mkdir(path.dirname(file), { recursive: true });
  if (typeof content === 'string' || content instanceof Uint8Array) {
    await fsp.writeFile(file, content);
  } else if ('text' in content) {
    await fsp.writeFile(file, content.text);
    await fsp.writeFile(`${file}.lmeta`, JSON.stringify({ guid: content.guid }));
  } else {
    await fsp.writeFile(file, buildPackage(content));
  }
}

/** A one-export package whose asset export is named after the file stem. */
export function asset(guid: string, name: string, opts: Partial<PackageSpec['exports'][number]> & { imports?: PackageSpec['imports'] } = {}): PackageSpec {
  const { imports, ...exp } = opts;
  return { imports: imports ?? [], exports: [{ guid, name, className: '/Script/Engine.CStaticMesh', ...exp }] };
}

/** Every file under the project's `subs` folders (by default what a cook writes: the paks and the cooked files), keyed `<sub>/<relative path>`. */
export async function outputBytes(dir: string, subs: readonly string[] = ['Saved/Paks', 'Saved/Cooked']): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for (const sub of subs) {
    for (const rel of await listFiles(path.join(dir, sub))) out.set(`${sub}/${rel}`, await fsp.readFile(path.join(dir, sub, rel)));
  }
  return out;
}

/** The files of two outputBytes() maps that are on one side only or differ in bytes (sorted). */
export function differingFiles(x: Map<string, Buffer>, y: Map<string, Buffer>): string[] {
  const names = new Set([...x.keys(), ...y.keys()]);
  return [...names].filter((k) => !x.has(k) || !y.has(k) || !x.get(k)!.equals(y.get(k)!)).sort();
}

/** List a folder recursively as sorted relative paths with `/`. */
export async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string, rel: string) => {
    for (const e of await fsp.readdir(d, { withFileTypes: true })) {
      if (e.isDirectory()) await walk(path.join(d, e.name), `${rel}${e.name}/`);
      else out.push(`${rel}${e.name}`);
    }
  };
  await walk(dir, '');
  return out.sort();
}
