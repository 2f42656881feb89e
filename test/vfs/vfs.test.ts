import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Vfs } from '../../src/vfs/Vfs.js';

let root: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'lumina-vfs-'));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('Vfs', () => {
  it('refuses a second mount of an alias, and replace swaps the folder without iterating the alias twice', () => {
    const vfs = new Vfs();
    vfs.mount('/Game', path.join(root, 'A'));
    expect(() => vfs.mount('/Game', path.join(root, 'B'))).toThrow(
      expect.objectContaining({ code: 'MOUNT_CONFLICT', message: `/Game: already mounted at ${path.join(root, 'A')}; unmount it first or pass replace` }),
    );
    vfs.mount('/Engine', path.join(root, 'E'));
    vfs.mount('/Game', path.join(root, 'B'), { replace: true });
    expect(vfs.mounts()).toEqual([
      { alias: '/Game', dir: path.join(root, 'B') },
      { alias: '/Engine', dir: path.join(root, 'E') },
    ]);
    expect(vfs.unmount('/Game')).toBe(true);
    expect(vfs.unmount('/Game')).toBe(false);
    vfs.mount('/Game', path.join(root, 'C'));
    expect(vfs.mounts().map((m) => m.alias)).toEqual(['/Engine', '/Game']);
  });

  it('rejects aliases that are not one segment', () => {
    const vfs = new Vfs();
    for (const bad of ['Game', '/Game/Sub', '/', '/Ga me']) {
      expect(() => vfs.mount(bad, root), bad).toThrow(expect.objectContaining({ code: 'MOUNT_CONFLICT' }));
    }
  });

  it('resolves virtual paths and rejects .. escapes and unknown aliases', () => {
    const vfs = new Vfs();
    vfs.mount('/Game', path.join(root, 'Content'));
    expect(vfs.resolve('/Game/Maps/Main.lasset')).toBe(path.join(root, 'Content', 'Maps', 'Main.lasset'));
    expect(vfs.resolve('/Game')).toBe(path.join(root, 'Content'));
    expect(() => vfs.resolve('/Game/../secret')).toThrow(expect.objectContaining({ code: 'USAGE', message: '"/Game/../secret" may not contain ".." segments' }));
    expect(() => vfs.resolve('/Game/a/./b')).toThrow(expect.objectContaining({ code: 'USAGE' }));
    expect(() => vfs.resolve('Game/x')).toThrow(expect.objectContaining({ code: 'USAGE' }));
    expect(() => vfs.resolve('/Nope/x')).toThrow(expect.objectContaining({ code: 'ASSET_NOT_FOUND' }));
  });

  it('maps a disk path back by the longest mount folder, and null outside every mount', () => {
    const vfs = new Vfs();
    vfs.mount('/Game', path.join(root, 'Content'));
    vfs.mount('/Inner', path.join(root, 'Content', 'Plugins', 'Inner'));
    expect(vfs.toVirtualPath(path.join(root, 'Content', 'Maps', 'Main.lasset'))).toBe('/Game/Maps/Main.lasset');
    expect(vfs.toVirtualPath(path.join(root, 'Content', 'Plugins', 'Inner', 'X.lasset'))).toBe('/Inner/X.lasset');
    expect(vfs.toVirtualPath(path.join(root, 'Content'))).toBe('/Game');
    // A sibling folder sharing the prefix is not inside the mount.
    expect(vfs.toVirtualPath(path.join(root, 'ContentOld', 'X.lasset'))).toBeNull();
    expect(vfs.toVirtualPath(path.join(root, 'Elsewhere'))).toBeNull();
  });
});
