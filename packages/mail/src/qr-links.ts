import jpeg from 'jpeg-js';
import jsQR from 'jsqr';
import { PNG } from 'pngjs';

/**
 * The text of a QR code shown in an image (PNG or JPEG, an attachment or an image inside a PDF):
 * the link a "quishing" message asks the reader to scan with a phone, out of reach of the mail
 * filter's link checks. Pure JavaScript (pngjs, jpeg-js, jsQR). The image's size is read from its
 * header before anything is decoded and an image over `maxPixels` is not decoded; an interlaced
 * PNG is not decoded (pngjs inflates those without a bound); the pixels are reduced to at most
 * `scanPixels` before the search, which bounds its time (a phone-readable code survives that).
 */
export interface QrLimits {
  /** Largest image decoded (width × height). */
  maxPixels: number;
  /**
   * Largest JPEG decoded: a JPEG costs two to three times a PNG of its size to decode (an inverse DCT
   * per block, in JavaScript; measured on the corpora's images), and a large one is a photograph:
   * generated codes and lure images come as PNG or as small JPEGs.
   */
  maxJpegPixels: number;
  /** Pixels the QR search runs on (larger images are reduced by an integer factor). */
  scanPixels: number;
  /** Smallest side worth decoding (a code a phone reads from a screen is rarely under 64 px). */
  minSide: number;
  /**
   * Widest aspect ratio decoded (long side / short side): banners and strips hold no code; a
   * phone screenshot is at most about 2.2.
   */
  maxAspect: number;
}

/**
 * The search's cost grows faster than its pixels on hostile images (noise, tiled finder patterns:
 * 0.9 s at 250,000 pixels, 6.4 s at 1,000,000, measured on this project's 2-core machine at load
 * average 20), so it runs on at most 500 × 500 pixels; a code a phone can read in a lure image
 * survives that reduction.
 */
export const QR_LIMITS: QrLimits = {
  maxPixels: 4_000_000,
  maxJpegPixels: 1_000_000,
  scanPixels: 250_000,
  minSide: 64,
  maxAspect: 2.5,
};

export type ImageFormat = 'png' | 'jpeg';

export function imageFormatOf(b: Buffer): ImageFormat | undefined {
  if (b.length > 24 && b.readUInt32BE(0) === 0x89504e47 && b.readUInt32BE(4) === 0x0d0a1a0a) {
    return 'png';
  }
  if (b.length > 4 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg';
  return undefined;
}

/** Width and height from a PNG's IHDR or a JPEG's first SOF marker; undefined when unreadable. */
function imageSize(
  b: Buffer,
  format: ImageFormat,
): { width: number; height: number; interlaced: boolean } | undefined {
  if (format === 'png') {
    if (b.length < 29 || b.toString('latin1', 12, 16) !== 'IHDR') return undefined;
    return { width: b.readUInt32BE(16), height: b.readUInt32BE(20), interlaced: b[28] !== 0 };
  }
  // JPEG: walk the markers (each with its length) to the first start-of-frame
  let p = 2;
  for (let n = 0; n < 10_000 && p + 9 < b.length; n++) {
    if (b[p] !== 0xff) return undefined;
    const marker = b[p + 1] as number;
    if (marker === 0xff) {
      p++;
      continue;
    }
    const len = b.readUInt16BE(p + 2);
    const sof =
      marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (sof)
      return { height: b.readUInt16BE(p + 5), width: b.readUInt16BE(p + 7), interlaced: false };
    if (len < 2) return undefined;
    p += 2 + len;
  }
  return undefined;
}

/** RGBA pixels reduced by an integer factor (mean of each square) to at most `max` pixels. */
function reduce(
  data: Uint8Array,
  width: number,
  height: number,
  max: number,
): { data: Uint8ClampedArray; width: number; height: number } {
  const f = Math.ceil(Math.sqrt((width * height) / max));
  if (f <= 1) {
    return {
      data: new Uint8ClampedArray(data.buffer, data.byteOffset, data.length),
      width,
      height,
    };
  }
  const w = Math.floor(width / f);
  const h = Math.floor(height / f);
  const out = new Uint8ClampedArray(w * h * 4);
  const area = f * f;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let r = 0;
      let g = 0;
      let bl = 0;
      for (let dy = 0; dy < f; dy++) {
        let i = ((y * f + dy) * width + x * f) * 4;
        for (let dx = 0; dx < f; dx++, i += 4) {
          r += data[i] as number;
          g += data[i + 1] as number;
          bl += data[i + 2] as number;
        }
      }
      const o = (y * w + x) * 4;
      out[o] = r / area;
      out[o + 1] = g / area;
      out[o + 2] = bl / area;
      out[o + 3] = 255;
    }
  }
  return { data: out, width: w, height: h };
}

function decodePixels(
  b: Buffer,
  format: ImageFormat,
  limits: QrLimits,
): { data: Uint8Array; width: number; height: number } | undefined {
  const size = imageSize(b, format);
  if (!size || size.interlaced) return undefined;
  const { width, height } = size;
  if (width < limits.minSide || height < limits.minSide) return undefined;
  if (Math.max(width, height) > limits.maxAspect * Math.min(width, height)) return undefined;
  if (width * height > (format === 'jpeg' ? limits.maxJpegPixels : limits.maxPixels))
    return undefined;
  try {
    if (format === 'png') {
      const png = PNG.sync.read(b);
      if (png.width !== width || png.height !== height) return undefined;
      return { data: png.data, width, height };
    }
    const img = jpeg.decode(b, {
      useTArray: true,
      formatAsRGBA: true,
      tolerantDecoding: true,
      maxResolutionInMP: limits.maxPixels / 1_000_000,
      maxMemoryUsageInMB: Math.ceil((limits.maxPixels * 4 * 3) / (1024 * 1024)),
    });
    return { data: img.data, width: img.width, height: img.height };
  } catch {
    return undefined;
  }
}

/**
 * The text of the QR code an image shows, or undefined (not PNG or JPEG, too large, unreadable,
 * no code). Light-on-dark codes are found too. The cost is that of `maxPixels` decoded and
 * `scanPixels` searched, at most.
 */
export function qrText(b: Buffer, limits: QrLimits = QR_LIMITS): string | undefined {
  const format = imageFormatOf(b);
  if (format === undefined) return undefined;
  const px = decodePixels(b, format, limits);
  if (!px || px.data.length < px.width * px.height * 4) return undefined;
  const small = reduce(px.data, px.width, px.height, limits.scanPixels);
  const tones = twoTone(small.data);
  if (!tones) return undefined;
  const code = jsQR(small.data, small.width, small.height, { inversionAttempts: tones });
  return code?.data ? code.data : undefined;
}

/**
 * Whether an image can show a QR code at all, and which way round to search it: a code is dark
 * modules on a light ground (or the inverse), so most of its pixels are near black or near white,
 * and both are there. A photograph, a gradient or a colour banner spreads its tones and is not
 * searched (jsQR's search is most of the cost). A light ground is searched as it is; any other
 * both as it is and inverted (a light-on-dark code).
 */
function twoTone(rgba: Uint8ClampedArray): 'dontInvert' | 'onlyInvert' | 'attemptBoth' | undefined {
  let dark = 0;
  let light = 0;
  let sum = 0;
  const n = rgba.length >> 2;
  for (let i = 0; i < rgba.length; i += 4) {
    const l =
      ((rgba[i] as number) * 299 + (rgba[i + 1] as number) * 587 + (rgba[i + 2] as number) * 114) /
      1000;
    sum += l;
    if (l < 96) dark++;
    else if (l > 160) light++;
  }
  if (n === 0 || dark < n * 0.03 || light < n * 0.03 || dark + light < n * 0.6) return undefined;
  const mean = sum / n;
  return mean > 150 ? 'dontInvert' : 'attemptBoth';
}
