import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lstatFastPath, lstatInto, type LstatNumbers } from '../../src/util/fastLstat.js';
import { AssetRegistry } from '../../src/registry/AssetRegistry.js';
import { g, makeProject, scanInChild as scanChild, type TempProject } from './fixtures.js';

let p: TempProject;
beforeEach(() => {
  p = makeProject();
});
afterEach(() => p.cleanup());

const scanInChild = (plain: boolean) => scanChild(p.dir, { LUMINA_PLAIN_LSTAT: plain ? '1' : '' });

describe('lstat of walked files', () => {
  it('gives exactly what fs.lstatSync gives (sub-millisecond mtimes, sizes), false for a missing path, and no file for a folder or a symlink', () => {
    // The binding is what the measured scan uses; on Node 20 it must be in use.
    expect(lstatFastPath()).toBe(true);
    const out: LstatNumbers = { mtimeMs: 0, size: 0, isFile: false };
    const seconds = [1_700_000_000.123456, 1_700_000_000, 946_684_800.999999, 2_000_000_000.5];
    for (const [i, s] of seconds.entries()) {
      const f = p.write(`Content/F${i}.lasset`, 'x'.repeat(i * 1000 + 7));
      fs.utimesSync(f, s, s);
      const want = fs.lstatSync(f);
      expect(lstatInto(f, out)).toBe(true);
      expect(out).toEqual({ mtimeMs: want.mtimeMs, size: want.size, isFile: true });
    }
    expect(lstatInto(p.abs('Content/Nope.lasset'), out)).toBe(false);
    expect(lstatInto(p.abs('Content/F0.lasset/below'), out)).toBe(false);
    expect(lstatInto(p.content, out) && out.isFile).toBe(false);
    fs.symlinkSync(p.abs('Content/F1.lasset'), p.abs('Content/Link.lasset'));
    expect(lstatInto(p.abs('Content/Link.lasset'), out)).toBe(true);
    expect(out.isFile).toBe(false);
  });

  it('a cache written with either stat is taken whole by a warm scan with the other (the same mtimes to the bit)', async () => {
    for (let i = 0; i < 20; i++) {
      const f = p.pkg(`Content/Set${i % 3}/A${i}.lasset`, g(i + 1));
      // Odd sub-millisecond parts, where a different formula would round differently.
      fs.utimesSync(f, 1_700_000_000 + i / 7, 1_700_000_000 + i / 7);
    }
    expect(scanInChild(true)).toMatchObject({ fast: false, assets: 20, read: 20, problems: 0 });
    expect(scanInChild(false)).toMatchObject({ fast: true, assets: 20, read: 0, cached: 20, rehashed: 0 });
    fs.rmSync(p.abs('Intermediates'), { recursive: true });
    expect(scanInChild(false)).toMatchObject({ fast: true, read: 20 });
    expect(scanInChild(true)).toMatchObject({ fast: false, read: 0, cached: 20, rehashed: 0 });
    // And in this process, after both.
    const reg = await AssetRegistry.open({ config: p.config() });
    expect(await reg.scan()).toMatchObject({ read: 0, cached: 20 });
    reg.close();
  });
});
