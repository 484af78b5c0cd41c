import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bolt11AmountMsat } from '../../core/wallet/bolt11.js';
import { lateBound } from '../support/late-bound.js';
import {
  type PaidGateway,
  type PaidGatewayOptions,
  type PaidStore,
  startPaidGateway,
} from '../support/paid-gateway.js';
import { until, untilValue } from '../support/until.js';
import { call, errorCode, expectAnswer } from './http.js';
import { assertDocumented } from './response-schema.js';

/**
 * The Lightning deposit endpoints over HTTP, on both stores, against the dev mint with
 * manual invoice payment: create → pending → (invoice paid) → the server issues the key without the client
 * asking → GET returns it, the balance is exactly amount × 1000 msat; top-up of an existing key; limits;
 * an unknown id; a create id is not a top-up id.
 */

/**
 * A paid gateway for the enclosing describe block (started before its tests, closed after), a request helper
 * for it, and `statusBecomes`: polls GET `path` until the deposit's status is `status`, and answers that read.
 */
function lightningGateway(opts: PaidGatewayOptions) {
  let h: PaidGateway | undefined;
  beforeAll(async () => {
    h = await startPaidGateway(opts);
  });
  afterAll(async () => {
    await h?.close();
  });
  const gw = lateBound(() => h, 'the Lightning gateway');
  const req = (method: string, path: string, o: Parameters<typeof call>[3] = {}) =>
    call(gw.gateway.url, method, path, o);
  const statusBecomes = (path: string, status: string, ms: number, everyMs: number) =>
    untilValue(
      status,
      () => req('GET', path),
      (r) => r.body.status === status,
      ms,
      everyMs,
    );
  return { h: gw, req, statusBecomes };
}

describe.each<PaidStore>(['sqlite', 'redis'])('Lightning deposit endpoints on %s', (store) => {
  const { h, req, statusBecomes } = lightningGateway({
    store,
    mint: { mintQuotePayment: 'manual' },
    env: {
      LIGHTNING_POLL_MS: '50',
      LIGHTNING_MIN_SATS: '10',
      LIGHTNING_MAX_SATS: '5000',
      LIGHTNING_CREATE_PER_MINUTE: '4',
    },
  });

  async function waitIssued(path: string): Promise<Record<string, unknown>> {
    return (await statusBecomes(path, 'issued', 5_000, 50)).body;
  }

  it('create: pending, then the server issues the key once the invoice is paid', async () => {
    const created = await req('POST', '/v1/wallet/create/lightning', {
      body: { amount_sats: 1500, name: 'ln' },
    });
    expect(created.status).toBe(201);
    assertDocumented('POST', '/v1/wallet/create/lightning', 201, created.body);
    const { id, invoice } = created.body as { id: string; invoice: string };
    expect(created.body).toMatchObject({ status: 'pending', amount_sats: 1500 });
    expect(bolt11AmountMsat(invoice)).toBe(1_500_000n);
    expect(typeof created.body.expires_at).toBe('string');
    const pending = await req('GET', `/v1/wallet/create/lightning/${id}`);
    expect(pending.status).toBe(200);
    assertDocumented('GET', '/v1/wallet/create/lightning/{id}', 200, pending.body);
    expect(pending.body).toMatchObject({ id, status: 'pending' });
    expect(pending.body.api_key).toBeUndefined();
    // Pay the invoice at the dev mint's fake Lightning: the quote is the one whose invoice this is.
    const quote = await findQuote(h, invoice);
    h.mint.payMintQuote(quote);
    // The client does not ask: the watcher credits the key (read through the ledger).
    await until(
      'the key credited',
      async () => (await h.ledger.totalUserBalancesMsat()) >= 1_500_000,
      5_000,
      50,
    );
    expect(await h.ledger.totalUserBalancesMsat()).toBeGreaterThanOrEqual(1_500_000);
    const reads = await Promise.all(
      Array.from({ length: 20 }, () => req('GET', `/v1/wallet/create/lightning/${id}`)),
    );
    const keys = new Set(reads.map((r) => r.body.api_key));
    expect(keys.size).toBe(1);
    expect(reads[0]?.body).toMatchObject({ status: 'issued', msats: 1_500_000 });
    assertDocumented('GET', '/v1/wallet/create/lightning/{id}', 200, reads[0]?.body);
    const apiKey = reads[0]?.body.api_key as string;
    expect(await h.available(apiKey)).toBe(1_500_000);
    expect((await req('GET', `/v1/wallet/topup/lightning/${id}`)).status).toBe(404);
    await h.auditOk();
  });

  it('top-up: credited to the calling key exactly once', async () => {
    const { apiKey } = await h.fundKey(20);
    const r = await req('POST', '/v1/wallet/topup/lightning', { auth: apiKey, body: { amount_sats: 40 } });
    expect(r.status).toBe(201);
    assertDocumented('POST', '/v1/wallet/topup/lightning', 201, r.body);
    const { id, invoice } = r.body as { id: string; invoice: string };
    h.mint.payMintQuote(await findQuote(h, invoice));
    const done = await waitIssued(`/v1/wallet/topup/lightning/${id}`);
    expect(done).toMatchObject({ status: 'issued', msats: 40_000 });
    assertDocumented('GET', '/v1/wallet/topup/lightning/{id}', 200, done);
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

describe.each<PaidStore>(['sqlite', 'redis'])(
  'Lightning deposits over HTTP with no NUT-17 and polling off (%s)',
  (store) => {
    // The mint offers no NUT-17 and the watcher waits ten minutes between passes: only the client's GETs
    // can finish a deposit here, so they race each other for the mint and the key.
    const { h, req, statusBecomes } = lightningGateway({
      store,
      mint: { mintQuotePayment: 'manual', nut17: false, mintQuoteTtlS: 3 },
      env: { LIGHTNING_POLL_MS: '600000', LIGHTNING_CREATE_PER_MINUTE: '100' },
    });

    it('20 concurrent GETs racing a paid, not yet issued deposit: one key, the same in every answer', async () => {
      const usersBefore = await h.ledger.totalUserBalancesMsat();
      const created = await req('POST', '/v1/wallet/create/lightning', { body: { amount_sats: 777 } });
      expect(created.status).toBe(201);
      const { id, invoice } = created.body as { id: string; invoice: string };
      h.mint.payMintQuote(await findQuote(h, invoice));
      // Paid at the mint, nothing minted or credited yet (no push, no watcher pass).
      expect(await h.ledger.totalUserBalancesMsat()).toBe(usersBefore);
      const path = `/v1/wallet/create/lightning/${id}`;
      const reads = await Promise.all(Array.from({ length: 20 }, () => req('GET', path)));
      for (const r of reads) {
        expect(r.status).toBe(200);
        assertDocumented('GET', '/v1/wallet/create/lightning/{id}', 200, r.body);
        // A GET that lost the race to mint says paid (the winner is minting), never pending.
        expect(['paid', 'issued']).toContain(r.body.status);
        expect(r.body.api_key === undefined).toBe(r.body.status !== 'issued');
      }
      const keys = new Set(reads.flatMap((r) => (r.body.api_key === undefined ? [] : [r.body.api_key])));
      expect(keys.size).toBeLessThanOrEqual(1);
      // Whoever asks next gets the key (bounded wait for a winner that is still crediting).
      const last = await statusBecomes(path, 'issued', 5_000, 50);
      expect(last.body).toMatchObject({ status: 'issued', msats: 777_000 });
      const apiKey = last.body.api_key as string;
      expect(apiKey).toMatch(/^sk-/);
      for (const k of keys) expect(k).toBe(apiKey);
      expect(await h.available(apiKey)).toBe(777_000);
      expect(await h.ledger.totalUserBalancesMsat()).toBe(usersBefore + 777_000);
      await h.auditOk();
    });

    it('an unpaid invoice past its expiry answers expired and is never credited', async () => {
      const usersBefore = await h.ledger.totalUserBalancesMsat();
      const created = await req('POST', '/v1/wallet/create/lightning', { body: { amount_sats: 55 } });
      expect(created.status).toBe(201);
      const { id, invoice, expires_at } = created.body as { id: string; invoice: string; expires_at: string };
      const path = `/v1/wallet/create/lightning/${id}`;
      expect((await req('GET', path)).body.status).toBe('pending');
      // The mint's expiry is whole seconds (3 s here): wait for it to pass, then ask.
      await until('the invoice past its expiry', () => Date.now() > Date.parse(expires_at) + 50, 10_000, 20);
      const v = await statusBecomes(path, 'expired', 4_000, 100);
      expect(v.status).toBe(200);
      assertDocumented('GET', '/v1/wallet/create/lightning/{id}', 200, v.body);
      expect(v.body).toMatchObject({ id, status: 'expired', amount_sats: 55 });
      expect(v.body.api_key).toBeUndefined();
      // The mint no longer takes the payment; the deposit stays expired.
      expect(() => h.mint.payMintQuote(h.mint.quoteForInvoice(invoice) ?? '')).toThrow();
      expect((await req('GET', path)).body).toMatchObject({ status: 'expired' });
      expect(await h.ledger.totalUserBalancesMsat()).toBe(usersBefore);
    });

    it('the mint down: creation answers 503 mint_unavailable, a paid deposit waits and is issued once it is back', async () => {
      const usersBefore = await h.ledger.totalUserBalancesMsat();
      const created = await req('POST', '/v1/wallet/create/lightning', { body: { amount_sats: 91 } });
      const { id, invoice } = created.body as { id: string; invoice: string };
      h.mint.payMintQuote(await findQuote(h, invoice));
      const path = `/v1/wallet/create/lightning/${id}`;
      h.mint.setOutage(503);
      try {
        const refused = await req('POST', '/v1/wallet/create/lightning', { body: { amount_sats: 91 } });
        expect([refused.status, errorCode(refused)]).toEqual([503, 'mint_unavailable']);
        const waiting = await req('GET', path);
        expectAnswer(waiting, 200, { id, status: 'pending' });
        expect(waiting.body.api_key).toBeUndefined();
      } finally {
        h.mint.setOutage(null);
      }
      expect(await h.ledger.totalUserBalancesMsat()).toBe(usersBefore);
      const done = await req('GET', path);
      expect(done.body).toMatchObject({ status: 'issued', msats: 91_000 });
      expect(await h.available(done.body.api_key as string)).toBe(91_000);
      expect(await h.ledger.totalUserBalancesMsat()).toBe(usersBefore + 91_000);
      await h.auditOk();
    });
  },
);

/** The dev mint's quote id for an invoice it issued (read from the mint's own quote list over NUT-04). */
async function findQuote(h: PaidGateway, invoice: string): Promise<string> {
  const q = h.mint.quoteForInvoice(invoice);
  if (!q) throw new Error('no quote for that invoice');
  return q;
}
