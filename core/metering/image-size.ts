/**
 * The pixel size of an inline image (`data:image/…;base64,…`), read from its header only: PNG (IHDR), GIF (logical
 * screen), WebP (VP8, VP8L, VP8X) and JPEG (the first SOF segment). Nothing is decoded beyond the bytes the header
 * walk reads: the base64 text is read lazily, four characters per byte asked (a JPEG's segments are skipped by
 * their lengths, so a large EXIF block costs one read per segment, not its bytes).
 *
 * Undefined when the text is not base64 image data or the header is not one of these (the caller then bounds the
 * image as one of unknown size: the most its model may bill for it).
 */

export interface ImageSize {
  width: number;
  height: number;
}

const B64 = new Int16Array(128).fill(-1);
for (let i = 0; i < 64; i++) {
  B64['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.charCodeAt(i)] = i;
}
B64['-'.charCodeAt(0)] = 62; // base64url
B64['_'.charCodeAt(0)] = 63;

/** The bytes of base64 text from `start`, decoded on demand. */
class LazyBase64 {
  readonly length: number;
  constructor(
    private readonly s: string,
    private readonly start: number,
  ) {
    this.length = Math.floor(((s.length - start) * 3) / 4);
  }

  /** Byte `i`, or -1 past the end or on a character that is not base64. */
  at(i: number): number {
    if (i < 0 || i >= this.length) return -1;
    const g = this.start + Math.floor(i / 3) * 4;
    const c = (k: number) => {
      const code = this.s.charCodeAt(g + k);
      return code < 128 ? B64[code]! : -1;
    };
    switch (i % 3) {
      case 0: {
        const a = c(0);
        const b = c(1);
        return a < 0 || b < 0 ? -1 : ((a << 2) | (b >> 4)) & 0xff;
      }
      case 1: {
        const a = c(1);
        const b = c(2);
        return a < 0 || b < 0 ? -1 : ((a << 4) | (b >> 2)) & 0xff;
      }
      default: {
        const a = c(2);
        const b = c(3);
        return a < 0 || b < 0 ? -1 : ((a << 6) | b) & 0xff;
      }
    }
  }

  u16be(i: number): number {
    const a = this.at(i);
    const b = this.at(i + 1);
    return a < 0 || b < 0 ? -1 : (a << 8) | b;
  }

  u16le(i: number): number {
    const a = this.at(i);
    const b = this.at(i + 1);
    return a < 0 || b < 0 ? -1 : (b << 8) | a;
  }

  u24le(i: number): number {
    const a = this.u16le(i);
    const c = this.at(i + 2);
    return a < 0 || c < 0 ? -1 : a + c * 65536;
  }

  u32be(i: number): number {
    const a = this.u16be(i);
    const b = this.u16be(i + 2);
    return a < 0 || b < 0 ? -1 : a * 65536 + b;
  }

  ascii(i: number, n: number): string {
    let out = '';
    for (let k = 0; k < n; k++) {
      const v = this.at(i + k);
      if (v < 0) return '';
      out += String.fromCharCode(v);
    }
    return out;
  }
}

const sized = (width: number, height: number): ImageSize | undefined =>
  width > 0 && height > 0 ? { width, height } : undefined;

/** The most JPEG segments walked before the first SOF (a crafted file could chain many small ones). */
const JPEG_MAX_SEGMENTS = 4096;

function jpeg(b: LazyBase64): ImageSize | undefined {
  let i = 2;
  for (let n = 0; n < JPEG_MAX_SEGMENTS; n++) {
    if (b.at(i) !== 0xff) return undefined;
    let marker = b.at(i + 1);
    // Fill bytes before a marker.
    while (marker === 0xff) {
      i++;
      marker = b.at(i + 1);
    }
    if (marker < 0) return undefined;
    // Markers without a length: TEM, RSTn.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2;
      continue;
    }
    // SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return sized(b.u16be(i + 7), b.u16be(i + 5));
    }
    // Start of scan or end of image before any frame header: no size.
    if (marker === 0xda || marker === 0xd9) return undefined;
    const len = b.u16be(i + 2);
    if (len < 2) return undefined;
    i += 2 + len;
  }
  return undefined;
}

function webp(b: LazyBase64): ImageSize | undefined {
  const chunk = b.ascii(12, 4);
  if (chunk === 'VP8 ') {
    // Lossy: the frame tag (3 bytes) and start code (9d 01 2a) at 20, then 14-bit width and height.
    if (b.at(23) !== 0x9d || b.at(24) !== 0x01 || b.at(25) !== 0x2a) return undefined;
    const w = b.u16le(26);
    const h = b.u16le(28);
    return w < 0 || h < 0 ? undefined : sized(w & 0x3fff, h & 0x3fff);
  }
  if (chunk === 'VP8L') {
    if (b.at(20) !== 0x2f) return undefined;
    const b0 = b.at(21);
    const b1 = b.at(22);
    const b2 = b.at(23);
    const b3 = b.at(24);
    if (b0 < 0 || b1 < 0 || b2 < 0 || b3 < 0) return undefined;
    return sized(1 + (((b1 & 0x3f) << 8) | b0), 1 + (((b3 & 0x0f) << 10) | (b2 << 2) | ((b1 & 0xc0) >> 6)));
  }
  if (chunk === 'VP8X') {
    const w = b.u24le(24);
    const h = b.u24le(27);
    return w < 0 || h < 0 ? undefined : sized(w + 1, h + 1);
  }
  return undefined;
}

/** The size of base64 image bytes starting at `start` of `text`, from the header. */
function sizeOfBase64(text: string, start: number): ImageSize | undefined {
  const b = new LazyBase64(text, start);
  if (b.at(0) === 0x89 && b.ascii(1, 3) === 'PNG') {
    return b.ascii(12, 4) === 'IHDR' ? sized(b.u32be(16), b.u32be(20)) : undefined;
  }
  const gif = b.ascii(0, 6);
  if (gif === 'GIF87a' || gif === 'GIF89a') return sized(b.u16le(6), b.u16le(8));
  if (b.ascii(0, 4) === 'RIFF' && b.ascii(8, 4) === 'WEBP') return webp(b);
  if (b.at(0) === 0xff && b.at(1) === 0xd8) return jpeg(b);
  return undefined;
}

/**
 * The size of the image a `data:` URL carries (base64 only), or undefined (another URL, another encoding, or a
 * header this module does not read). Also takes bare base64 (Anthropic's `source.data`).
 */
export function imageSizeOfDataUrl(url: string): ImageSize | undefined {
  if (url.startsWith('data:')) {
    const comma = url.indexOf(',');
    // `;base64` must be among the parameters before the comma (they are short: stop looking after 256 chars).
    if (comma < 0 || comma > 256 || !url.slice(0, comma).includes(';base64')) return undefined;
    return sizeOfBase64(url, comma + 1);
  }
  return sizeOfBase64(url, 0);
}
