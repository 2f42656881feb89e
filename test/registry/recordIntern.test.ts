/**
 * Records read on a cold scan share their dependency objects and class names (recordIntern.ts), as
 * records thawed from the cache do: the shared parts must be frozen, typed per import, and the
 * records equal to what a warm open of the same registry gives.
 */
import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AssetRegistry } from '../../src/registry/AssetRegistry.js';
import { RecordInterner } from '../../src/registry/recordIntern.js';
import { DependencyType } from '../../src/format/packageTypes.js';
import { bumpMtime, g, hard, makeProject, soft, type TempProject } from './fixtures.js';

let p: TempProject;
beforeEach(() => {
  p = makeProject();
});
afterEach(() => p.cleanup());

const open = () => AssetRegistry.open({ config: p.config() });

describe('records read on a cold scan', () => {
  function populate() {
    p.pkg('Content/Shared.lasset', g(1));
    p.pkg('Content/A.lasset', g(2), { imports: [hard(g(1)), soft(g(1)), hard(g(9))] });
    p.pkg('Content/Deep/B.lasset', g(3), { imports: [hard(g(1)), hard(g(9))] });
    p.pkg('Plugins/Foliage/Content/Oak.lasset', g(4), { imports: [soft(g(1))] });
    // Not a lowercase extension: still a package, its name and package path without it.
    fs.renameSync(p.pkg('Content/Upper.lasset', g(5), { imports: [hard(g(2))] }), p.abs('Content/Upper.LASSET'));
    p.write('Content/UI/Hud.rcss', 'body {}');
    p.write('Content/UI/Hud.rcss.lmeta', JSON.stringify({ guid: g(6) }));
  }

  it('share one frozen dependency object per (GUID, type), never mutable', async () => {
    populate();
    const reg = await open();
    expect(await reg.scan()).toMatchObject({ read: 6, cached: 0, problems: [] });
    const a = reg.get(g(2))!;
    const b = reg.get(g(3))!;
    const oak = reg.get(g(4))!;
    expect(a.dependencies).toEqual([
      { guid: g(1), type: DependencyType.Hard },
      { guid: g(1), type: DependencyType.Soft },
      { guid: g(9), type: DependencyType.Hard },
    ]);
    expect(b.dependencies[0]).toBe(a.dependencies[0]);
    expect(b.dependencies[1]).toBe(a.dependencies[2]);
    expect(oak.dependencies[0]).toBe(a.dependencies[1]);
    expect(a.dependencies[0]).not.toBe(a.dependencies[1]);
    const shared = a.dependencies[0];
    expect(Object.isFrozen(shared)).toBe(true);
    expect(() => {
      (shared as { type: number }).type = DependencyType.Soft;
    }).toThrow(TypeError);
    expect(b.dependencies[0].type).toBe(DependencyType.Hard);
    // Each record's list is its own: changing one list leaves the others alone.
    expect(a.dependencies).not.toBe(b.dependencies);
    expect(a.className).toBe(b.className);
  });

  it('equal the records a warm open thaws from the cache', async () => {
    populate();
    const cold = await open();
    await cold.scan();
    const warm = await open();
    expect(await warm.scan()).toMatchObject({ read: 0, cached: 6 });
    expect(cold.all()).toEqual(warm.all());
    expect(cold.get(g(5))).toMatchObject({ name: 'Upper', packagePath: '/Game/Upper', virtualPath: '/Game/Upper.LASSET', kind: 'package' });
    expect(cold.get(g(3))).toMatchObject({ name: 'B', packagePath: '/Game/Deep/B', virtualPath: '/Game/Deep/B.lasset' });
    expect(cold.get(g(4))).toMatchObject({ name: 'Oak', packagePath: '/Foliage/Oak', mount: '/Foliage' });
  });

  it('an edited file read again gets the shared objects of its scan, with its new imports', async () => {
    populate();
    const reg = await open();
    await reg.scan();
    p.pkg('Content/Deep/B.lasset', g(3), { imports: [soft(g(9)), hard(g(2))], extra: 1 });
    bumpMtime(p.abs('Content/Deep/B.lasset'));
    expect(await reg.scan()).toMatchObject({ read: 1 });
    expect(reg.get(g(3))!.dependencies).toEqual([
      { guid: g(9), type: DependencyType.Soft },
      { guid: g(2), type: DependencyType.Hard },
    ]);
    expect(reg.get(g(2))!.dependencies[2]).toEqual({ guid: g(9), type: DependencyType.Hard });
  });
});

describe('RecordInterner', () => {
  it('keeps the first string of a GUID and of a class name, and the values unchanged', () => {
    const i = new RecordInterner();
    const d = i.dep(g(7), DependencyType.Hard);
    expect(i.dep(`${g(7)}`, DependencyType.Hard)).toBe(d);
    expect(i.dep(g(7), DependencyType.Soft)).toEqual({ guid: g(7), type: DependencyType.Soft });
    expect(i.guid(g(7))).toBe(g(7));
    expect(i.guid(g(8))).toBe(g(8));
    expect(i.className('/Script/Engine.CMaterial')).toBe('/Script/Engine.CMaterial');
  });
});
