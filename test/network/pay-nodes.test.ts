import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { upstreamLostMsatsTotal, upstreamPaidMsatsTotal } from '../../core/metrics.js';
import { readTokenMeta } from '../../core/wallet/token-codec.js';
import { proofsMsat, startTestMint } from '../support/dev-mint.js';
import { type PaidGateway, type PaidStore, startPaidGateway } from '../support/paid-gateway.js';
import { until } from '../support/until.js';
import { A_ENV, A_PRICE, B_MODEL_ENV, counter } from './support/nodes.js';

/**
 * Reselling another node: two real gateways chained on one dev mint. B is a paid gateway in
 * front of the mock upstream (model-based pricing, charged in whole sats to an X-Cashu token); A's providers
 * file names B with `"payment": "cashu"`, so A pays every call with a token from its operator wallet and
 * redeems B's change. The user pays A's flat price; A's proofs drop by exactly what B kept (B's proofs rise by
 * the same); both ledgers audit clean and both wallets stay solvent.
 */
const messages = [{ role: 'user' as const, content: 'Say something, please.' }]; // mock: 6 prompt tokens
/** B's price of 6 prompt + 5 completion tokens, worked by hand in test/e2e/paid-pricing.test.ts: 1,034 msat,
 *  charged to an X-Cashu sat token in whole sats. */
const B_CHARGE = 2000;
const B_ENV = B_MODEL_ENV;

/** Node A on B's mint, reselling the node at `baseURL` (B by default) as provider `name`. */
function nodeA(
  store: PaidStore,
  b: PaidGateway,
  name: string,
  env: Record<string, string> = {},
  baseURL = b.baseURL,
): Promise<PaidGateway> {
  return startPaidGateway({
    store,
    sharedMint: b.mint,
    env: { ...A_ENV, ...env },
    providersFile: () => ({ providers: [{ name, base_url: baseURL, payment: 'cashu' }] }),
  });
}

describe.each<PaidStore>(['sqlite', 'redis'])('paying another node with Cashu on %s', (store) => {
  let b: PaidGateway;
  let a: PaidGateway;
  beforeAll(async () => {
    b = await startPaidGateway({ store, env: B_ENV });
    a = await nodeA(store, b, `nodeb-${store}`);
    // The operator's own money at A: proofs no user is owed (the surplus that pays B).
    await a.wallet.receive(await a.mintToken(100));
  });
  afterEach(async () => {
    await a.auditOk();
    await b.auditOk();
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  /** A funded key at A, and the figures before its call: both wallets' proofs, what A has paid B so far. */
  async function begin() {
    const provider = `nodeb-${store}`;
    const { apiKey, balanceMsat } = await a.fundKey(50);
    const before = {
      a: await proofsMsat(a.wallet),
      b: await proofsMsat(b.wallet),
      paid: await counter(upstreamPaidMsatsTotal, { provider }),
    };
    return { provider, apiKey, balanceMsat, before };
  }
  /** The user's chat call at A (5 tokens at most). */
  const chat = (apiKey: string, stream: boolean) =>
    fetch(`${a.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-gpt', messages, max_tokens: 5, ...(stream ? { stream } : {}) }),
    });

  /** One call: the user paid A its price; A paid B exactly B's charge, out of A's proofs into B's. */
  async function expectPaidOnce(
    apiKey: string,
    balanceMsat: number,
    provider: string,
    before: { a: number; b: number; paid: number },
  ): Promise<void> {
    expect(await a.available(apiKey)).toBe(balanceMsat - A_PRICE);
    await until('A recorded what it paid B', async () => {
      return (await counter(upstreamPaidMsatsTotal, { provider })) === before.paid + B_CHARGE;
    });
    expect(await proofsMsat(a.wallet)).toBe(before.a - B_CHARGE);
    expect(await proofsMsat(b.wallet)).toBe(before.b + B_CHARGE);
  }

  it('non-streamed: the user pays A its price, A pays B exactly B’s charge, the change comes back', async () => {
    const { provider, apiKey, balanceMsat, before } = await begin();
    const res = await chat(apiKey, false);
    expect(res.status).toBe(200);
    // B's change is A's business: it never reaches A's user.
    expect(res.headers.get('x-cashu')).toBeNull();
    const raw = await res.text();
    // B's own cost block is the operator's business: only A's reaches the user.
    expect(raw.split('"x-node-cost"').length - 1).toBe(1);
    const body = JSON.parse(raw) as { choices: unknown[]; 'x-node-cost': { msats: number } };
    expect(body.choices.length).toBe(1);
    expect(body['x-node-cost'].msats).toBe(A_PRICE);
    // What B cost A stays out of the user's block unless the operator asks for it (NODE_COST_UPSTREAM).
    expect(body['x-node-cost']).not.toHaveProperty('upstream_msats');
    await expectPaidOnce(apiKey, balanceMsat, provider, before);
  });

  it('streamed: the change comment is taken out of the stream and redeemed', async () => {
    const { provider, apiKey, balanceMsat, before } = await begin();
    const res = await chat(apiKey, true);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('data: [DONE]');
    expect(text).not.toContain('x-cashu');
    expect(text).not.toContain('cashuB');
    // One cost comment, A's (B's is taken out with its change).
    const costs = text.split('\n').filter((l) => l.startsWith(': x-node-cost '));
    expect(costs.length).toBe(1);
    expect((JSON.parse(costs[0]!.slice(': x-node-cost '.length)) as { msats: number }).msats).toBe(A_PRICE);
    await expectPaidOnce(apiKey, balanceMsat, provider, before);
  });

  it('NODE_COST_UPSTREAM=true: x-node-cost shows what B cost the operator (upstream_msats), JSON and stream', async () => {
    const shown = await nodeA(store, b, `shown-${store}`, { NODE_COST_UPSTREAM: 'true' });
    try {
      await shown.wallet.receive(await shown.mintToken(20));
      const { apiKey, balanceMsat } = await shown.fundKey(50);
      const post = (stream: boolean) =>
        fetch(`${shown.baseURL}/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'mock-gpt', messages, max_tokens: 5, stream }),
        });
      const json = (await (await post(false)).json()) as { 'x-node-cost': Record<string, unknown> };
      expect(json['x-node-cost']).toMatchObject({ msats: A_PRICE, upstream_msats: B_CHARGE });
      const text = await (await post(true)).text();
      const comment = text.split('\n').find((l) => l.startsWith(': x-node-cost '));
      expect(JSON.parse(comment!.slice(': x-node-cost '.length))).toMatchObject({
        msats: A_PRICE,
        upstream_msats: B_CHARGE,
      });
      expect(await shown.available(apiKey)).toBe(balanceMsat - 2 * A_PRICE);
      await shown.auditOk();
    } finally {
      await shown.close();
    }
  });

  it('an operator wallet with no surplus: 503 operator_wallet_insufficient, the user charged nothing', async () => {
    const poor = await nodeA(store, b, `poor-${store}`);
    try {
      // The only proofs at this A are the user's deposit: the surplus is 0.
      const { apiKey, balanceMsat } = await poor.fundKey(50);
      const [aBefore, bBefore] = [await proofsMsat(poor.wallet), await proofsMsat(b.wallet)];
      for (const stream of [false, true]) {
        const res = await fetch(`${poor.baseURL}/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'mock-gpt', messages, max_tokens: 5, stream }),
        });
        expect(res.status).toBe(503);
        const err = (await res.json()) as { error: { code: string; details: { needed_msat: number } } };
        expect(err.error.code).toBe('operator_wallet_insufficient');
        expect(err.error.details.needed_msat).toBeGreaterThan(0);
      }
      expect(await poor.available(apiKey)).toBe(balanceMsat);
      expect(await proofsMsat(poor.wallet)).toBe(aBefore);
      expect(await proofsMsat(b.wallet)).toBe(bBefore);
      await poor.auditOk();
    } finally {
      await poor.close();
    }
  });

  it('a node that refuses the token or is down fails over before the first byte; its token comes back', async () => {
    // C trusts only its own mint: A's token (from the shared mint) is refused (400 mint_not_trusted, no token
    // returned). D is a node that went away (connection refused). B then serves the call.
    const c = await startPaidGateway({ store, env: B_ENV });
    const d = await startPaidGateway({ store, env: B_ENV, sharedMint: b.mint });
    const names = { c: `untrusted-${store}`, d: `down-${store}`, b: `live-${store}` };
    const a2 = await startPaidGateway({
      store,
      sharedMint: b.mint,
      env: { ...A_ENV, PROVIDER_MAX_ATTEMPTS: '3' },
      providersFile: () => ({
        providers: [
          { name: names.c, base_url: c.baseURL, payment: 'cashu', priority: 0 },
          { name: names.d, base_url: d.baseURL, payment: 'cashu', priority: 1 },
          { name: names.b, base_url: b.baseURL, payment: 'cashu', priority: 2 },
        ],
      }),
    });
    try {
      await a2.wallet.receive(await a2.mintToken(100));
      const { apiKey, balanceMsat } = await a2.fundKey(50);
      // D's prices are cached by a call it serves (C refuses it first); then D goes away.
      const ok = await a2
        .openai(apiKey)
        .chat.completions.create({ model: 'mock-gpt', messages, max_tokens: 5 });
      expect(ok.choices.length).toBe(1);
      await until('D was paid for the first call', async () => {
        return (await counter(upstreamPaidMsatsTotal, { provider: names.d })) === B_CHARGE;
      });
      await d.close();
      const [aBefore, bBefore, cBefore] = [
        await proofsMsat(a2.wallet),
        await proofsMsat(b.wallet),
        await proofsMsat(c.wallet),
      ];
      const res = await fetch(`${a2.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mock-gpt', messages, max_tokens: 5 }),
      });
      expect(res.status).toBe(200);
      expect(await a2.available(apiKey)).toBe(balanceMsat - 2 * A_PRICE);
      // B kept its price; the tokens made for C and D came back whole: A is down by exactly B's charge.
      await until('A paid B and took the refused tokens back', async () => {
        return (
          (await counter(upstreamPaidMsatsTotal, { provider: names.b })) === B_CHARGE &&
          (await proofsMsat(a2.wallet)) === aBefore - B_CHARGE
        );
      });
      expect(await proofsMsat(b.wallet)).toBe(bBefore + B_CHARGE);
      expect(await proofsMsat(c.wallet)).toBe(cBefore);
      expect(await counter(upstreamPaidMsatsTotal, { provider: names.c })).toBe(0);
      expect(await counter(upstreamPaidMsatsTotal, { provider: names.d })).toBe(B_CHARGE);
      expect(await counter(upstreamLostMsatsTotal, { provider: names.d, reason: 'no_answer' })).toBe(0);
      await a2.auditOk();
      await c.auditOk();
    } finally {
      await a2.close();
      await Promise.all([c.close(), d.close()]);
    }
  });

  it('change made at a mint A does not trust is a recorded loss; the user still pays only A’s price', async () => {
    // B2 accepts the shared mint but makes its change at its own primary mint, which A does not trust.
    const own = await startTestMint();
    const b2 = await startPaidGateway({
      store,
      sharedMint: own,
      env: { ...B_ENV, CASHU_MINTS: `${own.url},${b.mint.url}` },
    });
    const provider = `foreign-change-${store}`;
    const a4 = await nodeA(store, b, provider, {}, b2.baseURL);
    try {
      await b2.wallet.receive(await own.mintTokens(100, 'sat')); // B2's proofs at its primary, for change
      await a4.wallet.receive(await a4.mintToken(100));
      const { apiKey, balanceMsat } = await a4.fundKey(50);
      const before = await proofsMsat(a4.wallet);
      const paidBefore = await counter(upstreamPaidMsatsTotal, { provider });
      const res = await fetch(`${a4.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        // A bound well above B2's price, so that there is change.
        body: JSON.stringify({ model: 'mock-gpt', messages, max_tokens: 500 }),
      });
      expect(res.status).toBe(200);
      expect(await a4.available(apiKey)).toBe(balanceMsat - A_PRICE);
      await until('A recorded the unredeemable change', async () => {
        return (await counter(upstreamLostMsatsTotal, { provider, reason: 'change_unredeemable' })) > 0;
      });
      const lost = await counter(upstreamLostMsatsTotal, { provider, reason: 'change_unredeemable' });
      const paid = (await counter(upstreamPaidMsatsTotal, { provider })) - paidBefore;
      expect(paid).toBeGreaterThan(0);
      // The whole token left A: B2's price plus the change A could not take; B2 kept only its price.
      expect(await proofsMsat(a4.wallet)).toBe(before - paid - lost);
      await a4.auditOk();
      await b2.auditOk();
    } finally {
      await a4.close();
      await b2.close();
      await own.close();
    }
  });

  it('a node whose 402 names a shortfall (NUT-18) is paid once more with the larger token', async () => {
    // A stand-in node: lists 1 sat a call, then asks for 2 more with its first answer (402, the token back and
    // a NUT-18 request made by a real wallet), and serves the second call, giving the whole token back.
    const received: string[] = [];
    const node = createServer((req, res) => {
      if (req.method === 'GET' && req.url === '/v1/models') {
        res.setHeader('content-type', 'application/json');
        const pricing = { prompt_msats: 0, completion_msats: 0, request_msats: 1000 };
        res.end(
          JSON.stringify({ object: 'list', data: [{ id: 'mock-gpt', context_length: 8192, pricing }] }),
        );
        return;
      }
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.statusCode = 404;
        res.end();
        return;
      }
      req.resume();
      req.on('end', () => {
        const token = String(req.headers['x-cashu']);
        received.push(token);
        res.setHeader('content-type', 'application/json');
        res.setHeader('x-cashu', token);
        if (received.length === 1) {
          res.statusCode = 402;
          res.setHeader(
            'x-cashu-payment-request',
            b.wallet.createPaymentRequest({ amountMsat: 2000, unit: 'sat' }),
          );
          res.end(
            JSON.stringify({
              error: { type: 'payment_required', code: 'payment_required', message: 'more' },
            }),
          );
          return;
        }
        res.end(
          JSON.stringify({
            id: 'x',
            object: 'chat.completion',
            created: 0,
            model: 'mock-gpt',
            choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          }),
        );
      });
    });
    await new Promise<void>((r) => node.listen(0, '127.0.0.1', r));
    const port = (node.address() as AddressInfo).port;
    const provider = `short-${store}`;
    const a5 = await nodeA(store, b, provider, {}, `http://127.0.0.1:${port}/v1`);
    try {
      await a5.wallet.receive(await a5.mintToken(100));
      const { apiKey, balanceMsat } = await a5.fundKey(50);
      const before = await proofsMsat(a5.wallet);
      const r = await a5
        .openai(apiKey)
        .chat.completions.create({ model: 'mock-gpt', messages, max_tokens: 5 });
      expect(r.choices[0]!.message.content).toBe('hi');
      expect(received.map((t) => readTokenMeta(t).amount)).toEqual([1, 3]);
      expect(await a5.available(apiKey)).toBe(balanceMsat - A_PRICE);
      // Both tokens came back (the 402's and the free answer's change): nothing paid, nothing lost.
      await until('both tokens are back in A’s wallet', async () => (await proofsMsat(a5.wallet)) === before);
      expect(await counter(upstreamPaidMsatsTotal, { provider })).toBe(0);
      await a5.auditOk();
    } finally {
      await a5.close();
      await new Promise((r) => node.close(r));
    }
  });

  it('a node killed mid-stream: A ends the stream, records the loss, the user is not charged for it', async () => {
    const dying = await startPaidGateway({
      store,
      env: B_ENV,
      sharedMint: b.mint,
      upstream: { chunks: 40, chunkDelayMs: 100, ignoreMaxTokens: true },
    });
    const provider = `dying-${store}`;
    const a3 = await nodeA(store, b, provider, {}, dying.baseURL);
    try {
      await a3.wallet.receive(await a3.mintToken(100));
      const { apiKey, balanceMsat } = await a3.fundKey(50);
      const lostBefore = await counter(upstreamLostMsatsTotal, { provider, reason: 'no_answer' });
      const before = await proofsMsat(a3.wallet);
      const res = await fetch(`${a3.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mock-gpt', messages, max_tokens: 50, stream: true }),
      });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      const first = await reader.read();
      expect(first.done).toBe(false);
      // B dies with the call in flight: its change never comes.
      const closing = dying.gateway.close(0);
      let text = '';
      for (;;) {
        const r = await reader.read().catch(() => ({ done: true, value: undefined }));
        if (r.done) break;
        text += new TextDecoder().decode(r.value);
      }
      await closing;
      expect(text).not.toContain('x-cashu');
      await until('A recorded the loss', async () => {
        return (await counter(upstreamLostMsatsTotal, { provider, reason: 'no_answer' })) > lostBefore;
      });
      const lost = (await counter(upstreamLostMsatsTotal, { provider, reason: 'no_answer' })) - lostBefore;
      expect(await proofsMsat(a3.wallet)).toBe(before - lost);
      // Never more than A's own price: the node's loss is the operator's.
      const left = (await a3.available(apiKey))!;
      expect(left).toBeGreaterThanOrEqual(balanceMsat - A_PRICE);
      await a3.auditOk();
    } finally {
      await a3.close();
      await dying.close();
    }
  });
});
