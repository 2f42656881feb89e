/**
 * Staged atomic writes (src/util/atomicWrite.ts): files written to temps and committed together
 * (fsynced at once, renamed in order, each folder fsynced once) or discarded, each target old or
 * new and no temp left behind either way.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TEMP_MARKER, commitStaged, discardStaged, stageAtomicFile, withAtomicFile } from '../../src/util/atomicWrite.js';
import { tempDir } from '../cook/helpers.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir('lc-atomic-');
});
afterEach(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

const write = (text: string) => async (fh: fsp.FileHandle) => {
  await fh.write(Buffer.from(text));
  return text.length;
};
const temps = () => fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((n) => n.includes(TEMP_MARKER));

describe('staged atomic writes', () => {
  it('two files staged are untouched until committed together, then both new, no temp left', async () => {
    const a = path.join(dir, 'a.pak');
    const b = path.join(dir, 'sub', 'a.txt');
    fs.writeFileSync(a, 'old a');
    const sa = await stageAtomicFile(a, write('new a'));
    const sb = await stageAtomicFile(b, write('new b'));
    expect(sa.result).toBe(5);
    expect(fs.readFileSync(a, 'utf8')).toBe('old a');
    expect(fs.existsSync(b)).toBe(false);
    expect(temps()).toHaveLength(2);
    await commitStaged([sa.staged, sb.staged]);
    expect(fs.readFileSync(a, 'utf8')).toBe('new a');
    expect(fs.readFileSync(b, 'utf8')).toBe('new b');
    expect(temps()).toEqual([]);
  });

  it('discarded: the targets keep their bytes and the temps are gone', async () => {
    const a = path.join(dir, 'a.pak');
    fs.writeFileSync(a, 'old a');
    const sa = await stageAtomicFile(a, write('new a'));
    await discardStaged([sa.staged]);
    expect(fs.readFileSync(a, 'utf8')).toBe('old a');
    expect(temps()).toEqual([]);
  });

  it('a fill that throws leaves the target untouched and no temp; a rename that fails removes the temps not renamed and names its target', async () => {
    const a = path.join(dir, 'a.pak');
    fs.writeFileSync(a, 'old a');
    await expect(
      stageAtomicFile(a, async (fh) => {
        await fh.write(Buffer.from('half'));
        throw new Error('disk full');
      }),
    ).rejects.toMatchObject({ code: 'IO_FAILED', file: a });
    expect(fs.readFileSync(a, 'utf8')).toBe('old a');
    expect(temps()).toEqual([]);

    // The second target is a non-empty folder: a file cannot be renamed over it.
    const blocked = path.join(dir, 'blocked');
    fs.mkdirSync(path.join(blocked, 'inside'), { recursive: true });
    const c = path.join(dir, 'c.txt');
    const sa = await stageAtomicFile(a, write('new a'));
    const sx = await stageAtomicFile(blocked, write('x'));
    const sc = await stageAtomicFile(c, write('c'));
    await expect(commitStaged([sa.staged, sx.staged, sc.staged])).rejects.toMatchObject({ code: 'IO_FAILED', file: blocked });
    // Renamed in order: the first made it, the rest did not, and no temp is left.
    expect(fs.readFileSync(a, 'utf8')).toBe('new a');
    expect(fs.statSync(blocked).isDirectory()).toBe(true);
    expect(fs.existsSync(c)).toBe(false);
    expect(temps()).toEqual([]);
  });

  it('withAtomicFile is a stage and its commit: the new bytes under the name, its result returned', async () => {
    const a = path.join(dir, 'deep', 'a.bin');
    expect(await withAtomicFile(a, write('abc'))).toBe(3);
    expect(fs.readFileSync(a, 'utf8')).toBe('abc');
    expect(temps()).toEqual([]);
  });
});
