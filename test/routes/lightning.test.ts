import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PaidGateway, type PaidStore, startPaidGateway } from '../support/paid-gateway.js';
import { call, errorCode } from './http.js';

/**
 * The Lightning deposit endpoints over HTTP (issue 13 items 1-3), on both stores, against the dev mint with
 * manual invoice payment: create → pending → (invoice paid) → the server issues the key without the client
 * asking → GET returns it, the balance is exactly amount × 1000 msat; top-up of an existing key; limits;
 * an unknown id; a create id is not a top-up id.
 */

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe.each<PaidStore>(['sqlite', 'redis'])('Lightning deposit endpoints on %s', (store) => {
  let h: PaidGateway;
  const req = (method: string, path: string, opts: Parameters<typeof call>[3] = {}) =>
    call(h.gateway.url, method, path, opts);

  beforeAll(async () => {
    h = await startPaidGateway({
      store,
      mint: { mintQuotePayment: 'manual' },
      env: {
        LIGHTNING_POLL_MS: '50',
        LIGHTNING_MIN_SATS: '10',
        LIGHTNING_MAX_SATS: '5000',
        LIGHTNING_CREATE_PER_MINUTE: '4',
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  async function waitIssued(path: string): Promise<Record<string, unknown>> {
    for (let i = 0; i < 100; i++) {
      const v = await req('GET', path);
      if (v.body.status === 'issued') return v.body;
      await sleep(50);
    }
    throw new Error('not issued');
  }

  it('create: pending, then the server issues the key once the invoice is paid', async () => {
    const created = await req('POST', '/v1/wallet/create/lightning', {
      body: { amount_sats: 1500, name: 'ln' },
    });
    expect(created.status).toBe(201);
    const { id, invoice } = created.body as { id: string; invoice: string };
    expect(created.body).toMatchObject({ status: 'pending', amount_sats: 1500 });
    expect(invoice).toMatch(/^lnbcrt15000n1/);
    expect(typeof created.body.expires_at).toBe('string');
    const pending = await req('GET', `/v1/wallet/create/lightning/${id}`);
    expect(pending.status).toBe(200);
    expect(pending.body).toMatchObject({ id, status: 'pending' });
    expect(pending.body.api_key).toBeUndefined();
    // Pay the invoice at the dev mint's fake Lightning: the quote is the one whose invoice this is.
    const quote = await findQuote(h, invoice);
    h.mint.payMintQuote(quote);
    // The client does not ask: the watcher credits the key (read through the ledger).
    let credited = false;
    for (let i = 0; i < 100 && !credited; i++) {
      credited = (await h.ledger.totalUserBalancesMsat()) >= 1_500_000;
      if (!credited) await sleep(50);
    }
    expect(credited).toBe(true);
    const reads = await Promise.all(
      Array.from({ length: 20 }, () => req('GET', `/v1/wallet/create/lightning/${id}`)),
    );
    const keys = new Set(reads.map((r) => r.body.api_key));
    expect(keys.size).toBe(1);
    expect(reads[0]?.body).toMatchObject({ status: 'issued', msats: 1_500_000 });
    const apiKey = reads[0]?.body.api_key as string;
    expect(await h.available(apiKey)).toBe(1_500_000);
    expect((await req('GET', `/v1/wallet/topup/lightning/${id}`)).status).toBe(404);
    await h.auditOk();
  });

  it('top-up: credited to the calling key exactly once', async () => {
    const { apiKey } = await h.fundKey(20);
    const r = await req('POST', '/v1/wallet/topup/lightning', { auth: apiKey, body: { amount_sats: 40 } });
    expect(r.status).toBe(201);
    const { id, invoice } = r.body as { id: string; invoice: string };
    h.mint.payMintQuote(await findQuote(h, invoice));
    const done = await waitIssued(`/v1/wallet/topup/lightning/${id}`);
    expect(done).toMatchObject({ status: 'issued', msats: 40_000 });
    expect(done.api_key).toBeUndefined();
    expect(await h.available(apiKey)).toBe(60_000);
    await req('GET', `/v1/wallet/topup/lightning/${id}`);
    expect(await h.available(apiKey)).toBe(60_000);
    const anon = await req('POST', '/v1/wallet/topup/lightning', { body: { amount_sats: 40 } });
    expect(anon.status).toBe(401);
    await h.auditOk();
  });

  it('limits and unknown ids', async () => {
    const low = await req('POST', '/v1/wallet/create/lightning', { body: { amount_sats: 9 } });
    expect([low.status, errorCode(low)]).toEqual([400, 'invalid_request']);
    const high = await req('POST', '/v1/wallet/create/lightning', { body: { amount_sats: 5001 } });
    expect([high.status, errorCode(high)]).toEqual([400, 'invalid_request']);
    const unknown = await req('GET', '/v1/wallet/create/lightning/lnd_nope');
    expect([unknown.status, errorCode(unknown)]).toEqual([404, 'not_found']);
  });

  it('limits invoice creation per client IP (4 a minute here, shared by every process)', async () => {
    // The window is a fixed wall-clock minute in the store: 2 were used above, and a minute boundary may fall
    // between two of these requests, so up to 4 more may pass before the limit answers — never a fifth.
    const sent: Array<{ status: number; minute: number | null }> = [];
    let refused: Awaited<ReturnType<typeof req>> | undefined;
    for (let i = 0; i < 7 && refused === undefined; i++) {
      const start = Math.floor(Date.now() / 60_000);
      const r = await req('POST', '/v1/wallet/create/lightning', { body: { amount_sats: 10 } });
      const end = Math.floor(Date.now() / 60_000);
      sent.push({ status: r.status, minute: start === end ? start : null });
      if (r.status !== 201) refused = r;
    }
    expect(refused, JSON.stringify(sent)).toBeDefined();
    expect([refused!.status, errorCode(refused!)]).toEqual([429, 'rate_limit_exceeded']);
    // Within the refusal's minute at most 4 were let through (2 of them possibly above).
    const minute = sent.at(-1)!.minute;
    if (minute !== null) {
      expect(sent.filter((x) => x.status === 201 && x.minute === minute).length).toBeLessThanOrEqual(4);
    }
    const retry = Number(refused!.headers.get('retry-after'));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
  });
});

/** The dev mint's quote id for an invoice it issued (read from the mint's own quote list over NUT-04). */
async function findQuote(h: PaidGateway, invoice: string): Promise<string> {
  const q = h.mint.quoteForInvoice(invoice);
  if (!q) throw new Error('no quote for that invoice');
  return q;
}
