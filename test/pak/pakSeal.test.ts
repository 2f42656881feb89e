/**
 * A rebuild under the previous pak's seal (pak/writePak.ts PakSeal): entries the seal vouches for
 * are copied without a check each, the old data hashed once. The pak must be byte-identical to
 * one built from scratch; a seal that is not the pak's, or a pak damaged since its seal, must
 * never let a damaged or different entry through.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { compressionId, decodePakSeal, encodePakSeal, writePak, type PakSeal, type PakSource, type WritePakOptions } from '../../pak/writePak.js';
import { PakReader } from '../../pak/PakReader.js';
import { encodeCooked } from '../../src/format/cookedPackage.js';
import { compressBlocks } from '../../src/format/deflateBlocks.js';
import { initHash, xxh64 } from '../../src/util/hash.js';
import { mixedBytes, tempDirEach } from './helpers.js';

let dir = '';
tempDirEach((d) => (dir = d));
beforeAll(initHash);

/** 40 cooked files (some of several blocks), 4 text files and a registry-like bytes entry; `changed` get other bytes. */
async function sources(changed: ReadonlySet<number> = new Set(), version = 1): Promise<PakSource[]> {
  const out: PakSource[] = [];
  for (let i = 0; i < 40; i++) {
    const raw = mixedBytes(i % 7 === 0 ? 150_000 + i : 600 + 31 * i, 100 + i + (changed.has(i) ? 1000 * version : 0));
    const file = path.join(dir, 'cooked', `A${String(i).padStart(2, '0')}.lasset`);
    await fsp.mkdir(path.dirname(file), { recursive: true });
    const lckd = await encodeCooked(raw);
    await fsp.writeFile(file, lckd);
    out.push({ path: `/Game/A${String(i).padStart(2, '0')}.lasset`, kind: 'cooked', file, cookedXxh64: xxh64(lckd) });
  }
  for (let i = 0; i < 4; i++) {
    const file = path.join(dir, 'text', `T${i}.rml`);
    await fsp.mkdir(path.dirname(file), { recursive: true });
    const text = Buffer.from(`<rml>${'row '.repeat(200 + i)}${changed.has(100 + i) ? `v${version}` : ''}</rml>`);
    await fsp.writeFile(file, text);
    out.push({ path: `/Game/UI/T${i}.rml`, kind: 'file', file, xxh64: xxh64(text) });
  }
  const data = mixedBytes(200_000, changed.has(200) ? 999 + version : 998);
  out.push({ path: '/AssetRegistry.bin', kind: 'bytes', data, xxh64: xxh64(data) });
  return out;
}

const opts = (previous?: string, seal?: PakSeal, tocHash?: bigint): WritePakOptions => ({
  mountPoint: '/',
  priority: 10,
  ...(previous ? { previous } : {}),
  ...(seal ? { previousSeal: seal } : {}),
  ...(tocHash !== undefined ? { previousCompression: { compression: compressionId()!, tocHash } } : {}),
});

/** The pak from scratch (no previous) of these sources. */
async function scratch(src: PakSource[]): Promise<Buffer> {
  const file = path.join(dir, 'scratch.pak');
  await writePak(file, src, opts());
  return fs.readFileSync(file);
}

describe('pak seals', () => {
  it('a rebuild under the seal copies the unchanged entries unchecked and equals the pak built from scratch, change after change', async () => {
    const pak = path.join(dir, 'Main.pak');
    let before = await sources();
    let res = await writePak(pak, before, opts());
    expect(res.seal).toBeDefined();
    const hashOf = (x: PakSource) => (x.kind === 'cooked' ? x.cookedXxh64 : x.kind === 'tombstone' ? 0n : x.xxh64);
    expect(res.seal!.cooked.filter((h) => h !== 0n)).toHaveLength(40);
    const changes: Array<Set<number>> = [new Set([3]), new Set([0, 14, 101]), new Set([39, 200]), new Set()];
    for (const [round, changed] of changes.entries()) {
      const src = await sources(changed, round + 2);
      // Through the seal's encoding, as writeChunkPaks keeps it.
      const encoded = Buffer.from(encodePakSeal(res.seal!));
      const seal = decodePakSeal(encoded)!;
      expect(seal).toEqual(res.seal);
      // Each entry's hash lies little-endian after the 40-byte header, whatever the host's order.
      expect(res.seal!.cooked.every((h, k) => encoded.readBigUInt64LE(40 + 8 * k) === h)).toBe(true);
      res = await writePak(pak, src, opts(pak, seal, res.tocHash));
      // What did not change since the last round (a round's change is undone by the next one).
      const kept = src.filter((x, i) => hashOf(x) === hashOf(before[i]));
      expect(kept.length).toBeLessThan(src.length);
      expect(res).toMatchObject({ reused: kept.filter((x) => x.kind === 'cooked').length, previousDamaged: 0, reusedCompressed: kept.filter((x) => x.kind !== 'cooked').length });
      before = src;
      expect(fs.readFileSync(pak).equals(await scratch(src))).toBe(true);
    }
  });

  it('the seal is what lets entries through unchecked: a seal that lies about an entry ships that entry as it was', async () => {
    // Shows the shortcut is taken (so the test above tests it): the writer believes the seal's
    // claims once the data hashes right; the claims themselves are the writer's own.
    const pak = path.join(dir, 'Main.pak');
    const first = await writePak(pak, await sources(), opts());
    const src = await sources(new Set([5]), 2);
    const lying = { ...first.seal!, cooked: BigUint64Array.from(first.seal!.cooked) };
    lying.cooked[first.toc.entries.findIndex((e) => e.path === '/Game/A05.lasset')] = (src[5] as { cookedXxh64: bigint }).cookedXxh64;
    const res = await writePak(pak, src, opts(pak, lying, first.tocHash));
    expect(res.reused).toBe(40);
    expect(fs.readFileSync(pak).equals(await scratch(src))).toBe(false);
  });

  it('a pak damaged since its seal is rebuilt with every entry checked: the damaged entry comes from its cooked file', async () => {
    const pak = path.join(dir, 'Main.pak');
    const first = await writePak(pak, await sources(), opts());
    const reader = await PakReader.open(pak);
    const victim = reader.getEntry('/Game/A07.lasset')!;
    await reader.close();
    const fh = await fsp.open(pak, 'r+');
    const b = Buffer.alloc(8);
    await fh.read(b, 0, 8, victim.offset + 20);
    for (let i = 0; i < 8; i++) b[i] ^= 0xa5;
    await fh.write(b, 0, 8, victim.offset + 20);
    await fh.close();
    const src = await sources(new Set([2]), 2);
    const res = await writePak(pak, src, opts(pak, first.seal, first.tocHash));
    expect(res).toMatchObject({ reused: 38, previousDamaged: 1 });
    expect(fs.readFileSync(pak).equals(await scratch(src))).toBe(true);
    await (await PakReader.open(pak)).verify();
  });

  it('a seal of another pak, or one that does not read back, is not used', async () => {
    const pak = path.join(dir, 'Main.pak');
    const first = await writePak(pak, await sources(), opts());
    const other = await writePak(path.join(dir, 'Other.pak'), await sources(new Set([1]), 5), opts());
    // Another pak's seal: its TOC hash is not this pak's; the entries are checked one by one (and match).
    const src = await sources(new Set([9]), 2);
    const res = await writePak(pak, src, opts(pak, other.seal, first.tocHash));
    expect(res).toMatchObject({ reused: 39, previousDamaged: 0 });
    expect(fs.readFileSync(pak).equals(await scratch(src))).toBe(true);
    const bytes = Buffer.from(encodePakSeal(res.seal!));
    bytes[bytes.byteLength - 20] ^= 1;
    expect(decodePakSeal(bytes)).toBeUndefined();
    expect(decodePakSeal(bytes.subarray(0, 30))).toBeUndefined();
  });
});

describe("a bytes source's shared compression (AssetRegistry.bin in every chunk pak)", () => {
  it('each pak takes the shared blocks (the bytes compressBlocks gives), and none asks for them when the previous pak lends the entry', async () => {
    const src = await sources();
    const reg = src.find((s) => s.path === '/AssetRegistry.bin') as Extract<PakSource, { kind: 'bytes' }>;
    let asked = 0;
    let shared: ReturnType<typeof compressBlocks> | undefined;
    const compressed = () => {
      asked++;
      return (shared ??= compressBlocks(reg.data));
    };
    const withShared = src.map((s) => (s === reg ? { ...reg, compressed } : s));
    const a = path.join(dir, 'A.pak');
    const b = path.join(dir, 'B.pak');
    const first = await writePak(a, withShared, opts());
    await writePak(b, withShared, opts());
    expect(asked).toBe(2);
    // Both paks are the one built from scratch without it.
    const plain = await scratch(src);
    expect(fs.readFileSync(a).equals(plain)).toBe(true);
    expect(fs.readFileSync(b).equals(plain)).toBe(true);
    // A rebuild that copies the registry's blocks from the previous pak compresses nothing.
    asked = 0;
    const again = await writePak(a, withShared, opts(a, undefined, first.tocHash));
    expect(asked).toBe(0);
    expect(again.reusedCompressed).toBeGreaterThan(0);
    expect(fs.readFileSync(a).equals(plain)).toBe(true);
  });
});
