import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadDoorSecret } from '../../core/doors/door-secrets.js';
import { issueMacaroon } from '../../core/doors/l402.js';
import { doorIdentity, L402_SERVICE } from '../../core/doors/payment-doors.js';
import { decodeBolt11 } from '../../core/wallet/bolt11.js';
import { type PaidStore, paidGatewayPerSuite } from '../support/paid-gateway.js';
import { TOKEN_PRICES } from '../support/prices.js';

/**
 * Bad Lightning-door credentials get clear 401 / 402 answers and credit nothing, on both stores: a tampered
 * macaroon, a wrong preimage, an unpaid invoice, an altered or replayed MPP challenge, an expired macaroon; and
 * the same preimage presented twice at once is credited once. The dev mint leaves quotes unpaid until paid.
 */
const ENV = { ...TOKEN_PRICES, L402_MIN_SATS: '50' };
const messages = [{ role: 'user' as const, content: 'Say something, please.' }];
const CALL = 3000;
const INVOICE = 50_000;

interface Offer {
  invoice: string;
  macaroon: string;
  paymentHash: string;
  payment: Record<string, string>;
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

describe.each<PaidStore>(['sqlite', 'redis'])('Lightning door credentials on %s', (store) => {
  const h = paidGatewayPerSuite({ store, env: ENV, mint: { mintQuotePayment: 'manual' } });
  const body = JSON.stringify({ model: 'mock-gpt', messages, max_tokens: 4 });
  const call = (authorization?: string) =>
    fetch(`${h.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      body,
    });
  const codeOf = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;
  const credited = async (paymentHash: string) =>
    (await h.ledger.getKeyInfo({ tokenHash: doorIdentity(paymentHash) }))?.availableMsat ?? null;

  /** An unpaid call's offer: the invoice, the macaroon and the Payment challenge's parameters. */
  async function offer(): Promise<Offer> {
    const res = await call();
    expect(res.status).toBe(402);
    await res.body?.cancel();
    const www = res.headers.get('www-authenticate') ?? '';
    const payment: Record<string, string> = {};
    const paymentPart = www.slice(0, www.indexOf('L402 '));
    for (const m of paymentPart.matchAll(/(\w+)="([^"]*)"/g)) payment[m[1]!] = m[2]!;
    const invoice = /invoice="([^"]+)"/.exec(www)![1]!;
    return {
      invoice,
      macaroon: /macaroon="([^"]+)"/.exec(www)![1]!,
      paymentHash: decodeBolt11(invoice)!.paymentHash,
      payment,
    };
  }
  const l402 = (macaroon: string, preimage: string) => `L402 ${macaroon}:${preimage}`;
  const mpp = (challenge: Record<string, string>, preimage: string) =>
    `Payment ${b64({ challenge, payload: { preimage } })}`;

  /** The credential of offer `o` with `preimage` pays a call: 200, and the call charged from the invoice's credit. */
  async function expectPaidCall(
    o: { macaroon: string; paymentHash: string },
    preimage: string,
  ): Promise<void> {
    const ok = await call(l402(o.macaroon, preimage));
    expect(ok.status).toBe(200);
    await ok.body?.cancel();
    expect(await credited(o.paymentHash)).toBe(INVOICE - CALL);
  }

  it('a tampered macaroon and a wrong preimage: 401 invalid_payment_credential, nothing credited', async () => {
    const o = await offer();
    const { preimage } = await h.mint.payInvoice(o.invoice);
    // One caveat changed (another payment hash) under the old signature.
    const [payload, mac] = o.macaroon.split('.') as [string, string];
    const caveats = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const tampered = `${b64({ ...caveats, models: ['mock-gpt', 'other'] })}.${mac}`;
    const a = await call(l402(tampered, preimage));
    expect([a.status, await codeOf(a)]).toEqual([401, 'invalid_payment_credential']);
    const b = await call(l402(o.macaroon, randomBytes(32).toString('hex')));
    expect([b.status, await codeOf(b)]).toEqual([401, 'invalid_payment_credential']);
    expect(await credited(o.paymentHash)).toBeNull();
    // The right pair pays.
    await expectPaidCall(o, preimage);
  });

  it('an unpaid invoice: 402 invoice_not_paid and nothing credited; once paid, the same credential pays', async () => {
    const o = await offer();
    // What no payer can know without paying (the dev mint tells it, for this test): the mint still says UNPAID.
    const preimage = h.mint.preimageOf(o.invoice)!;
    const before = h.upstream.stats.requests;
    const res = await call(l402(o.macaroon, preimage));
    expect([res.status, await codeOf(res)]).toEqual([402, 'invoice_not_paid']);
    expect(await credited(o.paymentHash)).toBeNull();
    expect(h.upstream.stats.requests).toBe(before);
    await h.mint.payInvoice(o.invoice);
    await expectPaidCall(o, preimage);
  });

  it('an expired macaroon (signed with the root key, expiry passed): 401 payment_credential_expired, nothing credited', async () => {
    const o = await offer();
    const { preimage } = await h.mint.payInvoice(o.invoice);
    const rootKey = await loadDoorSecret(h.gateway.services.store!, 'l402_root_key');
    const expired = await issueMacaroon(rootKey, {
      paymentHash: o.paymentHash,
      service: L402_SERVICE,
      expires: Math.floor(Date.now() / 1000) - 1,
    });
    const res = await call(l402(expired, preimage));
    expect([res.status, await codeOf(res)]).toEqual([401, 'payment_credential_expired']);
    expect(await credited(o.paymentHash)).toBeNull();
    // The same key signing an unexpired one is accepted: only the expiry was refused.
    const fresh = await issueMacaroon(rootKey, {
      paymentHash: o.paymentHash,
      service: L402_SERVICE,
      expires: Math.floor(Date.now() / 1000) + 60,
    });
    const ok = await call(l402(fresh, preimage));
    expect(ok.status).toBe(200);
    await ok.body?.cancel();
  });

  it('a macaroon that paid before expires all the same: the next call after its expiry is 401, its rest still readable', async () => {
    const o = await offer();
    const { preimage } = await h.mint.payInvoice(o.invoice);
    const rootKey = await loadDoorSecret(h.gateway.services.store!, 'l402_root_key');
    // Expires at the start of the second after next: it pays now (and is remembered as paid), then expires.
    const expires = Math.floor(Date.now() / 1000) + 2;
    const short = await issueMacaroon(rootKey, {
      paymentHash: o.paymentHash,
      service: L402_SERVICE,
      expires,
    });
    const ok = await call(l402(short, preimage));
    expect(ok.status).toBe(200);
    await ok.body?.cancel();
    await new Promise((r) => setTimeout(r, Math.max(0, expires * 1000 - Date.now()) + 50));
    const late = await call(l402(short, preimage));
    expect([late.status, await codeOf(late)]).toEqual([401, 'payment_credential_expired']);
    const balance = await fetch(`${h.baseURL}/wallet/balance`, {
      headers: { authorization: l402(short, preimage) },
    });
    expect(balance.status).toBe(200);
    expect(((await balance.json()) as { balance: number }).balance).toBe(INVOICE - CALL);
  });

  it('an altered or replayed MPP challenge: 401 invalid_payment_credential, nothing credited', async () => {
    const o = await offer();
    const other = await offer();
    const { preimage } = await h.mint.payInvoice(o.invoice);
    const { preimage: otherPreimage } = await h.mint.payInvoice(other.invoice);
    const c = o.payment;
    // The request swapped for another invoice's (the id no longer binds it).
    const altered = await call(mpp({ ...c, request: other.payment.request! }, otherPreimage));
    expect([altered.status, await codeOf(altered)]).toEqual([401, 'invalid_payment_credential']);
    // A later expiry under the old id.
    const later = await call(
      mpp({ ...c, expires: new Date(Date.now() + 86_400_000).toISOString() }, preimage),
    );
    expect([later.status, await codeOf(later)]).toEqual([401, 'invalid_payment_credential']);
    // Replayed for another payment: this challenge with the other invoice's preimage.
    const replayed = await call(mpp(c, otherPreimage));
    expect([replayed.status, await codeOf(replayed)]).toEqual([401, 'invalid_payment_credential']);
    expect(await credited(o.paymentHash)).toBeNull();
    expect(await credited(other.paymentHash)).toBeNull();
    const ok = await call(mpp(c, preimage));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('payment-receipt')).toBeTruthy();
    await ok.body?.cancel();
    expect(await credited(o.paymentHash)).toBe(INVOICE - CALL);
  });

  it('a balance short for the call: 402 payment_required with the ledger numbers and a fresh invoice for the bound', async () => {
    const o = await offer();
    const { preimage } = await h.mint.payInvoice(o.invoice);
    // No max_tokens: the balance must cover the model's maximum answer, far above the 50 sats the invoice paid.
    const res = await fetch(`${h.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: l402(o.macaroon, preimage) },
      body: JSON.stringify({ model: 'mock-gpt', messages }),
    });
    expect(res.status).toBe(402);
    const err = ((await res.json()) as { error: { code: string; details: Record<string, number> } }).error;
    const { required = 0, amount_sats: sats = 0 } = err.details;
    expect(err.code).toBe('payment_required');
    expect(err.details.balance).toBe(INVOICE);
    expect(err.details.shortfall).toBe(required - INVOICE);
    expect(err.details.affordable_max_tokens).toBeGreaterThan(0);
    expect(sats).toBe(Math.ceil(required / 1000));
    const fresh = /invoice="([^"]+)"/.exec(res.headers.get('www-authenticate') ?? '')?.[1];
    expect(fresh).toBeDefined();
    expect(fresh).not.toBe(o.invoice);
    expect(decodeBolt11(fresh!)?.amountMsat).toBe(BigInt(sats * 1000));
    // Nothing was charged.
    expect(await credited(o.paymentHash)).toBe(INVOICE);
  });

  it('the same preimage presented twice at once (L402 and MPP for one invoice): credited once', async () => {
    const o = await offer();
    const { preimage } = await h.mint.payInvoice(o.invoice);
    const answers = await Promise.all([
      call(l402(o.macaroon, preimage)),
      call(l402(o.macaroon, preimage)),
      call(mpp(o.payment, preimage)),
    ]);
    const ok = answers.filter((r) => r.status === 200).length;
    // Racing first uses share one credit; one may be told the payment is being credited (409) by another path.
    for (const r of answers) expect([200, 409]).toContain(r.status);
    await Promise.all(answers.map((r) => r.body?.cancel()));
    expect(ok).toBeGreaterThanOrEqual(1);
    expect(await credited(o.paymentHash)).toBe(INVOICE - ok * CALL);
  });
});
