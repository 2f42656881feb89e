/**
 * The basisu batcher on the real encoder: many textures share few processes and come out
 * byte-identical to encoding each alone; an encoder that hangs (a real program: a shell script
 * standing in for basisu) is killed with everything it started, each texture of the failed run is
 * retried alone once, and a second failure is COOK_FAILED naming that texture's asset.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { read } from 'ktx-parse';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { BasisuBatcher } from '../../cook/texture/BasisuBatcher.js';
import { DEFAULT_BASISU_SETTINGS, findBasisu } from '../../cook/texture/basisu.js';
import { cookTexture, encodeTexture, type MipLevel } from '../../cook/texture/index.js';
import { noiseAlbedo } from '../../samples/generate/images.js';
import { encodePng, pngChunk, type PngImage } from '../../samples/generate/png.js';
import { Random } from '../../samples/generate/random.js';
import { Semaphore } from '../../src/util/semaphore.js';
import { processGone, readPids, waitFor } from '../helpers/processes.js';
import { rejection, scriptFolder } from './helpers.js';

const REAL = findBasisu().path;
const ETC1S = { format: 'KTX2_ETC1S', srgb: true, normalMap: false, generateMips: true } as const;

/** A deterministic noisy gradient, different for each `seed`. */
function image(size: number, seed: number): MipLevel {
  const data = new Uint8Array(size * size * 4);
  let s = seed * 2654435761;
  for (let i = 0; i < data.length; i += 4) {
    s = (s * 1103515245 + 12345) >>> 0;
    const x = (i / 4) % size;
    const y = Math.floor(i / 4 / size);
    data[i] = (x * 255) / size;
    data[i + 1] = (y * 255) / size;
    data[i + 2] = (seed * 37 + (s >>> 27)) & 255;
    data[i + 3] = 255;
  }
  return { width: size, height: size, data };
}

/** The same pixels as a 16-bit RGBA PNG (each sample v stored as v * 257, so v >> 8 reads back v). */
function png16(img: PngImage): Uint8Array {
  const rgba = decodeRgba(img);
  const row = 1 + img.width * 8;
  const raw = new Uint8Array(row * img.height);
  for (let y = 0; y < img.height; y++) {
    for (let i = 0; i < img.width * 4; i++) {
      raw[y * row + 1 + i * 2] = rgba[(y * img.width) * 4 + i];
      raw[y * row + 2 + i * 2] = rgba[(y * img.width) * 4 + i];
    }
  }
  const ihdr = new Uint8Array(13);
  new DataView(ihdr.buffer).setUint32(0, img.width);
  new DataView(ihdr.buffer).setUint32(4, img.height);
  ihdr.set([16, 6, 0, 0, 0], 8);
  const sig = Uint8Array.of(137, 80, 78, 71, 13, 10, 26, 10);
  return Buffer.concat([sig, pngChunk('IHDR', ihdr), pngChunk('IDAT', deflateSync(raw)), pngChunk('IEND', new Uint8Array(0))]);
}

/** RGBA8 of a generated image, through the 8-bit PNG and pngjs. */
function decodeRgba(img: PngImage): Uint8Array {
  return new Uint8Array(PNG.sync.read(Buffer.from(encodePng(img))).data);
}

const scripts = scriptFolder('lumina-batcher-');
const script = scripts.script;

/** Shell lines that set $inputs to the number of input files (.tga, our decode; .png, the source) among the arguments. */
const COUNT_INPUTS = 'inputs=0\nfor a in "$@"; do case "$a" in *.tga|*.png) inputs=$((inputs + 1));; esac; done';

/** Logs each run (one line: its input count) to `log`, then runs the real basisu. */
function loggingEncoder(name: string, log: string): string {
  return script(name, `${COUNT_INPUTS}\necho "$inputs" >> '${log}'\nexec '${REAL}' "$@"`);
}

/**
 * Hangs like the basisu of issue 10 (a futex wait at 0% CPU), with a helper process of its own
 * so the test sees the whole group die. Records both pids in `pids`. With `onlyFirst`, only the
 * first run hangs (a marker file) and later runs are the real encoder.
 */
function hangingEncoder(name: string, pids: string, onlyFirst: boolean): string {
  const marker = path.join(scripts.dir(), `${name}.hung`);
  const real = onlyFirst ? `if [ -e '${marker}' ]; then exec '${REAL}' "$@"; fi\ntouch '${marker}'\n` : '';
  return script(name, `${real}echo $$ >> '${pids}'\nsleep 3000 &\necho $! >> '${pids}'\nwait`);
}

describe.skipIf(REAL === null)('BasisuBatcher on the real basisu', () => {
  it('runs many textures in few processes, each byte-identical to encoding it alone', async () => {
    const log = path.join(scripts.dir(), 'batch.log');
    const batcher = new BasisuBatcher(loggingEncoder('logging-basisu', log), { ...DEFAULT_BASISU_SETTINGS, timeoutMs: 600_000, slots: new Semaphore(2) });
    const images = Array.from({ length: 24 }, (_, i) => image(32, i));
    const out = await Promise.all(images.map((img, i) => batcher.encode(img, ETC1S, `Content/T_${i}.lasset`)));
    const runs = fs.readFileSync(log, 'utf8').trim().split('\n').map(Number);
    // Requested together: split evenly over the two runners, one process each.
    expect(runs).toEqual([12, 12]);
    for (const bytes of out) expect(read(bytes).levels.length).toBe(6);
    // Alone, through a fresh batcher and the plain encoder.
    const alone = new BasisuBatcher(REAL!, { ...DEFAULT_BASISU_SETTINGS, timeoutMs: 600_000 });
    for (const i of [0, 7, 23]) {
      const solo = await alone.encode(images[i], ETC1S, `Content/T_${i}.lasset`);
      expect(Buffer.from(solo).equals(Buffer.from(out[i]))).toBe(true);
    }
  });

  it('requests made together are split within each flag set over the runners, biggest set first, whatever the sets measured speeds', async () => {
    // Splitting all the work at once by each set's measured speed (UASTC vs ETC1S) sent a whole
    // set to one runner: under load those speeds are noise, and one core idled at the end.
    const log = path.join(scripts.dir(), 'groups.log');
    const exe = script('groups-basisu', `${COUNT_INPUTS}\ng=etc1s; case "$*" in *-uastc*) g=uastc;; esac\necho "$g $inputs" >> '${log}'\nexec '${REAL}' "$@"`);
    const batcher = new BasisuBatcher(exe, { ...DEFAULT_BASISU_SETTINGS, timeoutMs: 600_000, slots: new Semaphore(2) });
    const UASTC = { format: 'KTX2_UASTC', srgb: false, normalMap: false, generateMips: true } as const;
    await Promise.all([
      ...Array.from({ length: 40 }, (_, i) => batcher.encode(image(32, i), ETC1S, `Content/E_${i}.lasset`)),
      ...Array.from({ length: 40 }, (_, i) => batcher.encode(image(32, 100 + i), UASTC, `Content/U_${i}.lasset`)),
    ]);
    // Sorted: the runs' log lines race each other (they are written by the processes).
    const runs = fs.readFileSync(log, 'utf8').trim().split('\n').sort();
    expect(runs).toEqual(['etc1s 20', 'etc1s 20', 'uastc 20', 'uastc 20']);
  });

  it('a stall between handing out two batches (a loaded machine) does not change the even split', async () => {
    // The first batch's estimated work (24 small textures: ~26 ms) is shorter than the stall, so
    // a split that read the clock per batch saw it as done and gave the second runner half its share.
    class StallingSlots extends Semaphore {
      override acquire(n: number): Promise<number> {
        const until = performance.now() + 60;
        while (performance.now() < until) {
          // a synchronous stall, as a descheduled thread or a long GC
        }
        return super.acquire(n);
      }
    }
    const log = path.join(scripts.dir(), 'stall.log');
    const batcher = new BasisuBatcher(loggingEncoder('stall-basisu', log), { ...DEFAULT_BASISU_SETTINGS, timeoutMs: 600_000, slots: new StallingSlots(2) });
    const images = Array.from({ length: 24 }, (_, i) => image(32, i));
    await Promise.all(images.map((img, i) => batcher.encode(img, ETC1S, `Content/T_${i}.lasset`)));
    expect(fs.readFileSync(log, 'utf8').trim().split('\n').map(Number)).toEqual([12, 12]);
  });

  it('a burst of textures: encoding starts on the first decoded, not after the last', async () => {
    // Decoding is synchronous: 300 PNGs of 64x64 take far longer than one turn of the event loop
    // the cook lets decoding take (20 ms), so the first runs must hold only what the first turns
    // decoded. Before, all 300 decoded in one turn and the first two runs split all of them.
    // 16-bit PNGs: basisu is given our decode of them (8-bit ones it reads itself, undecoded).
    const log = path.join(scripts.dir(), 'burst.log');
    const exe = loggingEncoder('burst-basisu', log);
    const n = 300;
    const pngs = Array.from({ length: n }, (_, i) => png16(noiseAlbedo(64, new Random(i + 1), [40, 30, 20], [200, 170, 140], 4)));
    const settings = { srgb: true, generateMips: true, compression: 'ETextureCompression::Default' };
    const out = await Promise.all(pngs.map((png, i) => cookTexture(png, `Content/T_${i}.lasset`, settings, { basisu: exe })));
    expect(out.every((t) => t.format === 'KTX2_ETC1S' && t.mipCount === 7)).toBe(true);
    const runs = fs.readFileSync(log, 'utf8').trim().split('\n').map(Number);
    expect(runs.reduce((a, b) => a + b, 0)).toBe(n);
    expect(runs[0]).toBeLessThan(n / 2);
  });

  it('an encoder that hangs once: killed with its helper, each texture retried alone, all succeed', async () => {
    const pids = path.join(scripts.dir(), 'once.pids');
    const batcher = new BasisuBatcher(hangingEncoder('hang-once', pids, true), { ...DEFAULT_BASISU_SETTINGS, timeoutMs: 1500, slots: new Semaphore(1) });
    const images = [image(16, 1), image(16, 2), image(16, 3)];
    const out = await Promise.all(images.map((img, i) => batcher.encode(img, ETC1S, `Content/T_${i}.lasset`)));
    for (const bytes of out) expect(read(bytes).pixelWidth).toBe(16);
    const hung = readPids(pids);
    expect(hung).toHaveLength(2);
    await waitFor(() => hung.every(processGone), 'the hung encoder and its helper to be gone', 10_000);
  });

  it('an encoder that always hangs: each texture fails after one retry, naming its asset', async () => {
    const pids = path.join(scripts.dir(), 'always.pids');
    const exe = hangingEncoder('hang-always', pids, false);
    const files = ['Content/Textures/T_A.lasset', 'Content/Textures/T_B.lasset'];
    const results = await Promise.allSettled(
      files.map((file, i) => encodeTexture(image(16, i), { ...ETC1S, file, basisu: exe, timeoutMs: 1000 })),
    );
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    const errs = results.map((r) => (r as PromiseRejectedResult).reason as { code: string; file: string; message: string });
    expect(errs.map(({ code, file, message }) => ({ code, file, message }))).toEqual(
      files.map((file) => ({ code: 'COOK_FAILED', file, message: 'basisu timed out after 1 s and was killed (retried once)' })),
    );
    // The batch, then one run alone per texture: three runs, each with its helper, all gone.
    const hung = readPids(pids);
    expect(hung.length).toBeGreaterThanOrEqual(4);
    await waitFor(() => hung.every(processGone), 'every hung encoder and helper to be gone', 10_000);
  });

  it('an encoder that cannot start falls back to RGBA8 and says why', async () => {
    const notExecutable = path.join(scripts.dir(), 'not-executable');
    fs.writeFileSync(notExecutable, 'not a program', { mode: 0o644 });
    const out = await encodeTexture(image(8, 1), { ...ETC1S, generateMips: false, file: 'Content/T.lasset', basisu: notExecutable });
    expect({ format: out.format, mipCount: out.mipCount }).toEqual({ format: 'RGBA8', mipCount: 1 });
    expect(out.fallbackReason).toBe(`basisu could not start: spawn ${notExecutable} EACCES`);
  });

  it('a failed encoder run fails only its own textures: batch-mates are retried alone and succeed', async () => {
    // Exits 1 whenever its run holds more than one input: every batch fails, every solo run works.
    const exe = script('fails-batches', `${COUNT_INPUTS}\nif [ "$inputs" -gt 1 ]; then echo batch refused; exit 1; fi\nexec '${REAL}' "$@"`);
    const batcher = new BasisuBatcher(exe, { ...DEFAULT_BASISU_SETTINGS, timeoutMs: 600_000, slots: new Semaphore(1) });
    const out = await Promise.all([1, 2, 3, 4].map((i) => batcher.encode(image(16, i), ETC1S, `Content/T_${i}.lasset`)));
    expect(out.map((b) => read(b).pixelWidth)).toEqual([16, 16, 16, 16]);
  });

  it('a KTX2 cut short or of another size than asked is TEXTURE_INVALID naming the asset', async () => {
    // Stand-ins that run the real encoder, then spoil what it wrote (cwd is the work folder).
    const cut = script('cuts-output', `'${REAL}' "$@" || exit $?\nfor f in *.ktx2; do head -c 150 "$f" > "$f.cut" && mv "$f.cut" "$f"; done`);
    const e1 = await rejection(encodeTexture(image(16, 1), { ...ETC1S, file: 'Content/T_Cut.lasset', basisu: cut }));
    expect({ code: e1.code, file: e1.file, message: e1.message }).toEqual({
      code: 'TEXTURE_INVALID',
      file: 'Content/T_Cut.lasset',
      message: 'basisu wrote an unreadable KTX2: its level index (120 bytes at 80) runs past the end of the file (150 bytes)',
    });
    const resized = script('resizes-output', `exec '${REAL}' "$@" -resample 8 8`);
    const e2 = await rejection(encodeTexture(image(16, 2), { ...ETC1S, file: 'Content/T_Resized.lasset', basisu: resized }));
    expect({ code: e2.code, file: e2.file, message: e2.message }).toEqual({
      code: 'TEXTURE_INVALID',
      file: 'Content/T_Resized.lasset',
      message: 'basisu wrote 8x8 with 4 levels; expected 16x16 with 5',
    });
    // Its level data cut off (the index whole): found too.
    const tail = script('cuts-tail', `'${REAL}' "$@" || exit $?\nfor f in *.ktx2; do s=$(wc -c < "$f"); head -c $((s - 1)) "$f" > "$f.cut" && mv "$f.cut" "$f"; done`);
    const e3 = await rejection(encodeTexture(image(16, 3), { ...ETC1S, file: 'Content/T_Tail.lasset', basisu: tail }));
    expect({ code: e3.code, file: e3.file }).toEqual({ code: 'TEXTURE_INVALID', file: 'Content/T_Tail.lasset' });
    expect(e3.message).toMatch(/^basisu wrote an unreadable KTX2: its (level \d|supercompression data) \(\d+ bytes at \d+\) runs past the end of the file \(\d+ bytes\)$/);
  });

  it('COOK_FAILED after a crash names the exit and the tool output', async () => {
    const exe = script('crashes', 'echo "ERROR: out of memory"; exit 7');
    const e = await rejection(encodeTexture(image(8, 1), { ...ETC1S, file: 'Content/T_Crash.lasset', basisu: exe }));
    expect({ code: e.code, file: e.file, message: e.message }).toEqual({
      code: 'COOK_FAILED',
      file: 'Content/T_Crash.lasset',
      message: 'basisu exited with 7: ERROR: out of memory (retried once)',
    });
  });
});

describe.skipIf(REAL === null || process.platform !== 'linux')('encoder temp folders', () => {
  it('a temp folder a killed process left is swept by the next process that encodes', async () => {
    const { spawnSync, spawn } = await import('node:child_process');
    // A pid that is certainly gone: a process that has exited.
    const gone = spawnSync('true').pid!;
    const root = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
    const stale = path.join(root, `lumina-basisu-${gone}-test`);
    fs.mkdirSync(stale, { recursive: true });
    fs.writeFileSync(path.join(stale, '0.tga'), 'left by a kill -9');
    const { REPO, TSX_LOADER } = await import('../helpers/runCli.js');
    const { pathToFileURL } = await import('node:url');
    const script = path.join(scripts.dir(), 'encode-once.mjs');
    fs.writeFileSync(
      script,
      `import { encodeTexture } from ${JSON.stringify(pathToFileURL(path.join(REPO, 'cook/texture/index.ts')).href)};
await encodeTexture({ width: 4, height: 4, data: new Uint8Array(64).fill(200) }, { format: 'KTX2_ETC1S', srgb: true, normalMap: false, generateMips: false, file: 'T.lasset' });
`,
    );
    const code = await new Promise<number | null>((resolve) => spawn(process.execPath, ['--import', TSX_LOADER, script], { stdio: 'ignore' }).on('close', resolve));
    expect(code).toBe(0);
    expect(fs.existsSync(stale)).toBe(false);
  });
});
