import { Wallet } from '@cashu/cashu-ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, errorCode } from '../routes/http.js';
import { assertDocumented } from '../routes/response-schema.js';
import type { DevMint } from '../support/dev-mint.js';
import { startTestMint } from '../support/dev-mint.js';
import { changeOf, type PaidStore, paidGatewayPerSuite, startPaidGateway } from '../support/paid-gateway.js';
import { expectedSwap } from '../wallet/fixtures/swap-arithmetic.js';

/**
 * eCash from a mint the gateway does not trust, with FOREIGN_MINTS=swap, through every door
 * a token comes in — POST /v1/wallet/create, /v1/wallet/topup, `Authorization: Bearer cashu…` and `X-Cashu` —
 * on both stores. Two dev mints share a fake Lightning network; the gateway's primary leaves its invoices
 * unpaid until the foreign mint's melt pays them; the foreign mint charges an input fee. The answers say what
 * was credited and what the swap cost; X-Cashu change comes from the primary mint.
 */

const messages = [{ role: 'user' as const, content: 'Say something, please.' }];

/** The dev mints' swap arithmetic, by hand (test/wallet/fixtures/swap-arithmetic.ts), fee change included. */
const expectedSats = (face: number, proofs: number): number => expectedSwap(face, proofs).credited;

async function spentAt(mintUrl: string, token: string): Promise<boolean> {
  const w = new Wallet(mintUrl, { unit: 'sat' });
  await w.loadMint();
  const states = await w.checkProofsStates(w.decodeToken(token).proofs);
  return states.every((s) => s.state === 'SPENT');
}

describe.each<PaidStore>(['sqlite', 'redis'])('foreign-mint tokens swapped to the primary on %s', (store) => {
  let foreign: DevMint;
  beforeAll(async () => {
    foreign = await startTestMint({ inputFeePpk: 100 });
  });
  afterAll(async () => {
    await foreign?.close();
  });
  const h = paidGatewayPerSuite({
    store,
    mint: { mintQuotePayment: 'manual' },
    env: { FOREIGN_MINTS: 'swap', FIXED_PRICING: 'true', FIXED_COST_PER_REQUEST: '3' },
  });

  const proofsOf = (token: string) => h.wallet.decodeToken(token).proofs;

  it('create: a key holding exactly what arrived; the answer says credited, cost and source mint', async () => {
    const token = await foreign.mintTokens(2000);
    const a = expectedSats(2000, proofsOf(token));
    const r = await call(h.gateway.url, 'POST', '/v1/wallet/create', { body: { cashu_token: token } });
    expect(r.status).toBe(201);
    assertDocumented('POST', '/v1/wallet/create', 201, r.body);
    expect(r.body).toMatchObject({
      balance: a * 1000,
      msats: a * 1000,
      fee_msats: (2000 - a) * 1000,
      swapped_from: foreign.url,
    });
    expect(await spentAt(foreign.url, token)).toBe(true);
    expect(await h.available(r.body.api_key as string)).toBe(a * 1000);
    // A retry with the same token returns the same key, credited once.
    const again = await call(h.gateway.url, 'POST', '/v1/wallet/create', { body: { cashu_token: token } });
    expect(again.status).toBe(201);
    expect(again.body.api_key).toBe(r.body.api_key);
    expect(await h.available(r.body.api_key as string)).toBe(a * 1000);
  });

  it('top-up: added exactly what arrived; a token from the primary still reports its own (zero) fee', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(10);
    const token = await foreign.mintTokens(700);
    const a = expectedSats(700, proofsOf(token));
    const r = await call(h.gateway.url, 'POST', '/v1/wallet/topup', {
      auth: apiKey,
      body: { cashu_token: token },
    });
    expect(r.status).toBe(200);
    assertDocumented('POST', '/v1/wallet/topup', 200, r.body);
    expect(r.body).toMatchObject({
      old_balance: balanceMsat,
      added_amount: a * 1000,
      new_balance: balanceMsat + a * 1000,
      msats: a * 1000,
      fee_msats: (700 - a) * 1000,
      swapped_from: foreign.url,
    });
    const own = await call(h.gateway.url, 'POST', '/v1/wallet/topup', {
      auth: apiKey,
      body: { cashu_token: await h.mintToken(5) },
    });
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ msats: 5000, fee_msats: 0 });
    expect(own.body.swapped_from).toBeUndefined();
  });

  it('bearer token from a foreign mint pays calls with the openai SDK', async () => {
    const token = await foreign.mintTokens(100);
    const a = expectedSats(100, proofsOf(token));
    const res = await h.openai(token).chat.completions.create({ model: 'mock-gpt', messages, max_tokens: 3 });
    expect(res.choices[0]?.message.content).toBeTruthy();
    expect(await h.available(token)).toBe(a * 1000 - 3000);
  });

  it('X-Cashu from a foreign mint: change comes back as a token of the primary mint', async () => {
    const token = await foreign.mintTokens(50);
    const a = expectedSats(50, proofsOf(token));
    const raw = await h.post(
      '/chat/completions',
      { model: 'mock-gpt', messages, max_tokens: 2 },
      { 'x-cashu': token },
    );
    const change = changeOf(raw, 200);
    expect(h.wallet.decodeToken(change).mint).toBe(h.mint.url);
    expect(await h.redeem(change)).toBe(a - 3);
  });

  it('a swap costing more than the bound is refused with swap_fee_too_high; nothing is spent', async () => {
    // 10 sats face: the fee reserve's 1-sat minimum and the input fee make 20 %, the bound is 5 %.
    const token = await foreign.mintTokens(10);
    const r = await call(h.gateway.url, 'POST', '/v1/wallet/create', { body: { cashu_token: token } });
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('swap_fee_too_high');
    expect(r.text).not.toContain(token);
    expect(await spentAt(foreign.url, token)).toBe(false);
  });
});

describe('FOREIGN_MINTS=refuse (the default) still refuses other mints', () => {
  it('mint_not_trusted, nothing spent', async () => {
    const foreign = await startTestMint();
    const h = await startPaidGateway({ store: 'sqlite' });
    try {
      const token = await foreign.mintTokens(100);
      const r = await call(h.gateway.url, 'POST', '/v1/wallet/create', { body: { cashu_token: token } });
      expect(r.status).toBe(400);
      expect(errorCode(r)).toBe('mint_not_trusted');
      expect(await spentAt(foreign.url, token)).toBe(false);
    } finally {
      await h.close();
      await foreign.close();
    }
  });
});
