import { toFile } from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { promptTokensUpperBound } from '../../core/metering/prompt-bound.js';
import { batchLines, createBatch, uploadBatchInput } from '../support/batches.js';
import { type PaidStore, paidGatewayPerSuite } from '../support/paid-gateway.js';
import { BOOK_PRICES } from '../support/prices.js';
import { until } from '../support/until.js';

/**
 * Batches that hold (issue 34, item 7), with the official openai SDK on SQLite and Redis.
 *
 * Prices as in batches.test.ts: BTC pinned at 100,000 USD, fees 1, no base fee; mock-gpt 1 msat per prompt token
 * and 2 per completion token. Each line: 10 prompt tokens, 8 completion tokens = 26 msat, 13 at the batch factor
 * 0.5. The watcher polls once a minute here: what the tests see settled, the GET of the batch settled.
 */
const ENV = {
  ...BOOK_PRICES,
  BATCH_POLL_MS: '60000',
  BATCH_RECONCILE_POLLS: '3',
  // A line's file by id counts this many input tokens, as a synchronous call's does (unset: refused).
  REFERENCE_MAX_TOKENS: '2000',
};
/** What jsonl(3) reserves: 3 × 104 msat (each line's synchronous bound 208 at the batch factor 0.5). */
const BOUND_3_LINES = 312;

describe.each<PaidStore>(['sqlite', 'redis'])('batches that hold on %s', (store) => {
  const h = paidGatewayPerSuite({ store, env: ENV });
  afterEach(() => {
    h.upstream.setBehaviour({ batch: { delayMs: 0, outcome: 'completed', answered: 0, usage: undefined } });
  });

  async function batchTx(apiKey: string) {
    const page = await h.ledger.listTransactions({ apiKey });
    return page!.transactions.filter((t) => t.type === 'batch');
  }

  async function submit(apiKey: string, lines: number) {
    const client = h.openai(apiKey);
    const file = await uploadBatchInput(client, batchLines(lines), 'in.jsonl');
    const batch = await createBatch(client, file.id);
    return { client, file, batch };
  }

  it('the GET that first sees the batch ended settles it before naming its output: deleting the output then costs the same 39 msat', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const { client, batch } = await submit(apiKey, 3);
    expect(await h.available(apiKey)).toBe(balanceMsat - BOUND_3_LINES);
    // Before it ends, its output is nobody's: nothing to delete.
    const done = await client.batches.retrieve(batch.id);
    expect(done.status).toBe('completed');
    // Settled by that GET, before its answer: 3 lines × 13 msat.
    expect(await batchTx(apiKey)).toHaveLength(1);
    expect(await h.available(apiKey)).toBe(balanceMsat - 39);
    // Now the output is the key's: deleting it changes nothing charged.
    await client.files.delete(done.output_file_id!);
    expect(await h.available(apiKey)).toBe(balanceMsat - 39);
    expect((await h.ledger.getKeyInfo({ apiKey }))!.account.reservedMsat).toBe(0);
  });

  it('a batch paid from a sat token (bearer) is settled in whole sats: 39 msat of lines charge 1 sat', async () => {
    const token = await h.mintToken(100);
    const { client, batch } = await submit(token, 3);
    expect(await h.available(token)).toBe(100_000 - BOUND_3_LINES);
    expect((await client.batches.retrieve(batch.id)).status).toBe('completed');
    const page = await h.ledger.listTransactions({ tokenHash: h.wallet.tokenHash(token) });
    expect(page!.transactions.filter((t) => t.type === 'batch').map((t) => t.amountMsat)).toEqual([-1_000]);
    // Whole sats left: a refund of the token pays all of it.
    expect(await h.available(token)).toBe(99_000);
  });

  it("a line naming another key's file or response is refused (404 naming the line) before the provider sees the file", async () => {
    const a = await h.fundKey(100);
    const b = await h.fundKey(100);
    const { file: aFile } = await submit(a.apiKey, 1);
    const before = h.upstream.stats.requests;
    const line = (body: object, url = '/v1/chat/completions') =>
      `${JSON.stringify({ custom_id: 'r0', method: 'POST', url, body })}\n`;
    const upload = async (text: string) =>
      h
        .openai(b.apiKey)
        .files.create({ file: await toFile(Buffer.from(text), 'in.jsonl'), purpose: 'batch' })
        .then(
          () => undefined,
          (e: { status: number; error: { code: string; details: unknown } }) => e,
        );
    const fileRef = await upload(
      line({
        model: 'mock-gpt',
        max_tokens: 20,
        messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: aFile.id } }] }],
      }),
    );
    expect(fileRef).toMatchObject({ status: 404, error: { code: 'not_found', details: { line: 1 } } });
    const responseRef = await upload(
      line(
        { model: 'mock-gpt', input: 'hi', max_output_tokens: 20, previous_response_id: 'resp_not_yours' },
        '/v1/responses',
      ),
    );
    expect(responseRef).toMatchObject({ status: 404, error: { code: 'not_found', details: { line: 1 } } });
    expect(h.upstream.stats.requests).toBe(before);
    // Its own file is fine.
    const own = await h.openai(a.apiKey).files.create({
      file: await toFile(
        Buffer.from(
          line({
            model: 'mock-gpt',
            max_tokens: 20,
            messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: aFile.id } }] }],
          }),
        ),
        'in.jsonl',
      ),
      purpose: 'batch',
    });
    expect(own.id).toMatch(/^file/);
  });

  it("a line's file by id reserves REFERENCE_MAX_TOKENS and a line continuing a stored response reserves that response's context, as synchronous calls do", async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const client = h.openai(apiKey);
    const line = (body: object, url: string) =>
      `${JSON.stringify({ custom_id: 'r0', method: 'POST', url, body })}\n`;
    // Each line's bound: (prompt bound + stored or referenced tokens) × 1 msat + 20 × 2 msat, at the factor 0.5.
    const expected = (body: object, extra: number) =>
      Math.ceil((promptTokensUpperBound(body, 0, { references: [] }) + extra + 40) / 2);
    const reservedBy = async (text: string, endpoint: '/v1/chat/completions' | '/v1/responses') => {
      const file = await uploadBatchInput(client, text, 'in.jsonl');
      const before = (await h.available(apiKey))!;
      await createBatch(client, file.id, endpoint);
      return before - (await h.available(apiKey))!;
    };
    h.upstream.setBehaviour({
      batch: { delayMs: 60_000, outcome: 'completed', answered: 0, usage: undefined },
    });

    const { file: own } = await (async () => ({
      file: await uploadBatchInput(client, batchLines(1), 'a.jsonl'),
    }))();
    const withFile = {
      model: 'mock-gpt',
      max_tokens: 20,
      messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: own.id } }] }],
    };
    // The file part counts as one item (16 tokens) in the prompt bound, plus REFERENCE_MAX_TOKENS.
    expect(await reservedBy(line(withFile, '/v1/chat/completions'), '/v1/chat/completions')).toBe(
      expected(withFile, 2000),
    );

    // A stored response of this key, its billed tokens recorded; a line continuing it carries them all.
    const stored = await client.responses.create({ model: 'mock-gpt', input: 'hello', max_output_tokens: 8 });
    const context = stored.usage!.input_tokens + stored.usage!.output_tokens;
    expect(context).toBeGreaterThan(0);
    const continued = {
      model: 'mock-gpt',
      input: 'go on',
      max_output_tokens: 20,
      previous_response_id: stored.id,
    };
    expect(await reservedBy(line(continued, '/v1/responses'), '/v1/responses')).toBe(
      expected(continued, context),
    );
    expect((await h.available(apiKey))!).toBeLessThan(balanceMsat);
  });

  it('a batch whose output cannot be read (gone at the provider) is charged its reservation, not retried forever', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const { client, batch } = await submit(apiKey, 3);
    // The provider ends the batch; its output file disappears before the gateway reads it (expired, deleted under
    // the shared key): read straight from the provider here, not through the gateway.
    const atProvider = (await (await fetch(`${h.upstream.url}/batches/${batch.id}`)).json()) as {
      output_file_id: string;
    };
    expect(
      (await fetch(`${h.upstream.url}/files/${atProvider.output_file_id}`, { method: 'DELETE' })).status,
    ).toBe(200);
    const done = await client.batches.retrieve(batch.id);
    expect(done.status).toBe('completed');
    const [tx] = await batchTx(apiKey);
    expect(tx!.amountMsat).toBe(-BOUND_3_LINES);
    expect(tx!.description).toBe(
      `Batch ${batch.id} completed (output unreadable): 3 of 3 lines answered, 0 failed`,
    );
    expect(await h.available(apiKey)).toBe(balanceMsat - BOUND_3_LINES);
    expect((await h.ledger.getKeyInfo({ apiKey }))!.account.reservedMsat).toBe(0);
  });
});

describe.each<PaidStore>(['sqlite', 'redis'])('batch creation answered 502 on %s', (store) => {
  const h = paidGatewayPerSuite({ store, env: { ...ENV, BATCH_POLL_MS: '40' } });
  afterEach(() => {
    h.upstream.setBehaviour({ batch: { delayMs: 0, outcome: 'completed', answered: 0, usage: undefined } });
  });

  async function batchTx(apiKey: string) {
    const page = await h.ledger.listTransactions({ apiKey });
    return page!.transactions.filter((t) => t.type === 'batch');
  }

  it('a 502 at creation is an unknown outcome: the reservation is kept, the batch found and charged once', async () => {
    h.upstream.setBehaviour({
      batch: { delayMs: 0, outcome: 'completed', answered: 0, usage: undefined, create: 'accept-then-502' },
    });
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const client = h.openai(apiKey);
    const file = await client.files.create({
      file: await toFile(Buffer.from(batchLines(3)), 'in.jsonl'),
      purpose: 'batch',
    });
    const err = (await client.batches
      .create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })
      .then(
        () => undefined,
        (e: unknown) => e,
      )) as { status: number; error: { code: string } };
    expect(err.status).toBe(502);
    expect(err.error.code).toBe('batch_outcome_unknown');
    // Kept while the watcher looks for it (not released as a 500's would be).
    expect(await h.available(apiKey)).toBe(balanceMsat - BOUND_3_LINES);
    // The watcher finds it in the provider's list, watches and settles it: 3 × 13 msat.
    await until(
      'the batch reconciled and settled',
      async () => (await batchTx(apiKey)).length === 1,
      10_000,
      25,
    );
    expect(await h.available(apiKey)).toBe(balanceMsat - 39);
    expect((await client.batches.list()).data).toHaveLength(1);
  });
});
