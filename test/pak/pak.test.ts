import fsp from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { initHash, xxh64 } from '../../src/util/hash.js';
import { BLOCK_SIZE } from '../../src/format/deflateBlocks.js';
import { encodeCooked } from '../../src/format/cookedPackage.js';
import { writePak, type PakSource } from '../../pak/writePak.js';
import { PakReader } from '../../pak/PakReader.js';
import { MountedPaks } from '../../pak/MountedPaks.js';
import { diffPaks } from '../../pak/diffPaks.js';
import { PAK_HEADER_SIZE } from '../../pak/pakFormat.js';
import { bytesDiff, caught, mixedBytes, noiseBytes, tempDirEach } from './helpers.js';

beforeAll(initHash);

let dir: string;
tempDirEach((d) => (dir = d));

async function fixtureSources(): Promise<{ sources: PakSource[]; content: Map<string, Uint8Array> }> {
  const content = new Map<string, Uint8Array>();
  const rock = mixedBytes(300_000, 11);
  const cookedFile = path.join(dir, 'Rock.lckd');
  await fsp.writeFile(cookedFile, await encodeCooked(rock));
  content.set('/Game/Materials/Rock.lasset', rock);
  const noise = noiseBytes(2 * BLOCK_SIZE + 77, 5);
  const noiseFile = path.join(dir, 'noise.bin');
  await fsp.writeFile(noiseFile, noise);
  content.set('/Game/Data/noise.bin', noise);
  const ui = mixedBytes(5 * BLOCK_SIZE + 1, 2);
  const uiFile = path.join(dir, 'ui.rml');
  await fsp.writeFile(uiFile, ui);
  content.set('/Game/UI/Main.rml', ui);
  const emptyFile = path.join(dir, 'empty');
  await fsp.writeFile(emptyFile, '');
  content.set('/Game/empty.txt', new Uint8Array(0));
  const astral = new TextEncoder().encode('smile');
  content.set('/Game/\u{1F600}.txt', astral);
  content.set('/Game/\uFFFD.txt', astral);
  const sources: PakSource[] = [
    { path: '/Game/UI/Main.rml', kind: 'file', file: uiFile },
    { path: '/Game/Materials/Rock.lasset', kind: 'cooked', file: cookedFile },
    { path: '/Game/Data/noise.bin', kind: 'file', file: noiseFile },
    { path: '/Game/empty.txt', kind: 'file', file: emptyFile },
    { path: '/Game/\u{1F600}.txt', kind: 'bytes', data: astral },
    { path: '/Game/\uFFFD.txt', kind: 'bytes', data: astral },
  ];
  return { sources, content };
}

describe('pak writer and reader', () => {
  it('writes entries in path byte order, reads every one back, and is byte-for-byte deterministic', async () => {
    const { sources, content } = await fixtureSources();
    const a = path.join(dir, 'a.pak');
    const b = path.join(dir, 'b.pak');
    const res = await writePak(a, sources, { priority: 3 });
    const reversed = [...sources].reverse();
    const resB = await writePak(b, reversed, { priority: 3 });
    expect(bytesDiff(await fsp.readFile(a), await fsp.readFile(b))).toBe('same');
    // Where each source went, in the order given (what a chunk pak's splice record keeps).
    expect([...res.tocIndex!].map((k) => res.toc.entries[k].path)).toEqual(sources.map((s) => s.path));
    expect([...resB.tocIndex!].map((k) => resB.toc.entries[k].path)).toEqual(reversed.map((s) => s.path));
    expect([...res.tocIndex!].sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect((await fsp.readdir(dir)).filter((n) => n.includes('.lctmp-'))).toEqual([]);

    const pak = await PakReader.open(a);
    try {
      // U+FFFD sorts after U+1F600 in UTF-16 order but before it in UTF-8 byte order.
      expect(pak.entries.map((e) => e.path)).toEqual([
        '/Game/Data/noise.bin',
        '/Game/Materials/Rock.lasset',
        '/Game/UI/Main.rml',
        '/Game/empty.txt',
        '/Game/\uFFFD.txt',
        '/Game/\u{1F600}.txt',
      ]);
      expect(pak.tocHash).toBe(res.tocHash);
      expect(pak.toc.priority).toBe(3);
      expect(pak.isPatch).toBe(false);
      expect(pak.getEntry('/Game/Data/noise.bin')?.method).toBe(0);
      expect(pak.getEntry('/Game/UI/Main.rml')?.method).toBe(1);
      for (const [p, raw] of content) {
        expect(bytesDiff(await pak.readEntry(p), raw)).toBe('same');
        expect(pak.getEntry(p)?.xxh64).toBe(xxh64(raw));
      }
      expect(await pak.verify()).toEqual({ file: a, entries: 6, rawBytes: [...content.values()].reduce((n, r) => n + r.byteLength, 0) });
    } finally {
      await pak.close();
    }
  });

  it('copies a cooked package block for block without recompressing', async () => {
    const raw = mixedBytes(200_000, 4);
    const lckd = await encodeCooked(raw, { engine: 'fflate' });
    const f = path.join(dir, 'x.lckd');
    await fsp.writeFile(f, lckd);
    const out = path.join(dir, 'c.pak');
    await writePak(out, [{ path: '/X.lasset', kind: 'cooked', file: f }]);
    const pak = await PakReader.open(out);
    const e = pak.getEntry('/X.lasset')!;
    const bytes = await fsp.readFile(out);
    const dataOffset = lckd.byteLength - e.storedSize;
    expect(bytesDiff(bytes.subarray(e.offset, e.offset + e.storedSize), lckd.subarray(dataOffset))).toBe('same');
    expect(bytesDiff(await pak.readEntry('/X.lasset'), raw)).toBe('same');
    await pak.close();
  });

  it('streams big sources: a multi-window file rewritten as stored, and a cooked file past the read-ahead size', async () => {
    const noise = noiseBytes(5 * 1024 * 1024 + 3, 12);
    const noiseFile = path.join(dir, 'noise5m.bin');
    await fsp.writeFile(noiseFile, noise);
    const bigRaw = mixedBytes(2 * 1024 * 1024, 13);
    const bigNoise = noiseBytes(9 * 1024 * 1024, 14);
    const cookedBig = path.join(dir, 'big.lckd');
    await fsp.writeFile(cookedBig, await encodeCooked(bigNoise));
    const cookedSmall = path.join(dir, 'small.lckd');
    await fsp.writeFile(cookedSmall, await encodeCooked(bigRaw));
    const out = path.join(dir, 'big.pak');
    await writePak(out, [
      { path: '/a/noise', kind: 'file', file: noiseFile },
      { path: '/b/big', kind: 'cooked', file: cookedBig },
      { path: '/c/small', kind: 'cooked', file: cookedSmall },
      { path: '/d/after', kind: 'bytes', data: new Uint8Array([9, 9, 9]) },
    ]);
    const pak = await PakReader.open(out);
    expect(pak.getEntry('/a/noise')).toMatchObject({ method: 0, storedSize: noise.byteLength });
    expect(pak.getEntry('/b/big')).toMatchObject({ method: 0, rawSize: bigNoise.byteLength });
    expect(bytesDiff(await pak.readEntry('/a/noise'), noise)).toBe('same');
    expect(bytesDiff(await pak.readEntry('/b/big'), bigNoise)).toBe('same');
    expect(bytesDiff(await pak.readEntry('/c/small'), bigRaw)).toBe('same');
    expect(bytesDiff(await pak.readEntry('/d/after'), new Uint8Array([9, 9, 9]))).toBe('same');
    await pak.verify();
    await pak.close();
  });

  it('reads byte ranges across block boundaries from DEFLATE and stored entries', async () => {
    const big = mixedBytes(10 * BLOCK_SIZE + 500, 9);
    const noise = noiseBytes(3 * BLOCK_SIZE, 1);
    const out = path.join(dir, 'r.pak');
    await writePak(out, [
      { path: '/big', kind: 'bytes', data: big },
      { path: '/noise', kind: 'bytes', data: noise },
    ]);
    const pak = await PakReader.open(out);
    for (const [off, len] of [
      [0, 1],
      [BLOCK_SIZE - 3, 4096],
      [5 * BLOCK_SIZE + 17, 3 * BLOCK_SIZE],
      [big.byteLength - 10, 10],
      [123, 0],
    ]) {
      expect(bytesDiff(await pak.readRange('/big', off, len), big.subarray(off, off + len))).toBe('same');
    }
    expect(await pak.readRange('/noise', BLOCK_SIZE - 5, 10)).toEqual(noise.subarray(BLOCK_SIZE - 5, BLOCK_SIZE + 5));
    expect(await caught(() => pak.readRange('/big', big.byteLength - 1, 2))).toMatchObject({ code: 'USAGE' });
    expect(await caught(() => pak.readEntry('/nope'))).toMatchObject({ code: 'PAK_ENTRY_NOT_FOUND', message: 'no entry "/nope"' });
    await pak.close();
  });

  it('rejects invalid and duplicate virtual paths', async () => {
    const out = path.join(dir, 'bad.pak');
    const data = new Uint8Array(1);
    for (const [p, why] of [
      ['Game/a', 'does not start with "/"'],
      ['/Game/../a', 'has a ".." segment'],
      ['/Game//a', 'has an empty segment'],
      ['/Game/./a', 'has a "." segment'],
      ['/Game\\a', 'contains a backslash'],
      ['/Game/a\0', 'contains a NUL character'],
      ['/Game/', 'has an empty segment'],
    ]) {
      expect(await caught(() => writePak(out, [{ path: p, kind: 'bytes', data }]))).toMatchObject({
        code: 'PAK_PATH_INVALID',
        message: `entry "${p}" ${why}`,
      });
    }
    expect(
      await caught(() =>
        writePak(out, [
          { path: '/a', kind: 'bytes', data },
          { path: '/a', kind: 'tombstone' },
        ]),
      ),
    ).toMatchObject({ code: 'PAK_PATH_INVALID', message: 'entry "/a" is listed twice' });
    await expect(fsp.stat(out)).rejects.toThrow();
  });

  it('leaves no pak under the final name when a source fails mid-write', async () => {
    const out = path.join(dir, 'fail.pak');
    await fsp.writeFile(out, 'old');
    const err = await caught(() =>
      writePak(out, [
        { path: '/a', kind: 'bytes', data: mixedBytes(100_000) },
        { path: '/b', kind: 'file', file: path.join(dir, 'missing') },
      ]),
    );
    expect(err.code).toBe('IO_FAILED');
    expect(await fsp.readFile(out, 'utf8')).toBe('old');
    expect((await fsp.readdir(dir)).sort()).toEqual(['fail.pak']);
  });
});

describe('hostile paks', () => {
  let good: Uint8Array;
  let pakFile: string;
  beforeEach(async () => {
    pakFile = path.join(dir, 'good.pak');
    await writePak(pakFile, [
      { path: '/Game/A.lasset', kind: 'bytes', data: mixedBytes(3 * BLOCK_SIZE, 1) },
      { path: '/Game/B.lasset', kind: 'bytes', data: mixedBytes(1000, 2) },
    ]);
    good = new Uint8Array(await fsp.readFile(pakFile));
  });

  async function openBytes(bytes: Uint8Array): Promise<PakReader> {
    const f = path.join(dir, 'hostile.pak');
    await fsp.writeFile(f, bytes);
    return PakReader.open(f);
  }
  const view = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);
  /** Rewrite the footer hash after editing the TOC, so the TOC checks themselves are reached. */
  function rehash(b: Uint8Array): Uint8Array {
    const v = view(b);
    const tocOffset = Number(v.getBigUint64(16, true));
    const tocSize = Number(v.getBigUint64(24, true));
    v.setBigUint64(b.byteLength - 16, xxh64(b.subarray(tocOffset, tocOffset + tocSize)), true);
    return b;
  }
  const tocOffsetOf = (b: Uint8Array) => Number(view(b).getBigUint64(16, true));

  it('truncated', async () => {
    expect(await caught(() => openBytes(good.subarray(0, 20)))).toMatchObject({
      code: 'PAK_INVALID',
      message: 'header: file of 20 bytes is shorter than a header and footer (48)',
    });
    expect(await caught(() => openBytes(good.subarray(0, good.byteLength - 5)))).toMatchObject({ code: 'PAK_INVALID', field: 'tocOffset', offset: 16 });
  });

  it('bad magic', async () => {
    const b = good.slice();
    b[0] = 0x58;
    expect(await caught(() => openBytes(b))).toMatchObject({ code: 'PAK_INVALID', message: 'magic: 0x4b415058 is not LPAK', offset: 0 });
  });

  it('bad footer hash', async () => {
    const b = good.slice();
    b[tocOffsetOf(b) + 10] ^= 1;
    expect(await caught(() => openBytes(b))).toMatchObject({ code: 'PAK_INVALID', field: 'footer.tocHash', offset: b.byteLength - 16 });
  });

  it('TOC offset past EOF', async () => {
    const b = good.slice();
    view(b).setBigUint64(16, BigInt(b.byteLength + 100), true);
    expect(await caught(() => openBytes(b))).toMatchObject({ code: 'PAK_INVALID', field: 'tocOffset', offset: 16 });
  });

  it('entry offset past the data region', async () => {
    const b = good.slice();
    // First entry: mount FString "/" (5) + priority (4) + base hash (8) + path FString (4 + 14), then offset.
    const at = tocOffsetOf(b) + 5 + 4 + 8 + 4 + '/Game/A.lasset'.length;
    view(b).setBigUint64(at, BigInt(b.byteLength), true);
    expect(await caught(() => openBytes(rehash(b)))).toMatchObject({ code: 'PAK_INVALID', field: 'entries[0].offset', offset: at });
  });

  it('block sizes that lie', async () => {
    const b = good.slice();
    const at = tocOffsetOf(b) + 5 + 4 + 8 + 4 + '/Game/A.lasset'.length + 32 + 1 + 4 + 4;
    view(b).setUint32(at, view(b).getUint32(at, true) + 1, true);
    expect(await caught(() => openBytes(rehash(b)))).toMatchObject({ code: 'PAK_INVALID', field: 'entries[0].blockSizes' });
  });

  it('entry count that does not fit the TOC', async () => {
    const b = good.slice();
    view(b).setUint32(8, 1_000_000, true);
    expect(await caught(() => openBytes(b))).toMatchObject({ code: 'PAK_INVALID', field: 'entryCount', offset: 8 });
  });

  it('a path with ".."', async () => {
    const b = good.slice();
    const at = tocOffsetOf(b) + 5 + 4 + 8 + 4;
    b.set(new TextEncoder().encode('/Game/../A.ls'), at);
    expect(await caught(() => openBytes(rehash(b)))).toMatchObject({ code: 'PAK_PATH_INVALID', message: 'entry "/Game/../A.lst" has a ".." segment' });
  });

  it('a tampered entry byte: verify names that entry', async () => {
    const pak0 = await PakReader.open(pakFile);
    const e = pak0.getEntry('/Game/B.lasset')!;
    await pak0.close();
    const b = good.slice();
    b[e.offset + Math.floor(e.storedSize / 2)] ^= 0x10;
    const pak = await openBytes(b);
    const err = await caught(() => pak.verify());
    expect(err.code).toBe('PAK_ENTRY_CORRUPT');
    expect(err.message).toMatch(/^entry "\/Game\/B\.lasset" /);
    expect(bytesDiff(await pak.readEntry('/Game/A.lasset'), mixedBytes(3 * BLOCK_SIZE, 1))).toBe('same');
    await pak.close();
    expect(e.offset).toBeGreaterThanOrEqual(PAK_HEADER_SIZE);
  });
});

describe('mounting', () => {
  it('resolves overlay first, then paks by priority, with tombstones hiding lower paks', async () => {
    const base = path.join(dir, 'base.pak');
    const high = path.join(dir, 'high.pak');
    const enc = (s: string) => new TextEncoder().encode(s);
    await writePak(base, [
      { path: '/A', kind: 'bytes', data: enc('base A') },
      { path: '/B', kind: 'bytes', data: enc('base B') },
      { path: '/C', kind: 'bytes', data: enc('base C') },
      { path: '/D', kind: 'bytes', data: enc('base D') },
    ]);
    await writePak(high, [
      { path: '/B', kind: 'bytes', data: enc('high B') },
      { path: '/C', kind: 'tombstone' },
      { path: '/E', kind: 'bytes', data: enc('high E') },
    ], { priority: 5, mountPoint: '/' });
    const overlay = path.join(dir, 'overlay');
    await fsp.mkdir(path.join(overlay, 'Sub'), { recursive: true });
    await fsp.writeFile(path.join(overlay, 'D'), 'loose D');
    await fsp.writeFile(path.join(overlay, 'Sub', 'F'), 'loose F');
    // Listed low-priority last on purpose: order comes from the TOC priority.
    const m = await MountedPaks.mount([high, base], { overlayDir: overlay });
    try {
      const dec = async (p: string) => new TextDecoder().decode(await m.read(p));
      expect(await m.list()).toEqual(['/A', '/B', '/D', '/E', '/Sub/F']);
      expect(await dec('/A')).toBe('base A');
      expect(await dec('/B')).toBe('high B');
      expect(await dec('/D')).toBe('loose D');
      expect(await dec('/Sub/F')).toBe('loose F');
      expect(await m.exists('/C')).toBe(false);
      expect(await caught(() => m.read('/C'))).toMatchObject({ code: 'PAK_ENTRY_NOT_FOUND' });
      expect(new TextDecoder().decode(await m.readRange('/D', 2, 3))).toBe('ose');
      expect(await caught(() => m.read('/../etc/passwd'))).toMatchObject({ code: 'PAK_PATH_INVALID' });
      await fsp.writeFile(path.join(overlay, 'C'), 'revived');
      expect(await dec('/C')).toBe('revived');
    } finally {
      await m.close();
    }
    expect(await diffPaks([base], [base, high])).toEqual({ added: ['/E'], changed: ['/B'], removed: ['/C'] });
  });

  it('joins mount points onto entry paths', async () => {
    const p = path.join(dir, 'mp.pak');
    await writePak(p, [{ path: '/Maps/A.lasset', kind: 'bytes', data: new Uint8Array([1, 2]) }], { mountPoint: '/Game/' });
    const m = await MountedPaks.mount([p]);
    expect(await m.list()).toEqual(['/Game/Maps/A.lasset']);
    expect(await m.read('/Game/Maps/A.lasset')).toEqual(new Uint8Array([1, 2]));
    await m.close();
  });
});
