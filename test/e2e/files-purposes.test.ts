import { toFile } from 'openai';
import { describe, expect, it } from 'vitest';
import { type PaidStore, paidGatewayPerSuite } from '../support/paid-gateway.js';
import { BOOK_PRICES } from '../support/prices.js';

/**
 * FILES_OTHER_PURPOSES=true: an upload whose purpose is not `batch` is relayed with its purpose, not charged, and
 * private to the key that uploaded it like every file (404 for another key); it cannot be a batch's input.
 */
describe.each<PaidStore>(['sqlite', 'redis'])('uploads of other purposes on %s', (store) => {
  const h = paidGatewayPerSuite({
    store,
    env: { ...BOOK_PRICES, FILES_OTHER_PURPOSES: 'true', REFERENCE_MAX_TOKENS: '1000' },
  });

  const status = (p: Promise<unknown>) =>
    p.then(
      () => 200,
      (e: { status: number }) => e.status,
    );

  it('relays purpose "assistants"; the file is its key’s only; nothing is charged', async () => {
    const a = await h.fundKey(10);
    const b = await h.fundKey(10);
    const client = h.openai(a.apiKey);
    const text = 'notes for an assistant\n';
    const file = await client.files.create({
      file: await toFile(Buffer.from(text), 'notes.txt'),
      purpose: 'assistants',
    });
    expect(file.purpose).toBe('assistants');
    // The provider stored it with that purpose and exactly its bytes.
    const atProvider = (await (await fetch(`${h.upstream.url}/files/${file.id}`)).json()) as {
      purpose: string;
      bytes: number;
    };
    expect(atProvider).toMatchObject({ purpose: 'assistants', bytes: Buffer.byteLength(text) });
    expect(await (await client.files.content(file.id)).text()).toBe(text);
    expect((await client.files.retrieve(file.id)).purpose).toBe('assistants');
    expect((await client.files.list()).data.map((f) => f.id)).toEqual([file.id]);

    const other = h.openai(b.apiKey);
    expect(await status(other.files.retrieve(file.id))).toBe(404);
    expect(await status(other.files.content(file.id))).toBe(404);
    expect(await status(other.files.delete(file.id))).toBe(404);
    expect((await other.files.list()).data).toEqual([]);

    // Not a batch input: refused before anything is reserved.
    const err = await client.batches
      .create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })
      .catch((e: unknown) => e as { status: number; error: { message: string } });
    expect(err).toMatchObject({
      status: 400,
      error: { message: `File ${file.id} was not uploaded with purpose "batch"` },
    });
    expect(await h.available(a.apiKey)).toBe(a.balanceMsat);
    expect((await h.ledger.getKeyInfo({ apiKey: a.apiKey }))!.account.reservedMsat).toBe(0);

    // The owner deletes it; then it is gone for the owner too.
    expect((await client.files.delete(file.id)).deleted).toBe(true);
    expect(await status(client.files.retrieve(file.id))).toBe(404);
  });

  it('a paid call naming another key’s file (or one never uploaded here) is refused 404 before the provider; nothing charged', async () => {
    const a = await h.fundKey(10);
    const b = await h.fundKey(10);
    const file = await h.openai(a.apiKey).files.create({
      file: await toFile(Buffer.from('private notes\n'), 'private.txt'),
      purpose: 'user_data',
    });
    const requests = h.upstream.stats.requests;
    const chatWith = (fileId: string) => ({
      model: 'mock-gpt',
      max_tokens: 5,
      messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: fileId } }] }],
    });
    const responsesWith = (fileId: string) => ({
      model: 'mock-gpt',
      max_output_tokens: 5,
      input: [{ role: 'user', content: [{ type: 'input_file', file_id: fileId }] }],
    });
    for (const [path, body] of [
      ['/chat/completions', chatWith(file.id)],
      ['/responses', responsesWith(file.id)],
      ['/chat/completions', chatWith('file-never-uploaded-here')],
    ] as const) {
      const res = await h.post(path, body, { authorization: `Bearer ${b.apiKey}` });
      expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(404);
      const err = ((await res.json()) as { error: { code: string; message: string } }).error;
      expect(err.code).toBe('not_found');
      expect(err.message).toMatch(/^No such file: /);
    }
    // The provider never saw them; B was charged nothing and holds nothing.
    expect(h.upstream.stats.requests).toBe(requests);
    expect(await h.available(b.apiKey)).toBe(b.balanceMsat);
    expect((await h.ledger.getKeyInfo({ apiKey: b.apiKey }))!.account.reservedMsat).toBe(0);
    // The owner's own call goes through.
    const own = await h.post('/chat/completions', chatWith(file.id), { authorization: `Bearer ${a.apiKey}` });
    expect(own.status).toBe(200);
  });
});
