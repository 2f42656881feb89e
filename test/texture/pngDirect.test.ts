/**
 * 8-bit PNGs go to basisu as they are (it reads them itself), requested before our decode of
 * them: the KTX2 must be byte-identical to encoding our decode (the TGA path), a burst must reach
 * the encoders at once, and a PNG basisu fails on, or one our decoder rejects, must end as it
 * did before: cooked from our decode, or IMAGE_INVALID naming the asset.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deflateSync, inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { findBasisu } from '../../cook/texture/basisu.js';
import { checkPngWellFormed, decodePngWithPngjs } from '../../cook/texture/decodePngWithPngjs.js';
import { basisuReadsPng } from '../../cook/texture/encodeTexture.js';
import { readImageHeader } from '../../cook/texture/imageHeader.js';
import { cookTexture, decodeImage, encodeTexture, resolveTextureEncoding, type TextureSettings } from '../../cook/texture/index.js';
import { greyMask, leafCutout, noiseAlbedo, normalMap, paletteChecker, planksAlbedo } from '../../samples/generate/images.js';
import { crc32, encodePng, pngChunk } from '../../samples/generate/png.js';
import { Random } from '../../samples/generate/random.js';
import { PNGSUITE_DIR, rejection, scriptFolder, withCrcFixed } from './helpers.js';

const REAL = findBasisu().path;
const ALBEDO: TextureSettings = { srgb: true, generateMips: true, compression: 'ETextureCompression::Default' };
const NORMAL: TextureSettings = { srgb: false, generateMips: true, compression: 'ETextureCompression::Normalmap' };
const MASK: TextureSettings = { srgb: false, generateMips: false, compression: 'ETextureCompression::Masks' };

const scripts = scriptFolder('lumina-pngdirect-');
const script = scripts.script;

/** What the cook wrote before PNGs went to basisu directly: our decode, encoded through a TGA. */
async function viaOurDecode(png: Uint8Array, settings: TextureSettings, file: string): Promise<Uint8Array> {
  const image = await decodeImage(png, file);
  const enc = resolveTextureEncoding(settings, file);
  return (await encodeTexture(image, { ...enc, generateMips: settings.generateMips, file })).platformData;
}

describe('the well-formedness check before a PNG is given to basisu', () => {
  /** Throws exactly where our own strict decode (pngjs around one strict inflate) throws. */
  function agrees(png: Uint8Array, what: string): void {
    try {
      readImageHeader(png, 'x.png');
    } catch {
      return; // never reaches the check
    }
    if (!basisuReadsPng(png)) return;
    let checked = 'ok';
    let decoded = 'ok';
    try {
      checkPngWellFormed(png);
    } catch (e) {
      checked = `throws (${(e as Error).message})`;
    }
    try {
      decodePngWithPngjs(png, { direct: false });
    } catch (e) {
      decoded = `throws (${(e as Error).message})`;
    }
    expect(checked.startsWith('throws'), `${what}: check ${checked}, decode ${decoded}`).toBe(decoded.startsWith('throws'));
  }

  it('fails exactly where our strict decode fails: every byte changed (with and without its CRC fixed), cut short, or followed by more', () => {
    const pngs: Array<[string, Uint8Array]> = ['basn0g08', 'basn2c08', 'basn4a08', 'basn6a08', 'bgan6a08', 'basn3p08'].map((n) => [n, new Uint8Array(fs.readFileSync(path.join(PNGSUITE_DIR, 'png', `${n}.png`)))]);
    const generated = encodePng(noiseAlbedo(16, new Random(3), [40, 30, 20], [200, 170, 140], 3));
    pngs.push(['generated-16', generated]);
    // A gAMA chunk too short for its value (pngjs fails on it, with its CRC right), and a whole one.
    const idatAt = Buffer.from(generated).indexOf('IDAT') - 4;
    for (const gama of [Uint8Array.of(0, 1), Uint8Array.of(0, 0, 0xb1, 0x8f)]) {
      const png = new Uint8Array(Buffer.concat([generated.subarray(0, idatAt), pngChunk('gAMA', gama), generated.subarray(idatAt)]));
      pngs.push([`gAMA of ${gama.length} bytes`, png]);
    }
    for (const [name, png] of pngs) {
      agrees(png, name);
      for (let at = 8; at < png.length; at++) {
        for (const x of [0x01, 0x80, 0xff]) {
          const bad = new Uint8Array(png);
          bad[at] ^= x;
          agrees(bad, `${name} byte ${at} ^ ${x}`);
          agrees(withCrcFixed(bad, at), `${name} byte ${at} ^ ${x}, CRC fixed`);
        }
      }
      for (let n = png.length - 20; n < png.length; n++) agrees(png.subarray(0, n), `${name} cut to ${n} bytes`);
      agrees(new Uint8Array([...png, 0]), `${name} and one more byte`);
    }
  });
});

describe.skipIf(REAL === null)('PNGs basisu reads itself', () => {
  it('which PNGs: 8 bits a sample, not interlaced, no colour profile or grey/RGB colour key, well-formed', () => {
    const suite = (name: string) => new Uint8Array(fs.readFileSync(path.join(PNGSUITE_DIR, 'png', `${name}.png`)));
    for (const name of ['basn0g08', 'basn2c08', 'basn3p08', 'basn4a08', 'basn6a08', 'tbbn3p08']) expect(basisuReadsPng(suite(name))).toBe(true);
    // 16-bit, low-depth grey, an RGB colour key, interlaced: our decode goes to basisu instead.
    // (Whether one is well-formed is checked when it is handed to basisu: see the last two tests.)
    for (const name of ['basn6a16', 'basn0g04', 'tbrn2c08', 'basi6a08']) expect(basisuReadsPng(suite(name))).toBe(false);
  });

  it('the KTX2 is byte-identical to encoding our decode, for every colour type, size, format and PngSuite 8-bit image', async () => {
    const rnd = new Random(7);
    const cases: Array<{ name: string; png: Uint8Array; settings: TextureSettings }> = [
      { name: 'noise-rgb-16', png: encodePng(noiseAlbedo(16, rnd, [40, 30, 20], [200, 170, 140], 3)), settings: ALBEDO },
      { name: 'planks-rgb-64', png: encodePng(planksAlbedo(64, rnd, 4)), settings: ALBEDO },
      { name: 'leaf-rgba-48x48', png: encodePng(leafCutout(48, rnd)), settings: ALBEDO },
      { name: 'normal-rgb-32', png: encodePng(normalMap(32, rnd, 2, 3)), settings: NORMAL },
      { name: 'mask-grey-40', png: encodePng(greyMask(40, rnd, 3)), settings: MASK },
      { name: 'palette-24', png: encodePng(paletteChecker(24, [[255, 0, 0], [0, 128, 255], [20, 200, 40]])), settings: ALBEDO },
      { name: 'noise-rgb-200', png: encodePng(noiseAlbedo(200, rnd, [10, 60, 20], [90, 220, 120], 5)), settings: ALBEDO },
    ];
    for (const name of ['basn0g08', 'basn2c08', 'basn3p08', 'basn4a08', 'basn6a08', 'tbbn3p08', 'bgan6a08']) {
      const png = new Uint8Array(fs.readFileSync(path.join(PNGSUITE_DIR, 'png', `${name}.png`)));
      cases.push({ name, png, settings: ALBEDO }, { name: `${name}-uastc`, png, settings: MASK });
    }
    const cooked = await Promise.all(cases.map((c) => cookTexture(c.png, `Content/${c.name}.lasset`, c.settings)));
    for (const [i, c] of cases.entries()) {
      expect(basisuReadsPng(c.png), c.name).toBe(true);
      expect(cooked[i].format, c.name).toBe(resolveTextureEncoding(c.settings, c.name).format);
      const expected = await viaOurDecode(c.png, c.settings, `Content/${c.name}.lasset`);
      expect(Buffer.from(cooked[i].platformData).equals(Buffer.from(expected)), c.name).toBe(true);
    }
  });

  it('a burst of PNGs is split over the encoders at once: one process per core, not first what the first turn decoded', async () => {
    // Before, each texture went to the encoder only once decoded, 20 ms of decoding a turn: the
    // first runs held a few textures each and more processes followed.
    const log = path.join(scripts.dir(), 'burst.log');
    const exe = script('logging-basisu', `inputs=0\nfor a in "$@"; do case "$a" in *.tga|*.png) inputs=$((inputs + 1));; esac; done\necho "$inputs" >> '${log}'\nexec '${REAL}' "$@"`);
    const n = 300;
    const pngs = Array.from({ length: n }, (_, i) => encodePng(noiseAlbedo(64, new Random(i + 1), [40, 30, 20], [200, 170, 140], 4)));
    const out = await Promise.all(pngs.map((png, i) => cookTexture(png, `Content/T_${i}.lasset`, ALBEDO, { basisu: exe })));
    expect(out.every((t) => t.format === 'KTX2_ETC1S' && t.mipCount === 7)).toBe(true);
    const runs = fs.readFileSync(log, 'utf8').trim().split('\n').map(Number);
    expect(runs).toEqual(Array(os.availableParallelism()).fill(n / os.availableParallelism()));
  });

  it('a PNG basisu fails on is cooked from our decode instead, with the same bytes', async () => {
    // Refuses PNG inputs; encodes our TGAs.
    const exe = script('no-png-basisu', `for a in "$@"; do case "$a" in *.png) echo "cannot read $a"; exit 1;; esac; done\nexec '${REAL}' "$@"`);
    const png = encodePng(noiseAlbedo(32, new Random(3), [40, 30, 20], [200, 170, 140], 3));
    const out = await cookTexture(png, 'Content/T_NoPng.lasset', ALBEDO, { basisu: exe });
    expect(out.format).toBe('KTX2_ETC1S');
    expect(Buffer.from(out.platformData).equals(Buffer.from(await viaOurDecode(png, ALBEDO, 'Content/T_NoPng.lasset')))).toBe(true);
  });

  it('a PNG whose image data is corrupt is not given to basisu: IMAGE_INVALID naming the asset, from our decode', async () => {
    const png = encodePng(noiseAlbedo(32, new Random(4), [40, 30, 20], [200, 170, 140], 3));
    // Break the zlib stream inside IDAT and fix up the chunk's CRC, so only the data is wrong.
    const bad = new Uint8Array(png);
    const at = Buffer.from(bad).indexOf('IDAT');
    const length = new DataView(bad.buffer).getUint32(at - 4);
    bad.fill(0xff, at + 6, at + 4 + Math.min(length, 40));
    new DataView(bad.buffer).setUint32(at + 4 + length, crc32(bad.subarray(at, at + 4 + length)));
    const log = path.join(scripts.dir(), 'corrupt.log');
    const exe = script('corrupt-basisu', `echo "$@" >> '${log}'\nexec '${REAL}' "$@"`);
    const e = await rejection(cookTexture(bad, 'Content/T_Corrupt.lasset', ALBEDO, { basisu: exe }));
    expect(fs.existsSync(log)).toBe(false);
    expect({ code: e.code, file: e.file }).toEqual({ code: 'IMAGE_INVALID', file: 'Content/T_Corrupt.lasset' });
  });

  it('a PNG with more image data than its size needs (libpng reads it, basisu crashes on it) is cooked from our decode, as before', async () => {
    const png = Buffer.from(encodePng(noiseAlbedo(32, new Random(5), [40, 30, 20], [200, 170, 140], 3)));
    const at = png.indexOf('IDAT');
    const length = png.readUInt32BE(at - 4);
    const data = deflateSync(Buffer.concat([inflateSync(png.subarray(at + 4, at + 4 + length)), Buffer.alloc(100)]));
    const idat = Buffer.concat([Buffer.alloc(4), Buffer.from('IDAT'), data, Buffer.alloc(4)]);
    idat.writeUInt32BE(data.length, 0);
    idat.writeUInt32BE(crc32(idat.subarray(4, 8 + data.length)), 8 + data.length);
    const extra = new Uint8Array(Buffer.concat([png.subarray(0, at - 4), idat, png.subarray(at + 8 + length)]));
    const log = path.join(scripts.dir(), 'extra.log');
    const exe = script('extra-basisu', `echo "$@" >> '${log}'\nexec '${REAL}' "$@"`);
    const out = await cookTexture(extra, 'Content/T_Extra.lasset', ALBEDO, { basisu: exe });
    expect(fs.readFileSync(log, 'utf8')).not.toContain('.png');
    expect(Buffer.from(out.platformData).equals(Buffer.from(await viaOurDecode(extra, ALBEDO, 'Content/T_Extra.lasset')))).toBe(true);
  });
});
