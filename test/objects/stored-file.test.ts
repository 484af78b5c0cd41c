import { describe, expect, it } from 'vitest';
import { FileTextCheck, storedFileMeta, storedFileTokens } from '../../core/objects/stored-file.js';
import type { OwnedObject } from '../../core/objects/types.js';

/** Whether an upload's size bounds its tokens (core/objects/stored-file.ts), fed in the chunks given. */
function isText(name: string, ...chunks: Buffer[]): boolean {
  const c = new FileTextCheck(name);
  for (const b of chunks) c.push(b);
  return c.end();
}

const record = (meta: string | null): OwnedObject => ({
  id: 'file-1',
  kind: 'file',
  accountId: 'a',
  keyId: 'k',
  createdAtMs: 0,
  meta,
});

describe('a stored file whose size bounds its tokens', () => {
  it('is UTF-8 text, even split inside a character across chunks', () => {
    expect(isText('notes.txt', Buffer.from('plain text\n'))).toBe(true);
    const euro = Buffer.from('price: 3 €\n');
    const cut = euro.indexOf(0xe2) + 1;
    expect(isText('notes.md', euro.subarray(0, cut), euro.subarray(cut))).toBe(true);
    expect(isText('empty.txt')).toBe(true);
  });

  it('is not a PDF (by its header, whatever its name; or by its name), a zip, binary or broken UTF-8', () => {
    expect(isText('a.txt', Buffer.from('  \n%PDF-1.7\n<</Type /Page>>'))).toBe(false);
    expect(isText('a.txt', Buffer.from('%PD'), Buffer.from('F-1.4\n'))).toBe(false);
    expect(isText('report.pdf', Buffer.from('only text'))).toBe(false);
    expect(isText('doc.DOCX', Buffer.from('only text'))).toBe(false);
    expect(isText('a.txt', Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x08, 0x00]))).toBe(false);
    expect(isText('a.txt', Buffer.from([0x61, 0xff, 0x62]))).toBe(false);
    // A character cut at the very end is not text either.
    expect(isText('a.txt', Buffer.from('x'), Buffer.from([0xe2, 0x82]))).toBe(false);
  });

  it('records its size as meta and reads it back; anything else bounds nothing', () => {
    expect(storedFileTokens(record(storedFileMeta(2940, true)))).toBe(2940);
    expect(storedFileMeta(2940, false)).toBeNull();
    expect(storedFileTokens(record(null))).toBeUndefined();
    // A batch input's priced summary, a broken record, another kind: no size.
    expect(storedFileTokens(record('{"url":"/v1/chat/completions","lines":2}'))).toBeUndefined();
    expect(storedFileTokens(record('{nope'))).toBeUndefined();
    expect(storedFileTokens({ ...record(storedFileMeta(5, true)), kind: 'response' })).toBeUndefined();
    expect(storedFileTokens(null)).toBeUndefined();
  });
});
