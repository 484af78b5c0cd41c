import { toFile } from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MockBatchBehaviour } from '../../bench/upstream/mock-batches.js';
import { newWebhookSecret } from '../../core/events/signing.js';
import { Receiver } from '../events/support/receiver.js';
import { batchLines, createBatch, expectUploadRefused, uploadBatchInput } from '../support/batches.js';
import { type PaidStore, paidGatewayPerSuite } from '../support/paid-gateway.js';
import { BOOK_PRICES } from '../support/prices.js';
import { until } from '../support/until.js';

/**
 * The Batch API and Files end to end with the official openai SDK, on SQLite and Redis.
 *
 * Prices: model pricing with BTC pinned at 100,000 USD (1 USD = 1,000,000 msat), fees 1, no base fee; the mock's
 * mock-gpt costs 0.000001 USD per prompt token (1 msat) and 0.000002 per completion token (2 msat). Each line has a
 * 40-character message (10 prompt tokens) and the mock answers 8 completion tokens: 10 + 16 = 26 msat
 * synchronously, 13 msat at the default batch factor 0.5.
 */

const ENV = {
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_POLL_MS: '20',
  ...BOOK_PRICES,
  BATCH_POLL_MS: '40',
  BATCH_RECONCILE_POLLS: '3',
  // The create call the mock never answers times out in 3 s.
  UPSTREAM_TIMEOUT_MS: '3000',
};

/**
 * What the 2 lines of jsonl(2) (max_tokens 20) reserve: each line's synchronous bound (its prompt-token bound from
 * the line's bytes, 1 msat each, plus 20 completion tokens at 2 msat) is 208 msat, 104 msat at the batch factor 0.5.
 */
const BOUND_2_LINES = 208;

const jsonl = batchLines;

describe.each<PaidStore>(['sqlite', 'redis'])('batches on %s', (store) => {
  const rx = new Receiver();
  beforeAll(() => rx.start());
  afterAll(() => rx.close());
  const h = paidGatewayPerSuite({ store, env: ENV });
  // Before the fixture's audit (after-hooks run last registered first).
  afterEach(() => {
    h.upstream.setBehaviour({ batch: { delayMs: 0, outcome: 'completed', answered: 0, usage: undefined } });
  });

  type Create = NonNullable<MockBatchBehaviour['create']>;
  function creating(create: Create, delayMs = 0): void {
    h.upstream.setBehaviour({
      batch: { delayMs, outcome: 'completed', answered: 0, usage: undefined, create },
    });
  }

  /** Batches complete after `delayMs` with no line answered in the output, the provider reporting `usage` per line. */
  function reporting(usage: { prompt_tokens: number; completion_tokens: number }, delayMs = 0): void {
    h.upstream.setBehaviour({ batch: { delayMs, outcome: 'completed', answered: 0, usage } });
  }

  const errorOf = (p: Promise<unknown>) =>
    p.then(
      () => {
        throw new Error('expected an error');
      },
      (e: { status: number; error: { code: string; message: string; details?: unknown } }) => e,
    );

  async function reservedOf(apiKey: string): Promise<number> {
    return (await h.ledger.getKeyInfo({ apiKey }))!.account.reservedMsat;
  }

  async function upload(apiKey: string, lines: number, maxTokens = 20) {
    const client = h.openai(apiKey);
    const file = await uploadBatchInput(client, jsonl(lines, maxTokens));
    return { client, file };
  }

  async function batchTx(apiKey: string) {
    const page = await h.ledger.listTransactions({ apiKey });
    return page!.transactions.filter((t) => t.type === 'batch');
  }

  async function submit(apiKey: string, lines: number, maxTokens = 20) {
    const { client, file } = await upload(apiKey, lines, maxTokens);
    const batch = await createBatch(client, file.id);
    return { client, file, batch };
  }

  it('uploads, creates, waits and reads the output; charges the answered lines at the batch rate, once; batch.completed delivered', async () => {
    const { apiKey, keyId, balanceMsat } = await h.fundKey(100);
    const hook = await fetch(`${h.gateway.url}/v1/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        url: `${rx.url}/${store}/batch`,
        events: ['batch.completed'],
        secret: newWebhookSecret(),
      }),
    });
    expect(hook.status).toBe(201);
    const { client, batch } = await submit(apiKey, 3);
    await until('the batch is settled', async () => (await batchTx(apiKey)).length === 1);
    const done = await client.batches.retrieve(batch.id);
    expect(done.status).toBe('completed');
    const output = await (await client.files.content(done.output_file_id!)).text();
    expect(output.trim().split('\n')).toHaveLength(3);
    // 3 lines × ceil(26 × 0.5) = 39 msat; the rest of the reservation is back.
    expect(await h.available(apiKey)).toBe(balanceMsat - 39);
    const [tx] = await batchTx(apiKey);
    expect(tx!.amountMsat).toBe(-39);
    expect(tx!.description).toBe(`Batch ${batch.id} completed: 3 of 3 lines answered, 0 failed`);
    const info = await h.ledger.getKeyInfo({ apiKey });
    expect(info!.account.reservedMsat).toBe(0);
    // The audit trail records the settlement against the key.
    const audit = h.gateway.services.audit!;
    await until('the settlement is in the audit trail', async () => {
      await audit.flush();
      const page = await audit.list({ keyId, limit: 50 });
      return page.data.some(
        (r) => r.method === 'SETTLE' && r.endpoint === `/v1/batches/${batch.id}` && r.cost_msats === 39,
      );
    });
    await until('batch.completed is delivered', () => rx.on(`/${store}/batch`).length === 1);
    expect(JSON.parse(rx.on(`/${store}/batch`)[0]!.body)).toMatchObject({
      type: 'batch.completed',
      data: {
        key_id: keyId,
        batch_id: batch.id,
        status: 'completed',
        lines: 3,
        answered: 3,
        failed: 0,
        charged_msats: 39,
        transaction_id: tx!.id,
      },
    });
  });

  it('prices at the model’s pricing.batch multiplier when its price book entry sets one', async () => {
    // The multiplier is read from the model's catalogue entry at upload; here it comes from the provider's list.
    h.upstream.setBehaviour({
      models: [
        {
          id: 'mock-gpt',
          object: 'model',
          created: 1_700_000_000,
          owned_by: 'mock',
          context_length: 8192,
          pricing: { prompt: '0.000001', completion: '0.000002', request: '0', batch: '0.25' },
        },
      ],
    });
    await h.gateway.services.catalog.refresh();
    try {
      const { apiKey, balanceMsat } = await h.fundKey(100);
      await submit(apiKey, 2);
      await until('the batch is settled', async () => (await batchTx(apiKey)).length === 1);
      // 2 lines × ceil(26 × 0.25) = 2 × 7 = 14 msat.
      expect(await h.available(apiKey)).toBe(balanceMsat - 14);
    } finally {
      h.upstream.setBehaviour({
        models: (await import('../../bench/upstream/mock-upstream.js')).DEFAULT_MODELS,
      });
      await h.gateway.services.catalog.refresh();
    }
  });

  it('answers 402 with the bound before the provider sees a batch the balance cannot cover', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(5);
    const client = h.openai(apiKey);
    // 2 lines asking up to 1,000,000 completion tokens: ≥ 2 × 1,000,000 × 2 × 0.5 msat, far above 5 sats.
    const file = await client.files.create({
      file: await toFile(Buffer.from(jsonl(2, 1_000_000)), 'input.jsonl'),
      purpose: 'batch',
    });
    const before = h.upstream.stats.requests;
    const err = await client.batches
      .create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })
      .catch((e: unknown) => e as { status: number; error: { code: string; details: { required: number } } });
    expect(err).toMatchObject({ status: 402, error: { code: 'payment_required' } });
    expect((err as { error: { details: { required: number } } }).error.details.required).toBeGreaterThan(
      2_000_000,
    );
    expect(h.upstream.stats.requests).toBe(before);
    expect(await h.available(apiKey)).toBe(balanceMsat);
  });

  it('refuses a malformed line, an unknown model, a wrong url, a repeated custom_id (400 naming the line), another purpose and X-Cashu; nothing is relayed', async () => {
    const { apiKey } = await h.fundKey(10);
    const before = h.upstream.stats.requests;
    const bad = [
      [`${jsonl(1)}{not json}\n`, 'Batch input line 2: not valid JSON'],
      [jsonl(1, 20, 'no-such-model'), 'Batch input line 1: unknown model no-such-model'],
      [
        `${jsonl(2)}${jsonl(1).replace('/v1/chat/completions', '/v1/fine_tuning/jobs').replace('req-0', 'req-2')}`,
        'Batch input line 3: url must be one of',
      ],
      [`${jsonl(2)}${jsonl(1)}`, 'Batch input line 3: custom_id req-0 repeats an earlier line'],
    ] as const;
    for (const [text, message] of bad) {
      const form = new FormData();
      form.set('purpose', 'batch');
      form.set('file', new Blob([text]), 'input.jsonl');
      const r = await fetch(`${h.baseURL}/files`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}` },
        body: form,
      });
      expect(r.status).toBe(400);
      const body = (await r.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('invalid_request');
      expect(body.error.message.slice(0, message.length)).toBe(message);
    }
    const other = new FormData();
    other.set('purpose', 'fine-tune');
    other.set('file', new Blob([jsonl(1)]), 'input.jsonl');
    await expectUploadRefused(
      h.baseURL,
      apiKey,
      other,
      'Uploads with purpose "fine-tune" are not enabled on this node (FILES_OTHER_PURPOSES)',
    );
    // X-Cashu pays for one model call and names no account: it cannot own a file.
    const cashu = await fetch(`${h.baseURL}/files`, {
      method: 'GET',
      headers: { 'x-cashu': await h.mintToken(1) },
    });
    expect(cashu.status).toBe(400);
    expect(h.upstream.stats.requests).toBe(before);
  });

  it('hides a key’s batch, input file, output file and response from every other key (404)', async () => {
    const a = await h.fundKey(100);
    const b = await h.fundKey(100);
    const { file, batch } = await submit(a.apiKey, 1);
    await until('the batch is settled', async () => (await batchTx(a.apiKey)).length === 1);
    const mine = await h.openai(a.apiKey).batches.retrieve(batch.id);
    const other = h.openai(b.apiKey);
    const status = (p: Promise<unknown>) =>
      p.then(
        () => 200,
        (e: { status: number }) => e.status,
      );
    expect(await status(other.batches.retrieve(batch.id))).toBe(404);
    expect(await status(other.batches.cancel(batch.id))).toBe(404);
    expect(await status(other.files.retrieve(file.id))).toBe(404);
    expect(await status(other.files.content(file.id))).toBe(404);
    expect(await status(other.files.content(mine.output_file_id!))).toBe(404);
    expect(await status(other.files.delete(file.id))).toBe(404);
    expect((await other.batches.list()).data).toEqual([]);
    expect((await other.files.list()).data).toEqual([]);
    expect((await h.openai(a.apiKey).batches.list()).data.map((x) => x.id)).toEqual([batch.id]);
    // The owner still reads both files.
    expect(await status(h.openai(a.apiKey).files.content(mine.output_file_id!))).toBe(200);

    const created = await h
      .openai(a.apiKey)
      .responses.create({ model: 'mock-gpt', input: 'hello', max_output_tokens: 8 });
    expect(await status(h.openai(a.apiKey).responses.retrieve(created.id))).toBe(200);
    expect(await status(other.responses.retrieve(created.id))).toBe(404);
    expect(await status(other.responses.inputItems.list(created.id))).toBe(404);
    expect(await status(other.responses.delete(created.id))).toBe(404);
    // Nor can another key continue it: its stored conversation stays with its key.
    const before = h.upstream.stats.requests;
    expect(
      await status(
        other.responses.create({ model: 'mock-gpt', input: 'go on', previous_response_id: created.id }),
      ),
    ).toBe(404);
    expect(h.upstream.stats.requests).toBe(before);
    expect(
      await status(
        h
          .openai(a.apiKey)
          .responses.create({ model: 'mock-gpt', input: 'go on', previous_response_id: created.id }),
      ),
    ).toBe(200);
    // A streamed response is recorded from its response.created event.
    const stream = await h
      .openai(a.apiKey)
      .responses.create({ model: 'mock-gpt', input: 'hi', stream: true });
    let streamedId = '';
    for await (const ev of stream) if (ev.type === 'response.created') streamedId = ev.response.id;
    await until(
      'the streamed response is recorded',
      async () => (await h.gateway.services.objects!.get(streamedId)) !== null,
    );
    expect(await status(other.responses.retrieve(streamedId))).toBe(404);
    expect(await status(h.openai(a.apiKey).responses.retrieve(streamedId))).toBe(200);
  });

  it.each([
    ['failed', 1, 13],
    ['expired', 2, 26],
  ] as const)(
    'a %s batch with partial output charges only its %i answered line(s): %i msat',
    async (outcome, answered, charge) => {
      h.upstream.setBehaviour({ batch: { delayMs: 0, outcome, answered, usage: undefined } });
      const { apiKey, balanceMsat } = await h.fundKey(100);
      const { batch } = await submit(apiKey, 3);
      await until('the batch is settled', async () => (await batchTx(apiKey)).length === 1);
      expect(await h.available(apiKey)).toBe(balanceMsat - charge);
      const [tx] = await batchTx(apiKey);
      expect(tx!.description).toBe(
        `Batch ${batch.id} ${outcome}: ${answered} of 3 lines answered, ${3 - answered} failed`,
      );
    },
  );

  it('a cancelled batch charges only the lines answered before the cancel', async () => {
    h.upstream.setBehaviour({
      batch: { delayMs: 600_000, outcome: 'completed', answered: 1, usage: undefined },
    });
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const { client, batch } = await submit(apiKey, 4);
    // While it runs, its bound is reserved.
    const reserved = (await h.ledger.getKeyInfo({ apiKey }))!.account.reservedMsat;
    expect(reserved).toBeGreaterThan(4 * 13);
    expect(await h.available(apiKey)).toBe(balanceMsat - reserved);
    expect((await client.batches.cancel(batch.id)).status).toBe('cancelled');
    await until('the batch is settled', async () => (await batchTx(apiKey)).length === 1);
    expect(await h.available(apiKey)).toBe(balanceMsat - 13);
  });

  it('charges the usage the provider reports per line', async () => {
    reporting({ prompt_tokens: 100, completion_tokens: 50 }, 0);
    const { apiKey, balanceMsat } = await h.fundKey(100);
    await submit(apiKey, 2, 60);
    await until('the batch is settled', async () => (await batchTx(apiKey)).length === 1);
    // (100 + 50 × 2) × 0.5 = 100 msat per line.
    expect(await h.available(apiKey)).toBe(balanceMsat - 200);
  });

  it.each([
    ['drops the connection', 'accept-then-drop'],
    ['never answers', 'accept-then-hang'],
  ] as const)(
    'a batch the provider made but whose creation %s keeps its reservation, is found by reconciliation and charged exactly once',
    async (_what, create) => {
      creating(create, 200);
      const { apiKey, balanceMsat } = await h.fundKey(100);
      const { client, file } = await upload(apiKey, 3);
      const err = await errorOf(createBatch(client, file.id));
      expect(err.status).toBe(502);
      expect(err.error.code).toBe('batch_outcome_unknown');
      expect(err.error.message).toContain('appears in GET /v1/batches');
      expect(err.error.details).toEqual({ input_file_id: file.id });
      await until('the batch is found and settled', async () => (await batchTx(apiKey)).length === 1);
      // 3 lines × 13 msat, once; nothing left reserved.
      const txs = await batchTx(apiKey);
      expect(txs.map((t) => t.amountMsat)).toEqual([-39]);
      expect(await reservedOf(apiKey)).toBe(0);
      expect(await h.available(apiKey)).toBe(balanceMsat - 39);
      // The batch is the key's: listed and readable by it, 404 for another key.
      const listed = (await client.batches.list()).data;
      expect(listed.map((b) => b.input_file_id)).toEqual([file.id]);
      const batchId = listed[0]!.id;
      expect(txs[0]!.description).toBe(`Batch ${batchId} completed: 3 of 3 lines answered, 0 failed`);
      expect((await client.batches.retrieve(batchId)).status).toBe('completed');
      const other = await h.fundKey(1);
      expect((await errorOf(h.openai(other.apiKey).batches.retrieve(batchId))).status).toBe(404);
    },
    20_000,
  );

  it('a creation whose connection drops before the provider made the batch keeps its reservation while reconciling, then releases it', async () => {
    creating('drop');
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const { client, file } = await upload(apiKey, 3);
    const err = await errorOf(createBatch(client, file.id));
    expect(err.status).toBe(502);
    expect(err.error.code).toBe('batch_outcome_unknown');
    const reserved = await reservedOf(apiKey);
    expect(reserved).toBeGreaterThan(3 * 13);
    await until('the reservation is released', async () => (await reservedOf(apiKey)) === 0);
    expect(await h.available(apiKey)).toBe(balanceMsat);
    expect(await batchTx(apiKey)).toEqual([]);
    expect((await client.batches.list()).data).toEqual([]);
  });

  it.each([
    ['refuses it (400)', 'refuse', 400, 'Batch refused'],
    ['fails it (500)', 'fail', 502, 'The provider answered 500 to POST /v1/batches'],
  ] as const)(
    'a provider that %s releases the reservation at once',
    async (_what, create, status, message) => {
      creating(create);
      const { apiKey, balanceMsat } = await h.fundKey(100);
      const { client, file } = await upload(apiKey, 3);
      const err = await errorOf(createBatch(client, file.id));
      expect(err.status).toBe(status);
      expect(err.error.message).toBe(message);
      // Released before the answer: no poll needed.
      expect(await reservedOf(apiKey)).toBe(0);
      expect(await h.available(apiKey)).toBe(balanceMsat);
      expect((await client.batches.list()).data).toEqual([]);
    },
  );

  it('another key cannot create a batch from someone else’s input file: 404, nothing reserved, nothing relayed', async () => {
    const a = await h.fundKey(100);
    const b = await h.fundKey(100);
    const { file } = await upload(a.apiKey, 2);
    const before = h.upstream.stats.requests;
    const err = await errorOf(createBatch(h.openai(b.apiKey), file.id));
    expect(err.status).toBe(404);
    expect(err.error.code).toBe('not_found');
    expect(h.upstream.stats.requests).toBe(before);
    expect(await reservedOf(b.apiKey)).toBe(0);
    expect(await h.available(b.apiKey)).toBe(b.balanceMsat);
    expect(await reservedOf(a.apiKey)).toBe(0);
  });

  it('a batch’s error file is its key’s: 404 for another key', async () => {
    h.upstream.setBehaviour({ batch: { delayMs: 0, outcome: 'failed', answered: 1, usage: undefined } });
    const a = await h.fundKey(100);
    const b = await h.fundKey(100);
    const { client, batch } = await submit(a.apiKey, 3);
    await until('the batch is settled', async () => (await batchTx(a.apiKey)).length === 1);
    const done = await client.batches.retrieve(batch.id);
    expect(done.error_file_id).toEqual(expect.any(String));
    const other = h.openai(b.apiKey);
    expect((await errorOf(other.files.content(done.error_file_id!))).status).toBe(404);
    expect((await errorOf(other.files.retrieve(done.error_file_id!))).status).toBe(404);
    expect((await errorOf(other.files.delete(done.error_file_id!))).status).toBe(404);
    const errors = await (await client.files.content(done.error_file_id!)).text();
    expect(errors.trim().split('\n')).toHaveLength(2);
  });

  it('charges exactly the reservation when the reported usage costs more', async () => {
    reporting({ prompt_tokens: 1_000_000, completion_tokens: 1_000_000 }, 600_000);
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const { batch } = await submit(apiKey, 2);
    // The bound of 2 lines, each reserved at its synchronous bound × 0.5 (rounded up).
    expect(await reservedOf(apiKey)).toBe(BOUND_2_LINES);
    reporting({ prompt_tokens: 1_000_000, completion_tokens: 1_000_000 }, 0);
    await until('the batch is settled', async () => (await batchTx(apiKey)).length === 1);
    // (1,000,000 + 2,000,000) × 0.5 = 1,500,000 msat per line would be due; the reservation caps it.
    const [tx] = await batchTx(apiKey);
    expect(tx!.amountMsat).toBe(-BOUND_2_LINES);
    expect(tx!.description).toBe(`Batch ${batch.id} completed: 2 of 2 lines answered, 0 failed`);
    expect(await h.available(apiKey)).toBe(balanceMsat - BOUND_2_LINES);
    expect(await reservedOf(apiKey)).toBe(0);
  });

  it('lists each key’s own files and batches, newest first, paged with limit and after, whatever other keys made in between', async () => {
    const keys = [await h.fundKey(100), await h.fundKey(100)];
    const files: string[][] = [[], []];
    for (let i = 0; i < 3; i++) {
      for (const k of [0, 1]) files[k]!.push((await upload(keys[k]!.apiKey, 1)).file.id);
    }
    const page = async (apiKey: string, what: 'files' | 'batches', query: string) => {
      const r = await fetch(`${h.baseURL}/${what}?${query}`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      expect(r.status).toBe(200);
      const body = (await r.json()) as {
        object: string;
        data: Array<{ id: string }>;
        first_id: string | null;
        last_id: string | null;
        has_more: boolean;
      };
      return { ...body, ids: body.data.map((o) => o.id) };
    };
    const pagesOf = async (apiKey: string, what: 'files' | 'batches', own: string[]) => {
      const [x1, x2, x3] = own;
      const first = await page(apiKey, what, 'limit=2');
      expect(first).toMatchObject({
        object: 'list',
        ids: [x3, x2],
        first_id: x3,
        last_id: x2,
        has_more: true,
      });
      const second = await page(apiKey, what, `limit=2&after=${x2}`);
      expect(second).toMatchObject({ ids: [x1], first_id: x1, last_id: x1, has_more: false });
      expect((await page(apiKey, what, `limit=2&after=${x1}`)).ids).toEqual([]);
      // Another key's id as the cursor names nothing of this key's.
      const other = own === files[0] ? files[1]! : files[0]!;
      if (what === 'files') expect((await page(apiKey, what, `after=${other[0]}`)).ids).toEqual([]);
    };
    for (const k of [0, 1]) {
      await pagesOf(keys[k]!.apiKey, 'files', files[k]!);
      // The SDK's auto-pagination follows after/has_more.
      const all: string[] = [];
      for await (const f of h.openai(keys[k]!.apiKey).files.list({ limit: 2 })) all.push(f.id);
      expect(all).toEqual([...files[k]!].reverse());
    }

    // Batches, made interleaved from those files, still running.
    h.upstream.setBehaviour({
      batch: { delayMs: 600_000, outcome: 'completed', answered: 0, usage: undefined },
    });
    const batches: string[][] = [[], []];
    for (let i = 0; i < 3; i++) {
      for (const k of [0, 1]) {
        const b = await h.openai(keys[k]!.apiKey).batches.create({
          input_file_id: files[k]![i]!,
          endpoint: '/v1/chat/completions',
          completion_window: '24h',
        });
        batches[k]!.push(b.id);
      }
    }
    for (const k of [0, 1]) {
      await pagesOf(keys[k]!.apiKey, 'batches', batches[k]!);
      const listed = await page(keys[k]!.apiKey, 'batches', '');
      expect(listed.data.map((b) => (b as { input_file_id?: string }).input_file_id)).toEqual(
        [...files[k]!].reverse(),
      );
    }
    // Refused rather than ignored: a limit out of range, a filter the store cannot apply.
    for (const q of ['limit=0', 'limit=101', 'limit=x', 'purpose=batch', 'order=asc']) {
      const r = await fetch(`${h.baseURL}/files?${q}`, {
        headers: { authorization: `Bearer ${keys[0]!.apiKey}` },
      });
      expect(r.status, q).toBe(400);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('invalid_request');
    }

    h.upstream.setBehaviour({ batch: { delayMs: 0, outcome: 'completed', answered: 0, usage: undefined } });
    for (const k of [0, 1]) {
      await until('the key’s batches are settled', async () => (await batchTx(keys[k]!.apiKey)).length === 3);
      expect(await h.available(keys[k]!.apiKey)).toBe(keys[k]!.balanceMsat - 3 * 13);
    }
  });
});
