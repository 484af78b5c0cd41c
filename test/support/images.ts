/**
 * Image headers built by hand for tests (no encoder on the machine): each format's bytes up to and past the part
 * that names its size, per the format's specification, followed by `pad` bytes of filler (a body to carry).
 */

function u16be(v: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(v);
  return b;
}

function u16le(v: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(v);
  return b;
}

function u32be(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(v);
  return b;
}

function u24le(v: number): Buffer {
  return Buffer.from([v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff]);
}

/** PNG: signature, IHDR (width, height, 8-bit RGBA), an IDAT of filler, IEND (CRCs zero: not checked). */
export function png(width: number, height: number, pad = 16): Buffer {
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    u32be(13),
    Buffer.from('IHDR'),
    u32be(width),
    u32be(height),
    Buffer.from([8, 6, 0, 0, 0]),
    u32be(0),
    u32be(pad),
    Buffer.from('IDAT'),
    Buffer.alloc(pad, 0x78),
    u32be(0),
    u32be(0),
    Buffer.from('IEND'),
    u32be(0),
  ]);
}

/** GIF89a: header and logical screen descriptor, then filler and the trailer. */
export function gif(width: number, height: number, pad = 16): Buffer {
  return Buffer.concat([
    Buffer.from('GIF89a'),
    u16le(width),
    u16le(height),
    Buffer.from([0, 0, 0]),
    Buffer.alloc(pad, 0),
    Buffer.from([0x3b]),
  ]);
}

/**
 * JPEG: SOI, APP0 (JFIF), an APP1 of `exifBytes` filler (EXIF blocks come before the frame header), a DQT, SOF0 or
 * SOF2 (progressive) with the size, a DHT, SOS and EOI.
 */
export function jpeg(
  width: number,
  height: number,
  opts: { exifBytes?: number; progressive?: boolean; fill?: boolean } = {},
): Buffer {
  const seg = (marker: number, payload: Buffer) =>
    Buffer.concat([Buffer.from([0xff, marker]), u16be(payload.length + 2), payload]);
  const exif = opts.exifBytes ?? 0;
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    seg(0xe0, Buffer.concat([Buffer.from('JFIF\0'), Buffer.from([1, 1, 0, 0, 1, 0, 1, 0, 0])])),
    ...(exif > 0 ? [seg(0xe1, Buffer.concat([Buffer.from('Exif\0\0'), Buffer.alloc(exif, 0x2a)]))] : []),
    // Fill bytes before a marker are allowed.
    ...(opts.fill ? [Buffer.from([0xff, 0xff])] : []),
    seg(0xdb, Buffer.concat([Buffer.from([0]), Buffer.alloc(64, 1)])),
    seg(
      opts.progressive ? 0xc2 : 0xc0,
      Buffer.concat([
        Buffer.from([8]),
        u16be(height),
        u16be(width),
        Buffer.from([3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]),
      ]),
    ),
    seg(0xc4, Buffer.concat([Buffer.from([0]), Buffer.alloc(16, 0), Buffer.from([0])])),
    seg(0xda, Buffer.from([1, 1, 0, 0, 0x3f, 0])),
    Buffer.alloc(32, 0x55),
    Buffer.from([0xff, 0xd9]),
  ]);
}

function riff(chunk: string, payload: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from('WEBP'), Buffer.from(chunk), Buffer.alloc(4), payload]);
  body.writeUInt32LE(payload.length, 8);
  const head = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4)]);
  head.writeUInt32LE(body.length, 4);
  return Buffer.concat([head, body]);
}

/** WebP lossy (VP8): frame tag, start code, 14-bit width and height (scale bits 0). */
export function webpLossy(width: number, height: number): Buffer {
  return riff(
    'VP8 ',
    Buffer.concat([
      Buffer.from([0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a]),
      u16le(width),
      u16le(height),
      Buffer.alloc(16),
    ]),
  );
}

/** WebP lossless (VP8L): signature 0x2f, then width-1 and height-1 in 14 bits each. */
export function webpLossless(width: number, height: number): Buffer {
  const bits = (width - 1) | ((height - 1) << 14);
  const b = Buffer.alloc(4);
  b.writeUInt32LE(bits >>> 0);
  return riff('VP8L', Buffer.concat([Buffer.from([0x2f]), b, Buffer.alloc(16)]));
}

/** WebP extended (VP8X): flags, reserved, canvas width-1 and height-1 in 24 bits each. */
export function webpExtended(width: number, height: number): Buffer {
  return riff('VP8X', Buffer.concat([Buffer.alloc(4), u24le(width - 1), u24le(height - 1), Buffer.alloc(8)]));
}

export function dataUrl(bytes: Buffer, mime = 'image/png'): string {
  return `data:${mime};base64,${bytes.toString('base64')}`;
}
