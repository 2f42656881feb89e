/** Texture pipeline: source image bytes → RGBA8 → mips → KTX2 (Basis Universal) or RGBA8. */
export { cookTexture } from './cookTexture.js';
export type { CookedTexture, CookTextureOptions } from './cookTexture.js';
export { checkRgba8, decodeImage } from './decodeImage.js';
export type { DecodedImage, ImageSource } from './decodeImage.js';
export { encodeTexture } from './encodeTexture.js';
export type { EncodedTexture, EncodeOptions } from './encodeTexture.js';
export { MAX_TEXTURE_DIMENSION, readImageHeader } from './imageHeader.js';
export type { ImageHeader } from './imageHeader.js';
export { generateMips, linearToSrgb8, mipCountFor, srgb8ToLinear } from './mips.js';
export type { MipLevel, MipOptions } from './mips.js';
export { COMPRESSION_LABELS, resolveTextureEncoding } from './textureSettings.js';
export type { TextureEncoding, TextureFormat, TextureSettings } from './textureSettings.js';
export { basisuIdentity, findBasisu, resolveBasisu } from './basisu.js';
export type { BasisuSettings } from './basisu.js';
export { textureMemoryEstimate } from './textureMemory.js';
export { TEXTURES_IN_FLIGHT } from './BasisuBatcher.js';
