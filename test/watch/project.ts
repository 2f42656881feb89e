/** A small real project on disk for daemon tests: a map, meshes, a text asset. */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { buildPackage, hard, prop } from '../../src/format/packageBuilder.js';
import { MountedPaks } from '../../pak/MountedPaks.js';

export const G = {
  main: '11111111111111111111111111111111',
  rock: '22222222222222222222222222222222',
  tree: '33333333333333333333333333333333',
  menu: '44444444444444444444444444444444',
} as const;

/** Write a package atomically-ish the way an editor saves: temp file, then rename over the target. */
export async function savePackage(file: string, name: string, guid: string, label: string, imports: string[] = []): Promise<void> {
  const bytes = buildPackage({
    imports: imports.map(hard),
    exports: [{ guid, name, className: '/Script/Engine.CStaticMesh', properties: [prop.str('Label', label)] }],
  });
  await fsp.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.lctmp-edit-${Math.random().toString(16).slice(2)}`;
  await fsp.writeFile(tmp, bytes);
  await fsp.rename(tmp, file);
}

export interface TestProject {
  dir: string;
  content: string;
  paks: string;
}

/** lumina-cook.json + Content/{Maps/Main, Meshes/Rock, UI/Menu.rml}; Main hard-imports Rock. */
export async function makeProject(dir: string, extraConfig: Record<string, unknown> = {}): Promise<TestProject> {
  const content = path.join(dir, 'Content');
  await fsp.mkdir(content, { recursive: true });
  await fsp.writeFile(
    path.join(dir, 'lumina-cook.json'),
    JSON.stringify({ name: 'WatchTest', cookRoots: ['/Game/Maps/Main'], cook: { compressionLevel: 1 }, textures: { encoder: 'rgba8' }, ...extraConfig }, null, 2),
  );
  await savePackage(path.join(content, 'Maps', 'Main.lasset'), 'Main', G.main, 'main-v1', [G.rock]);
  await savePackage(path.join(content, 'Meshes', 'Rock.lasset'), 'Rock', G.rock, 'rock-v1');
  await fsp.mkdir(path.join(content, 'UI'), { recursive: true });
  await fsp.writeFile(path.join(content, 'UI', 'Menu.rml'), '<rml>menu-v1</rml>');
  await fsp.writeFile(path.join(content, 'UI', 'Menu.rml.lmeta'), JSON.stringify({ guid: G.menu }));
  return { dir, content, paks: path.join(dir, 'Saved', 'Paks') };
}

/** Every pak under Saved/Paks, mounted the way the runtime does (Dev.pak above the chunks). */
export async function mountPaks(paksDir: string): Promise<MountedPaks> {
  const names = fs.existsSync(paksDir) ? fs.readdirSync(paksDir).filter((n) => n.endsWith('.pak')) : [];
  return MountedPaks.mount(names.map((n) => path.join(paksDir, n)));
}

/** The shipped bytes of `virtualPath`, or undefined when no pak serves it. */
export async function readShipped(paksDir: string, virtualPath: string): Promise<Buffer | undefined> {
  const m = await mountPaks(paksDir);
  try {
    if (!(await m.exists(virtualPath))) return undefined;
    return Buffer.from(await m.read(virtualPath));
  } finally {
    await m.close();
  }
}

/** True when the shipped bytes of `virtualPath` contain `text`. */
export async function shippedHas(paksDir: string, virtualPath: string, text: string): Promise<boolean> {
  const b = await readShipped(paksDir, virtualPath);
  return b !== undefined && b.includes(Buffer.from(text, 'utf8'));
}
