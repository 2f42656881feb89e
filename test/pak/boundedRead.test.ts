/**
 * Reading paks in bounded memory: a small valid pak can hold an entry of many GiB (zeros deflate
 * about 800:1), so `pak cat` and `pak extract` must stream it block by block, and whole reads must
 * refuse it with a typed error. Limits are checked before anything is allocated, and a block must
 * be exactly one DEFLATE stream: junk after it is corruption that `verify` reports.
 *
 * Memory is measured in the real CLI child (its peak RSS, reported at exit), never by timing.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initHash } from '../../src/util/hash.js';
import { PakReader } from '../../pak/PakReader.js';
import { decodeCooked, encodeCooked, parseCookedHeader } from '../../src/format/cookedPackage.js';
import { BLOCK_SIZE } from '../../src/format/deflateBlocks.js';
import { REPO, TSX_LOADER } from '../helpers/runCli.js';
import { caught, tempDir } from './helpers.js';
import { writeRawPak, zerosEntry, type RawEntry } from './rawPak.js';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
/** Far above what streaming needs (node + tsx + 4 MiB windows), far below a whole-entry read. */
const RSS_BOUND = 512 * MiB;
const RSS_PRELOAD = pathToFileURL(path.join(REPO, 'test/helpers/reportMaxRss.mjs')).href;

let dir: string;
beforeAll(async () => {
  await initHash();
  dir = await tempDir('lc-bounded-');
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

interface Run {
  code: number;
  stderr: string;
  /** Bytes the child wrote to stdout (when piped). */
  stdoutBytes: number;
  maxRss: number;
}

/** Run the CLI; stdout is counted through a pipe, or sent to /dev/null (`devNull`). */
function runMeasured(args: string[], opts: { devNull?: boolean } = {}): Promise<Run> {
  const rssFile = path.join(dir, `rss-${process.hrtime.bigint()}`);
  return new Promise((resolve, reject) => {
    const nul = opts.devNull ? fs.openSync('/dev/null', 'w') : undefined;
    const child = spawn(process.execPath, ['--import', TSX_LOADER, '--import', RSS_PRELOAD, path.join(REPO, 'cli/main.ts'), ...args], {
      cwd: dir,
      env: { ...process.env, NO_COLOR: '1', LC_TEST_MAX_RSS_FILE: rssFile },
      stdio: ['ignore', nul ?? 'pipe', 'pipe'],
    });
    if (nul !== undefined) fs.closeSync(nul);
    let stdoutBytes = 0;
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdoutBytes += d.byteLength));
    child.stderr!.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const maxRss = fs.existsSync(rssFile) ? Number(fs.readFileSync(rssFile, 'utf8')) : NaN;
      resolve({ code: code ?? -1, stderr, stdoutBytes, maxRss });
    });
  });
}

describe('pak cat and extract stream by block', () => {
  it('cat streams a 2 GiB entry of zeros from a pak of a few MB with bounded RSS', async () => {
    const pak = path.join(dir, 'zeros2g.pak');
    await writeRawPak(pak, [zerosEntry('/Zeros.bin', 2 * GiB)]);
    expect((await fsp.stat(pak)).size).toBeLessThan(4 * MiB);
    const r = await runMeasured(['pak', 'cat', pak, '/Zeros.bin']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdoutBytes).toBe(2 * GiB);
    expect(r.maxRss).toBeLessThan(RSS_BOUND);
  }, 300_000);

  it('cat streams a 5 GiB entry (a whole read would not fit in one buffer) and exits 0', async () => {
    const pak = path.join(dir, 'zeros5g.pak');
    await writeRawPak(pak, [zerosEntry('/Big.bin', 5 * GiB + 12345)]);
    const r = await runMeasured(['pak', 'cat', pak, '/Big.bin'], { devNull: true });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.maxRss).toBeLessThan(RSS_BOUND);
    // A whole read refuses it with a typed error before allocating.
    const reader = await PakReader.open(pak);
    try {
      expect(await caught(() => reader.readEntry('/Big.bin'))).toMatchObject({
        code: 'PAK_ENTRY_TOO_LARGE',
        message: `entry "/Big.bin" is ${5 * GiB + 12345} bytes, more than the ${GiB} a whole read may hold`,
      });
      // So does a range read that asks for all of it; a small range deep inside reads fine.
      expect(await caught(() => reader.readRange('/Big.bin', 0, 5 * GiB))).toMatchObject({ code: 'PAK_ENTRY_TOO_LARGE' });
      expect(await reader.readRange('/Big.bin', 5 * GiB, 12345)).toEqual(new Uint8Array(12345));
    } finally {
      await reader.close();
    }
  }, 300_000);

  it('extract writes a 768 MiB entry to disk with bounded RSS, hash checked', async () => {
    const pak = path.join(dir, 'zeros768m.pak');
    await writeRawPak(pak, [zerosEntry('/Game/Zeros.bin', 768 * MiB + 7), zerosEntry('/Game/z.bin', 3)]);
    const out = path.join(dir, 'out768m');
    const r = await runMeasured(['pak', 'extract', pak, '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.maxRss).toBeLessThan(RSS_BOUND);
    expect((await fsp.stat(path.join(out, 'Game/Zeros.bin'))).size).toBe(768 * MiB + 7);
    expect(await fsp.readFile(path.join(out, 'Game/z.bin'))).toEqual(Buffer.alloc(3));
    await fsp.rm(out, { recursive: true });
  }, 300_000);
});

/** A one-entry pak whose single block is `stored` (claimed to inflate to `raw`). */
async function oneBlockPak(name: string, raw: Uint8Array, stored: Uint8Array): Promise<string> {
  const file = path.join(dir, name);
  const entry: RawEntry = { path: '/A.bin', rawSize: raw.byteLength, block: () => stored, raw: () => raw };
  await writeRawPak(file, [entry]);
  return file;
}

describe('limits before allocation, and exact DEFLATE blocks', () => {
  const raw = new Uint8Array(1000).map((_, i) => i % 251);
  const deflated = new Uint8Array(zlib.deflateRawSync(raw));

  it('verify rejects junk after a DEFLATE stream, naming the entry and the offset', async () => {
    const junk = new Uint8Array([...deflated, 0x4a, 0x55, 0x4e, 0x4b]);
    const pak = await oneBlockPak('junk.pak', raw, junk);
    const reader = await PakReader.open(pak);
    expect(await caught(() => reader.verify())).toMatchObject({
      code: 'PAK_ENTRY_CORRUPT',
      message: 'entry "/A.bin" block[0] has 4 bytes of junk after its DEFLATE stream ends',
      offset: 32 + deflated.byteLength,
    });
    // Reads refuse it too, and so does the CLI (exit 1, no stack).
    await expect(reader.readEntry('/A.bin')).rejects.toMatchObject({ code: 'PAK_ENTRY_CORRUPT' });
    await reader.close();
    const cli = await runMeasured(['pak', 'verify', pak]);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/^error \[PAK_ENTRY_CORRUPT\] .*junk\.pak @\d+ \(path\): entry "\/A\.bin" block\[0\] has 4 bytes of junk/);
    expect(cli.stderr).not.toMatch(/\n\s+at /);
  });

  it('accepts the same block without the junk', async () => {
    const pak = await oneBlockPak('clean.pak', raw, deflated);
    const reader = await PakReader.open(pak);
    expect(await reader.verify()).toMatchObject({ entries: 1, rawBytes: 1000 });
    await reader.close();
  });

  it('refuses a TOC block size larger than any real encoder writes, at open', async () => {
    // 100 KiB of valid padding would still inflate fine: the bound, not the inflater, must stop it.
    const huge = new Uint8Array(100 * 1024);
    huge.set(deflated);
    const pak = await oneBlockPak('hugeblock.pak', raw, huge);
    expect(await caught(() => PakReader.open(pak))).toMatchObject({
      code: 'PAK_INVALID',
      field: 'entries[0].blockSizes[0]',
      message: `entries[0].blockSizes[0]: ${100 * 1024} bytes is more than a block of 1000 raw bytes can take (1189)`,
    });
  });

  it('refuses to decode an LCKD that claims more than a whole decode may hold, before allocating', async () => {
    // 17,000 blocks of 64 KiB of zeros: ~1.3 MB on disk, 1.06 GiB raw.
    const count = 17_000;
    const zeros = new Uint8Array(zlib.deflateRawSync(new Uint8Array(BLOCK_SIZE)));
    const head = Buffer.alloc(33 + 4 * count);
    head.write('LCKD', 0, 'latin1');
    head.writeUInt32LE(1, 4);
    head.writeBigUInt64LE(BigInt(count * BLOCK_SIZE), 8);
    head.writeUInt8(1, 24);
    head.writeUInt32LE(BLOCK_SIZE, 25);
    head.writeUInt32LE(count, 29);
    for (let i = 0; i < count; i++) head.writeUInt32LE(zeros.byteLength, 33 + 4 * i);
    const file = Buffer.concat([head, ...Array.from({ length: count }, () => zeros)]);
    expect(await caught(() => decodeCooked(file, 'big.lasset'))).toMatchObject({
      code: 'COOKED_INVALID',
      field: 'rawSize',
      message: `rawSize: ${count * BLOCK_SIZE} bytes is more than a whole decode may hold (${GiB})`,
    });
  });

  it('refuses an LCKD block size beyond the bound before reading the blocks', async () => {
    const lckd = await encodeCooked(new Uint8Array(3 * BLOCK_SIZE).map((_, i) => (i * 7) % 13));
    const b = Buffer.from(lckd);
    const bloated = Buffer.concat([b.subarray(0, 45), Buffer.alloc(200_000), b.subarray(45)]);
    bloated.writeUInt32LE(b.readUInt32LE(33) + 200_000, 33);
    expect(() => parseCookedHeader(bloated, 'x.lasset')).toThrow(
      expect.objectContaining({ code: 'COOKED_INVALID', field: 'blockSizes[0]' }),
    );
  });
});
