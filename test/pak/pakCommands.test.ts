import fsp from 'node:fs/promises';
import path from 'node:path';
import yargs from 'yargs';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { initHash, xxh64 } from '../../src/util/hash.js';
import { writePak } from '../../pak/writePak.js';
import { PakReader } from '../../pak/PakReader.js';
import { pakCat, pakCommand, pakDiff, pakExtract, pakLs, pakVerify, patchCommand, runPatch } from '../../cli/commands/pak.js';
import { describePakFile, writeReleaseManifest } from '../../pak/releaseManifest.js';
import { bytesDiff, caught, mixedBytes, tempDir } from './helpers.js';

beforeAll(initHash);

let dir: string;
let v1: string;
let v2: string;
const enc = (s: string) => new TextEncoder().encode(s);
beforeEach(async () => {
  dir = await tempDir();
  v1 = path.join(dir, 'v1.pak');
  v2 = path.join(dir, 'v2.pak');
  await writePak(v1, [
    { path: '/Game/A.lasset', kind: 'bytes', data: mixedBytes(100_000, 1) },
    { path: '/Game/B.rml', kind: 'bytes', data: enc('b1') },
    { path: '/Game/Sub/C.luau', kind: 'bytes', data: enc('c1') },
  ]);
  await writePak(v2, [
    { path: '/Game/A.lasset', kind: 'bytes', data: mixedBytes(100_000, 1) },
    { path: '/Game/B.rml', kind: 'bytes', data: enc('b2') },
    { path: '/Game/D.rml', kind: 'bytes', data: enc('d') },
  ]);
});
afterEach(async () => {
  vi.restoreAllMocks();
  await fsp.rm(dir, { recursive: true, force: true });
});

describe('pak commands', () => {
  it('ls lists the TOC', async () => {
    const r = await pakLs([v1]);
    expect(r.data[0].entries.map((e) => [e.path, e.method])).toEqual([
      ['/Game/A.lasset', 'deflate'],
      ['/Game/B.rml', 'stored'],
      ['/Game/Sub/C.luau', 'stored'],
    ]);
    expect(r.data[0].entries[1].xxh64).toBe(xxh64(enc('b1')).toString(16).padStart(16, '0'));
    expect(r.text.split('\n')[0]).toMatch(/^# .*v1\.pak: 3 entries, mount \/, priority 0, toc [0-9a-f]{16}$/);
  });

  it('cat gives raw bytes, across a mounted set', async () => {
    expect(bytesDiff(await pakCat([v1], '/Game/A.lasset'), mixedBytes(100_000, 1))).toBe('same');
    expect(new TextDecoder().decode(await pakCat([v1, v2], '/Game/B.rml'))).toBe('b2');
    expect(await caught(() => pakCat([v1], '/Game/Nope'))).toMatchObject({ code: 'PAK_ENTRY_NOT_FOUND', message: 'no entry "/Game/Nope"' });
  });

  it('extract writes every resolved path and refuses to write through a symlink out of the folder', async () => {
    const out = path.join(dir, 'out');
    const r = await pakExtract([v1], out);
    expect(r.data.files).toBe(3);
    expect(await fsp.readFile(path.join(out, 'Game', 'Sub', 'C.luau'), 'utf8')).toBe('c1');
    expect(bytesDiff(await fsp.readFile(path.join(out, 'Game', 'A.lasset')), mixedBytes(100_000, 1))).toBe('same');

    const out2 = path.join(dir, 'out2');
    const elsewhere = path.join(dir, 'elsewhere');
    await fsp.mkdir(out2);
    await fsp.mkdir(elsewhere);
    await fsp.symlink(elsewhere, path.join(out2, 'Game'));
    expect(await caught(() => pakExtract([v1], out2))).toMatchObject({
      code: 'PAK_PATH_INVALID',
      message: 'entry "/Game/A.lasset" escapes the output folder through a symlink',
    });
    expect(await fsp.readdir(elsewhere)).toEqual([]);
  });

  it('extract refuses a pak whose path climbs out with ".."', async () => {
    const b = new Uint8Array(await fsp.readFile(v1));
    const v = new DataView(b.buffer);
    const tocOffset = Number(v.getBigUint64(16, true));
    b.set(enc('/../../A.lasse'), tocOffset + 5 + 4 + 8 + 4);
    const tocSize = Number(v.getBigUint64(24, true));
    v.setBigUint64(b.byteLength - 16, xxh64(b.subarray(tocOffset, tocOffset + tocSize)), true);
    const bad = path.join(dir, 'climb.pak');
    await fsp.writeFile(bad, b);
    expect(await caught(() => pakExtract([bad], path.join(dir, 'o')))).toMatchObject({ code: 'PAK_PATH_INVALID', message: 'entry "/../../A.lasse" has a ".." segment' });
  });

  it('verify passes good paks and names the first bad entry', async () => {
    expect((await pakVerify([v1, v2])).data.ok).toBe(true);
    const pak = await PakReader.open(v1);
    const e = pak.getEntry('/Game/B.rml')!;
    await pak.close();
    const b = await fsp.readFile(v1);
    b[e.offset] ^= 0xff;
    const bad = path.join(dir, 'bad.pak');
    await fsp.writeFile(bad, b);
    const r = await pakVerify([v2, bad]);
    expect(r.data.ok).toBe(false);
    expect(r.data.paks[0].ok).toBe(true);
    expect(r.data.paks[1].error).toMatchObject({ code: 'PAK_ENTRY_CORRUPT', file: bad });
    expect(r.data.paks[1].error?.message).toMatch(/^entry "\/Game\/B\.rml" raw bytes hash to /);
    expect(r.firstError).toMatchObject({ code: 'PAK_ENTRY_CORRUPT' });
  });

  it('diff lists added, changed and removed paths', async () => {
    const r = await pakDiff([v1], [v2]);
    expect(r.data).toEqual({ added: ['/Game/D.rml'], changed: ['/Game/B.rml'], removed: ['/Game/Sub/C.luau'] });
    expect(r.text).toBe('+ /Game/D.rml\nM /Game/B.rml\n- /Game/Sub/C.luau\n1 added, 1 changed, 1 removed\n');
  });

  it('runs through yargs: ls --json, verify failure throws, diff --base/--target, patch', async () => {
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation(((chunk: string | Uint8Array, a?: unknown, b?: unknown) => {
      out.push(typeof chunk === 'string' ? chunk : new TextDecoder().decode(chunk));
      const done = typeof a === 'function' ? a : b;
      if (typeof done === 'function') done();
      return true;
    }) as typeof process.stdout.write);
    // --json is a global option of the CLI (cli/main.ts); declared here the same way.
    const run = (args: string[]) =>
      yargs(args).option('json', { type: 'boolean', global: true }).command(pakCommand).command(patchCommand).strict().fail(false).exitProcess(false).parseAsync();
    await run(['pak', 'ls', v1, '--json']);
    expect(JSON.parse(out.join('')).paks[0].entries.length).toBe(3);
    out.length = 0;
    await run(['pak', 'diff', '--base', v1, '--target', v1, v2, '--json']);
    expect(JSON.parse(out.join(''))).toEqual({ ok: true, added: ['/Game/D.rml'], changed: ['/Game/B.rml'], removed: [] });
    out.length = 0;
    await run(['pak', 'cat', v1, '/Game/B.rml']);
    expect(out.join('')).toBe('b1');

    const b = await fsp.readFile(v1);
    b[40] ^= 0xff;
    const bad = path.join(dir, 'bad.pak');
    await fsp.writeFile(bad, b);
    await expect(run(['pak', 'verify', bad])).rejects.toMatchObject({ code: 'PAK_ENTRY_CORRUPT' });

    const rel = path.join(dir, 'rel');
    await fsp.mkdir(rel);
    await fsp.copyFile(v1, path.join(rel, 'v1.pak'));
    await writeReleaseManifest(rel, { name: 'v1', paks: [await describePakFile(path.join(rel, 'v1.pak'))] });
    const cooked = path.join(dir, 'cooked');
    await fsp.mkdir(path.join(cooked, 'Game'), { recursive: true });
    await fsp.writeFile(path.join(cooked, 'Game', 'B.rml'), 'b3');
    out.length = 0;
    await run(['patch', '--base', rel, '--out', path.join(dir, 'p.pak'), '--cooked', cooked, '--json']);
    expect(JSON.parse(out.join(''))).toMatchObject({ ok: true, changed: ['/Game/B.rml'], removed: ['/Game/A.lasset', '/Game/Sub/C.luau'], priority: 1 });
    // One base pak: the patch carries exactly that pak's TOC hash (FORMAT.md).
    expect(JSON.parse(out.join('')).baseTocHash).toBe((await describePakFile(path.join(rel, 'v1.pak'))).tocHash);
    vi.restoreAllMocks();
    expect((await runPatch({ base: path.join(rel, 'release.json'), cookedDir: cooked, out: path.join(dir, 'p2.pak') })).text).toMatch(
      /^patch .*p2\.pak against "v1" \(base [0-9a-f]{16}\), priority 1: 0 added, 1 changed, 2 removed, 0 unchanged\n$/,
    );
  });
});
