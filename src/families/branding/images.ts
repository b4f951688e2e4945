/**
 * What a logo is, read from its bytes alone: the format by its magic bytes, and its dimensions from
 * the header where the format keeps them (no pixel is decoded). PNG, JPEG and WebP only: SVG is
 * markup that can carry script and fetch other resources, so it is never taken, whatever it is
 * called; and a file whose bytes are not the type it claims is refused, so the type served is
 * the type the bytes are.
 */

export const logoContentTypes = ['image/png', 'image/jpeg', 'image/webp'] as const;
export type LogoContentType = (typeof logoContentTypes)[number];

/** The most bytes a logo may have: 256 KiB, plenty for a header's logo, small for a database row. */
export const logoMaxBytes = 256 * 1024;
/** The most pixels on either side: a logo is shown at most a few hundred pixels wide. */
export const logoMaxSide = 4096;

export const logoExtension: Record<LogoContentType, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' };

export interface ImageFacts {
  contentType: LogoContentType;
  width: number;
  height: number;
}

/** The image's format and size; or, as a string, why the bytes are not a PNG, JPEG or WebP whose size can be read. */
export function readImage(bytes: Uint8Array): ImageFacts | string {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (startsWith(data, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return readPng(data);
  if (startsWith(data, [0xff, 0xd8, 0xff])) return readJpeg(data);
  if (data.length >= 12 && data.toString('latin1', 0, 4) === 'RIFF' && data.toString('latin1', 8, 12) === 'WEBP') return readWebp(data);
  const head = data.toString('utf8', 0, Math.min(data.length, 512)).trimStart().toLowerCase();
  if (head.startsWith('<svg') || (head.startsWith('<?xml') && head.includes('<svg'))) return 'the bytes are an SVG image, which is not accepted (it can carry script): send a PNG, JPEG or WebP';
  return 'the bytes are not a PNG, JPEG or WebP image (their first bytes are not one of those formats\' signatures)';
}

const startsWith = (data: Buffer, signature: number[]) => data.length >= signature.length && signature.every((byte, index) => data[index] === byte);

function readPng(data: Buffer): ImageFacts | string {
  // The signature, then the IHDR chunk first: length 13, type, width, height (big-endian).
  if (data.length < 33 || data.toString('latin1', 12, 16) !== 'IHDR') return 'the PNG image is cut short or has no IHDR header';
  return sized('image/png', data.readUInt32BE(16), data.readUInt32BE(20));
}

/** The start-of-frame markers that carry a JPEG's dimensions: C0–CF but DHT (C4), JPG (C8) and DAC (CC). */
const isStartOfFrame = (marker: number) => marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;

function readJpeg(data: Buffer): ImageFacts | string {
  let at = 2;
  while (at + 4 <= data.length) {
    if (data[at] !== 0xff) return 'the JPEG image is malformed (a segment does not start with a marker)';
    const marker = data[at + 1]!;
    if (marker === 0xff) {
      at++; // fill byte
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) break; // end of image, or the scan before any frame header
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      at += 2;
      continue;
    }
    const length = data.readUInt16BE(at + 2);
    if (length < 2) return 'the JPEG image is malformed (a segment length below 2)';
    if (isStartOfFrame(marker)) {
      if (at + 9 > data.length) break;
      return sized('image/jpeg', data.readUInt16BE(at + 7), data.readUInt16BE(at + 5));
    }
    at += 2 + length;
  }
  return 'the JPEG image has no frame header before its data (cut short, or not a JPEG)';
}

function readWebp(data: Buffer): ImageFacts | string {
  if (data.length < 30) return 'the WebP image is cut short';
  const chunk = data.toString('latin1', 12, 16);
  if (chunk === 'VP8 ') {
    // The lossy bitstream's frame header: a 3-byte tag, the start code 9d 01 2a, then 14-bit sizes.
    if (data[23] !== 0x9d || data[24] !== 0x01 || data[25] !== 0x2a) return 'the WebP image is malformed (no VP8 start code)';
    return sized('image/webp', data.readUInt16LE(26) & 0x3fff, data.readUInt16LE(28) & 0x3fff);
  }
  if (chunk === 'VP8L') {
    if (data[20] !== 0x2f) return 'the WebP image is malformed (no VP8L signature)';
    const bits = data.readUInt32LE(21);
    return sized('image/webp', (bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  if (chunk === 'VP8X') return sized('image/webp', data.readUIntLE(24, 3) + 1, data.readUIntLE(27, 3) + 1);
  return 'the WebP image is malformed (its first chunk is not VP8, VP8L or VP8X)';
}

function sized(contentType: LogoContentType, width: number, height: number): ImageFacts | string {
  if (width < 1 || height < 1) return `the image's header gives it no size (${width}×${height})`;
  if (width > logoMaxSide || height > logoMaxSide) return `the image is ${width}×${height} pixels; at most ${logoMaxSide} on each side`;
  return { contentType, width, height };
}
