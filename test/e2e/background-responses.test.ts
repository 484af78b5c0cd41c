import { afterEach, describe, expect, it } from 'vitest';
import { promptTokensUpperBound } from '../../core/metering/prompt-bound.js';
import { bookPricedGatewayPerSuite } from '../support/models-file.js';
import type { PaidStore } from '../support/paid-gateway.js';
import { until } from '../support/until.js';

/**
 * Background responses are billed like batches (issue 34, item 5), end to end on both stores: the reservation is
 * kept when the provider answers `queued`, and the batch watcher settles it once from the provider's usage when the
 * response ends — however and whenever its output is read.
 *
 * Prices (models.json) at BTC $100,000, fees 1, no base fee: 1 msat per prompt token, 2 per completion token. The
 * mock provider counts ceil(characters / 4) prompt tokens ("Say something, please." = 6) and answers `chunks`
 * completion tokens.
 */
const MODELS = {
  models: [
    { id: 'mock-mini', context_length: 100_000, pricing: { prompt: '0.000001', completion: '0.000002' } },
  ],
};
const input = 'Say something, please.';
// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field
type Json = Record<string, any>;

describe.each<PaidStore>(['sqlite', 'redis'])('background responses on %s', (store) => {
  const h = bookPricedGatewayPerSuite(store, MODELS, { BATCH_POLL_MS: '100' });
  afterEach(() => {
    h.upstream.setBehaviour({ chunks: 8, backgroundPolls: 2 });
  });

  const body = { model: 'mock-mini', input, background: true, max_output_tokens: 6_000 };
  /** The reservation: the prompt bound + 6,000 output tokens × 2 msat. */
  const bound = promptTokensUpperBound(body, Buffer.byteLength(JSON.stringify(body)));
  const reservedMsat = bound + 12_000;

  function call(method: string, path: string, apiKey: string, json?: unknown): Promise<Response> {
    return fetch(`${h.baseURL}${path}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
    });
  }

  async function reserved(apiKey: string): Promise<number> {
    return (await h.ledger.getKeyInfo({ apiKey }))!.usage.reservedMsat;
  }

  it('5,000 output tokens read later are charged exactly, once, from the provider usage', async () => {
    expect(bound).toBe(140);
    const { apiKey, balanceMsat } = await h.fundKey(100);
    h.upstream.setBehaviour({ chunks: 5_000, backgroundPolls: 3 });
    const created = await call('POST', '/responses', apiKey, body);
    expect(created.status).toBe(200);
    const r = (await created.json()) as Json;
    expect(r.status).toBe('queued');
    // Not settled at the answer: the whole bound stays reserved while the provider runs it.
    expect(await reserved(apiKey)).toBe(reservedMsat);
    expect(await h.available(apiKey)).toBe(balanceMsat - reservedMsat);
    // The client reads the output whenever it likes: that read costs nothing itself.
    let done: Json | undefined;
    await until(
      'the response completed',
      async () => {
        const g = (await (await call('GET', `/responses/${r.id}`, apiKey)).json()) as Json;
        if (g.status === 'completed') done = g;
        return done !== undefined;
      },
      10_000,
      50,
    );
    expect(done!.output[0].content[0].text).toBe('tok '.repeat(5_000));
    // 6 prompt tokens × 1 + 5,000 output tokens × 2 = 10,006 msat, settled once by the watcher.
    await until('the watcher settled it', async () => (await reserved(apiKey)) === 0, 10_000, 25);
    expect(await h.available(apiKey)).toBe(balanceMsat - 10_006);
    const txs = (await h.ledger.listTransactions({ apiKey }))!.transactions;
    expect(txs.filter((t) => t.type === 'usage')).toHaveLength(1);
    expect(txs[0]).toMatchObject({ type: 'usage', estimated: false });
    // Another read later changes nothing.
    expect((await call('GET', `/responses/${r.id}`, apiKey)).status).toBe(200);
    expect(await h.available(apiKey)).toBe(balanceMsat - 10_006);
  });

  it('cancelled by its owner: charged what the provider billed (input + half the output), the rest released', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const other = await h.fundKey(1);
    h.upstream.setBehaviour({ chunks: 5_000, backgroundPolls: 1_000_000 });
    const r = (await (await call('POST', '/responses', apiKey, body)).json()) as Json;
    expect(r.status).toBe('queued');
    // Cancel, GET and DELETE answer only for the key that created it.
    expect((await call('POST', `/responses/${r.id}/cancel`, other.apiKey)).status).toBe(404);
    expect((await call('GET', `/responses/${r.id}`, other.apiKey)).status).toBe(404);
    expect((await call('DELETE', `/responses/${r.id}`, other.apiKey)).status).toBe(404);
    expect(await reserved(apiKey)).toBe(reservedMsat);
    const cancelled = await call('POST', `/responses/${r.id}/cancel`, apiKey);
    expect(cancelled.status).toBe(200);
    expect(((await cancelled.json()) as Json).status).toBe('cancelled');
    // 6 × 1 + 2,500 × 2 = 5,006 msat (the mock bills half the output of a cancelled response).
    await until('the watcher settled it', async () => (await reserved(apiKey)) === 0, 10_000, 25);
    expect(await h.available(apiKey)).toBe(balanceMsat - 5_006);
    expect(await h.available(other.apiKey)).toBe(other.balanceMsat);
  });

  it('deleted by its owner before it ended: charged its reservation, never polled forever', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    h.upstream.setBehaviour({ chunks: 5_000, backgroundPolls: 1_000_000 });
    const r = (await (await call('POST', '/responses', apiKey, body)).json()) as Json;
    expect((await call('DELETE', `/responses/${r.id}`, apiKey)).status).toBe(200);
    await until('the watcher settled it', async () => (await reserved(apiKey)) === 0, 10_000, 25);
    // 140 + 12,000 = 12,140 msat: it ran at the provider unseen.
    expect(await h.available(apiKey)).toBe(balanceMsat - 12_140);
  });

  it('a background response the provider ended at once is charged at the answer', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    h.upstream.setBehaviour({ chunks: 8, backgroundPolls: 2 });
    // A synchronous call: the watcher has nothing to do; 6 + 8 × 2 = 22 msat.
    const res = await call('POST', '/responses', apiKey, {
      model: 'mock-mini',
      input,
      max_output_tokens: 100,
    });
    expect(((await res.json()) as Json)['x-node-cost']).toMatchObject({ msats: 22 });
    expect(await h.available(apiKey)).toBe(balanceMsat - 22);
    expect(await reserved(apiKey)).toBe(0);
  });
});
