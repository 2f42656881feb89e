/**
 * The whole texture normalization for one asset: `SourceData` bytes + settings → the fields a
 * cooked texture export carries in place of `SourceData` (Width, Height, MipCount, Format,
 * PlatformData). Pure over bytes: reading and writing the package is the caller's job.
 */
import { EncoderUnavailableError, PngInputFailedError } from './BasisuBatcher.js';
import { decodeImage } from './decodeImage.js';
import { basisuReadsPng, encodePngDirect, encodeTexture } from './encodeTexture.js';
import type { EncodeOptions } from './encodeTexture.js';
import { readImageHeader } from './imageHeader.js';
import { textureMemoryBudget, textureMemoryEstimate, withTextureMemory } from './textureMemory.js';
import { resolveTextureEncoding } from './textureSettings.js';
import type { TextureFormat, TextureSettings } from './textureSettings.js';

/**
 * Decode at most this long in one turn of the event loop before letting it run. The first turn
 * of a burst decides the first batches (what it decoded, split over the runners): long enough
 * that they are worth their process starts, short enough that the cores do not wait long.
 */
const SLICE_MS = 20;
let sliceStart = -1;
let nextTurn: Promise<void> | undefined;

/**
 * Decoding is synchronous: textures requested together (a cook's burst of hundreds) would decode
 * all in one turn of the event loop, so the encoder could neither start on the first of them nor be
 * seen to finish until the last was decoded, leaving a core idle. Give the loop a turn every
 * SLICE_MS of decoding. Returns what to wait for before decoding, or undefined to decode now;
 * all that wait share one promise (one timer a turn, not one per texture).
 */
function loopTurn(): Promise<void> | undefined {
  const now = performance.now();
  if (sliceStart < 0) {
    sliceStart = now;
    setImmediate(() => {
      sliceStart = -1;
    });
    return undefined;
  }
  if (now - sliceStart < SLICE_MS) return undefined;
  nextTurn ??= new Promise((resolve) =>
    setImmediate(() => {
      nextTurn = undefined;
      sliceStart = -1;
      resolve();
    }),
  );
  return nextTurn;
}

export interface CookedTexture {
  width: number;
  height: number;
  mipCount: number;
  format: TextureFormat;
  platformData: Uint8Array;
  /** Set when a KTX2 format was asked for but no encoder ran, so RGBA8 was written. */
  fallbackReason?: string;
}

export interface CookTextureOptions extends Pick<EncodeOptions, 'basisu' | 'etc1sQuality' | 'etc1sEffort' | 'uastcLevel' | 'timeoutMs'> {
  /** Largest width or height (config `textures.maxSize`), checked from the header before decoding. */
  maxSize?: number;
  /** Memory all textures in flight may take, in MiB (config `textures.maxMemoryMiB`). */
  maxMemoryMiB?: number;
}

/**
 * Decode, check, mip and compress one texture source. The header is read first: its size is
 * checked against `maxSize`, and the memory the cook will need is taken from the shared budget
 * (waiting while other textures hold it) before any pixel is decoded.
 * Throws IMAGE_INVALID (bad or corrupt source), IMAGE_TOO_LARGE (above `maxSize`, or needing
 * more memory than the whole budget), TEXTURE_INVALID (unknown Compression, wrong RGBA8 length,
 * bad encoder output) or COOK_FAILED (the encoder failed twice), each naming `file`.
 */
export async function cookTexture(
  sourceData: Uint8Array,
  file: string,
  settings: TextureSettings,
  options: CookTextureOptions = {},
): Promise<CookedTexture> {
  const encoding = resolveTextureEncoding(settings, file);
  const header = readImageHeader(sourceData, file, options.maxSize);
  // Budgeted for the format asked for: a fallback to RGBA8 needs no more than the KTX2 path.
  const bytes = Math.max(
    textureMemoryEstimate(header.width, header.height, encoding.format, settings.generateMips),
    encoding.format === 'RGBA8' ? 0 : textureMemoryEstimate(header.width, header.height, 'RGBA8', settings.generateMips),
  );
  const what = `${header.source.toUpperCase()} is ${header.width}x${header.height} pixels`;
  const encoded = await withTextureMemory(textureMemoryBudget(options.maxMemoryMiB), bytes, file, what, async () => {
    // Object.assign onto a fresh object, not `{ ...options, ...encoding, generateMips, file }`: in V8
    // 11.3 a literal that starts with a spread and adds keys gets a hidden class of its own per call.
    const encodeOptions: EncodeOptions = Object.assign({}, options, encoding, { generateMips: settings.generateMips, file });
    // A well-formed 8-bit PNG goes to basisu as it is, undecoded: basisu reads it to the same
    // pixels as decodeImage (see basisuReadsPng), so a burst of textures is all queued in its
    // first turn and split over the encoders at once, as basisu's own command line would be given
    // them, and no encoder waits for decoding. If basisu fails on it, it is decoded after all.
    const direct = header.source === 'png' && encoding.format !== 'RGBA8' && basisuReadsPng(sourceData) ? encodePngDirect(sourceData, header.width, header.height, encodeOptions) : undefined;
    let retry = false;
    if (direct) {
      try {
        return await direct;
      } catch (e) {
        if (!(e instanceof PngInputFailedError) && !(e instanceof EncoderUnavailableError)) throw e;
        // The run it was in failed (timeout, crash): our decode's run alone is its one retry.
        retry = e instanceof PngInputFailedError && e.ran;
      }
    }
    // Again after the turn: the textures that waited for it decode one slice at a time too.
    for (let turn = loopTurn(); turn; turn = loopTurn()) await turn;
    const image = await decodeImage(sourceData, file, { maxSize: options.maxSize });
    return encodeTexture(image, retry ? Object.assign({}, encodeOptions, { retry }) : encodeOptions);
  });
  const out: CookedTexture = {
    width: header.width,
    height: header.height,
    mipCount: encoded.mipCount,
    format: encoded.format,
    platformData: encoded.platformData,
  };
  if (encoded.fallbackReason !== undefined) out.fallbackReason = encoded.fallbackReason;
  return out;
}
