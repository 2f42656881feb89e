import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AssetRegistry } from '../../src/registry/AssetRegistry.js';
import { DIRENT_DIR, DIRENT_FILE, readdirFastPath, readdirTypes } from '../../src/util/fastReaddir.js';
import { bumpMtime, g, makeProject, scanInChild as scanChild, type TempProject } from './fixtures.js';

let p: TempProject;
beforeEach(() => {
  p = makeProject();
});
afterEach(() => p.cleanup());

const scanInChild = (plain: boolean) => scanChild(p.dir, { LUMINA_PLAIN_READDIR: plain ? '1' : '' });

/** fs.readdirSync's answer in readdirTypes' terms. */
function publicAnswer(dir: string): { names: string[]; types: number[] } {
  const ents = fs.readdirSync(dir, { withFileTypes: true });
  return { names: ents.map((d) => d.name), types: ents.map((d) => (d.isFile() ? DIRENT_FILE : d.isDirectory() ? DIRENT_DIR : 3)) };
}

describe('readdir of walked folders', () => {
  it('gives exactly the names and types fs.readdirSync gives (files, folders, symlinks, non-ASCII names), and throws its errors', () => {
    // The binding is what the measured scan uses; on this Node it must be in use.
    expect(readdirFastPath()).toBe(true);
    p.pkg('Content/A.lasset', g(1));
    p.pkg('Content/Grüße/Ünï.lasset', g(2));
    p.write('Content/notes.txt', 'x');
    fs.mkdirSync(p.abs('Content/Empty'));
    fs.symlinkSync(p.abs('Content/A.lasset'), p.abs('Content/LinkToFile.lasset'));
    fs.symlinkSync(p.abs('Content/Grüße'), p.abs('Content/LinkToDir'));
    for (const dir of [p.content, p.abs('Content/Grüße'), p.abs('Content/Empty')]) expect(readdirTypes(dir)).toEqual(publicAnswer(dir));
    expect(readdirTypes(p.content).names.length).toBe(6);
    expect(() => readdirTypes(p.abs('Content/Nope'))).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    expect(() => readdirTypes(p.abs('Content/A.lasset'))).toThrow(expect.objectContaining({ code: 'ENOTDIR' }));
    expect(readdirFastPath()).toBe(true);
  });

  it('a warm scan sees files added, removed and changed in a folder it lists, and both listings give the same registry', async () => {
    for (let i = 0; i < 12; i++) p.pkg(`Content/Set${i % 3}/A${i}.lasset`, g(i + 1));
    const reg = await AssetRegistry.open({ config: p.config() });
    expect(await reg.scan()).toMatchObject({ assets: 12, read: 12 });
    p.pkg('Content/Set1/New.lasset', g(100));
    fs.rmSync(p.abs('Content/Set2/A2.lasset'));
    fs.mkdirSync(p.abs('Content/Set0/Deeper'));
    p.pkg('Content/Set0/Deeper/Deep.lasset', g(101));
    p.pkg('Content/Set0/A3.lasset', g(103));
    bumpMtime(p.abs('Content/Set0/A3.lasset'));
    expect(await reg.scan()).toMatchObject({ assets: 13, read: 3, removed: 1, cached: 10 });
    expect(reg.byVirtualPath('/Game/Set1/New.lasset')?.guid).toBe(g(100));
    expect(reg.byVirtualPath('/Game/Set0/Deeper/Deep.lasset')?.guid).toBe(g(101));
    expect(reg.byVirtualPath('/Game/Set2/A2.lasset')).toBeUndefined();
    expect(reg.get(g(103))?.virtualPath).toBe('/Game/Set0/A3.lasset');
    reg.close();

    const fast = scanInChild(false);
    const plain = scanInChild(true);
    expect(fast).toMatchObject({ fastReaddir: true, assets: 13, read: 0, cached: 13, problems: 0 });
    expect(plain).toMatchObject({ fastReaddir: false, assets: 13, read: 0, cached: 13, problems: 0 });
    expect(plain.digest).toBe(fast.digest);
  });
});
