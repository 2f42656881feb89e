import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AssetRegistry } from '../../src/registry/AssetRegistry.js';
import { EntryTable } from '../../src/registry/entryTable.js';
import { g, makeProject, type TempProject } from './fixtures.js';

let p: TempProject;
beforeEach(() => {
  p = makeProject();
});
afterEach(() => p.cleanup());

describe('EntryTable', () => {
  it('finds, replaces and deletes by absolute file, counts each file once, and lists every entry', () => {
    const t = new EntryTable<string>();
    const a = path.join(p.content, 'A.lasset');
    const b = path.join(p.content, 'Sub', 'B.lasset');
    t.set(a, 'a');
    t.set(b, 'b');
    t.set(a, 'a2');
    expect(t.size).toBe(2);
    expect(t.get(a)).toBe('a2');
    expect(t.folder(path.join(p.content, 'Sub'))?.get('B.lasset')).toBe('b');
    expect(t.get(path.join(p.content, 'B.lasset'))).toBeUndefined();
    expect([...t.values()].sort()).toEqual(['a2', 'b']);
    expect(t.delete(b)).toBe(true);
    expect(t.delete(b)).toBe(false);
    expect(t.folder(path.join(p.content, 'Sub'))).toBeUndefined();
    expect(t.size).toBe(1);
    t.clear();
    expect([t.size, t.get(a)]).toEqual([0, undefined]);
  });

  it('a warm scan takes every file from the cache, whatever the folders look like (mount root, nesting, same-length and non-ASCII names, a file named like a folder)', async () => {
    const rels = [
      'Content/Root.lasset',
      'Content/a.lasset',
      'Content/a/In.lasset',
      'Content/a/b/Deep.lasset',
      'Content/a/Next.lasset',
      'Content/b/In.lasset',
      'Content/Set00/F000/X.lasset',
      'Content/Set01/F000/X.lasset',
      'Content/Set00/F001/X.lasset',
      'Content/Zoë/Ünï.lasset',
      'Content/Zoe/Uni.lasset',
      'Plugins/Foliage/Content/Oak.lasset',
      'Plugins/Foliage/Content/T/Oak.lasset',
    ];
    rels.forEach((rel, i) => p.pkg(rel, g(i + 1)));
    const first = await AssetRegistry.open({ config: p.config() });
    expect(await first.scan()).toMatchObject({ assets: rels.length, read: rels.length, problems: [] });
    first.close();
    const reg = await AssetRegistry.open({ config: p.config() });
    expect(await reg.scan()).toMatchObject({ assets: rels.length, read: 0, cached: rels.length, removed: 0, problems: [] });
    rels.forEach((rel, i) => expect(reg.byFile(p.abs(rel))?.guid).toBe(g(i + 1)));
    // A change in one of two same-length folders is seen in that one only.
    fs.rmSync(p.abs('Content/Set01/F000/X.lasset'));
    p.pkg('Content/Set00/F000/X.lasset', g(99), { extra: 1 });
    const again = await AssetRegistry.open({ config: p.config() });
    expect(await again.scan()).toMatchObject({ read: 1, cached: rels.length - 2, removed: 1 });
    expect(again.byFile(p.abs('Content/Set00/F000/X.lasset'))?.guid).toBe(g(99));
    expect(again.byFile(p.abs('Content/Set00/F001/X.lasset'))?.guid).toBe(g(9));
  });
});
