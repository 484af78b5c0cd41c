import type { OwnedObject } from './types.js';

/**
 * What a file uploaded through this gateway records for the bound of a call that names it by id
 * (docs/pricing.md "The bound"): its size, when its size bounds what the provider reads of it. That holds for
 * text only: UTF-8 text tokenizes to at most one token per byte. It does not hold for a PDF (its pages render as
 * images, its text streams are compressed) nor for an office document (zipped XML): those are bounded by
 * REFERENCE_MAX_TOKENS, or refused.
 */

/** Names the providers read as documents (by extension), whatever their bytes. */
const DOCUMENT_NAME =
  /\.(pdf|docx?|dotx?|pptx?|xlsx?|od[tps]|pages|key|numbers|epub|zip|gz|tgz|bz2|xz|7z|rar|tar|png|jpe?g|gif|webp|heic|bmp|tiff?)$/i;

/** A PDF may start its header anywhere in its first 1,024 bytes. */
const PDF_HEADER_WINDOW = 1024;

/**
 * Fed an upload's bytes in order: whether the file is text whose size bounds its tokens — valid UTF-8, no NUL
 * byte (every zip entry header has one), no `%PDF-` header, and a name that is not a document's.
 */
export class FileTextCheck {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private text: boolean;
  private head = '';

  constructor(filename: string) {
    this.text = !DOCUMENT_NAME.test(filename);
  }

  push(chunk: Buffer): void {
    if (!this.text) return;
    if (chunk.includes(0)) {
      this.text = false;
      return;
    }
    if (this.head.length < PDF_HEADER_WINDOW) {
      this.head += chunk.toString('latin1', 0, Math.min(chunk.length, PDF_HEADER_WINDOW));
      if (this.head.slice(0, PDF_HEADER_WINDOW + 5).includes('%PDF-')) {
        this.text = false;
        return;
      }
    }
    try {
      this.decoder.decode(chunk, { stream: true });
    } catch {
      this.text = false;
    }
  }

  /** After the last chunk: true when the whole file was text. */
  end(): boolean {
    if (!this.text) return false;
    try {
      this.decoder.decode();
    } catch {
      return false;
    }
    return true;
  }
}

/** The ownership record's `meta` of a file that is not a batch input: its size when it is text, else none. */
export function storedFileMeta(bytes: number, text: boolean): string | null {
  return text ? JSON.stringify({ file: { bytes, text: true } }) : null;
}

/** Input tokens a recorded text file can cost at most (one per byte), or undefined (not text, or unrecorded). */
export function storedFileTokens(o: OwnedObject | null): number | undefined {
  if (o === null || o.kind !== 'file' || o.meta === null) return undefined;
  try {
    const f = (JSON.parse(o.meta) as { file?: { bytes?: unknown; text?: unknown } } | null)?.file;
    return f !== undefined && f.text === true && Number.isSafeInteger(f.bytes) && (f.bytes as number) >= 0
      ? (f.bytes as number)
      : undefined;
  } catch {
    return undefined;
  }
}
