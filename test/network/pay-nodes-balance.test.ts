import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { registry } from '../../core/metrics.js';
import { openNodeAccountStore } from '../../core/providers/node-account-store.js';
import { captureLog, proofsMsat } from '../support/dev-mint.js';
import { type PaidGateway, type PaidStore, startPaidGateway } from '../support/paid-gateway.js';
import { type ProcessStore, processStore } from '../support/process-store.js';
import { until } from '../support/until.js';
import { A_ENV, A_PRICE, B_MODEL_ENV } from './support/nodes.js';

/**
 * Reselling another node from a prepaid key (`"payment": "cashu-balance"`) and at its advertised prices
 * (`"pricing": "auto"`): real gateways chained on one dev mint, as in test/network/pay-nodes.test.ts. B sells
 * calls at token prices (every price an integer, so what B charges is worked by hand); A keeps a key at B, made
 * and topped up from A's operator wallet, and sells on. A runs on a store the test owns, so a second A — a
 * restart, or another process beside the first — shares it. Both ledgers audit clean and both wallets stay
 * solvent after every test.
 */
const messages = [{ role: 'user' as const, content: 'Say something, please.' }]; // mock: 6 prompt tokens
const PROMPT = 6;
const COMPLETION = 5;
/** B: 1 sat a call + 2 sats per 1,000 prompt tokens + 4 per 1,000 completion tokens, charged to a key in msats. */
const B_ENV = {
  FIXED_PRICING: 'false',
  FIXED_COST_PER_REQUEST: '1',
  FIXED_PER_1K_INPUT_TOKENS: '2',
  FIXED_PER_1K_OUTPUT_TOKENS: '4',
};
/** B's price of one call: 1,000 + 6 × 2 + 5 × 4 msat. */
const B_CHARGE = 1000 + PROMPT * 2 + COMPLETION * 4;

async function counter(name: string, labels: Record<string, string>): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (metric === undefined) return 0;
  const v = (await metric.get()).values.find((x) =>
    Object.entries(labels).every(([k, val]) => (x.labels as Record<string, unknown>)[k] === val),
  );
  return v?.value ?? 0;
}

const paid = (provider: string) => counter('gateway_upstream_paid_msats_total', { provider });
const topups = (provider: string, kind: 'create' | 'topup', result: 'ok' | 'failed') =>
  counter('gateway_node_topups_total', { provider, kind, result });

interface Call {
  status: number;
  text: string;
  headers: Headers;
}

async function chat(gw: PaidGateway, apiKey: string, stream = false): Promise<Call> {
  const res = await fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-gpt', messages, max_tokens: COMPLETION, stream }),
  });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

/** The user's charge as the answer states it (A's x-node-cost: JSON block, or the SSE comment). */
function chargedMsat(call: Call): number {
  const line = call.text.split('\n').find((l) => l.startsWith(': x-node-cost '));
  if (line !== undefined) return (JSON.parse(line.slice(': x-node-cost '.length)) as { msats: number }).msats;
  return (JSON.parse(call.text) as { 'x-node-cost': { msats: number } })['x-node-cost'].msats;
}

/** The key A keeps at B, read from A's store (the test may; nothing A serves shows it). */
async function storedKey(a: PaidGateway, b: PaidGateway): Promise<string | undefined> {
  return (await openNodeAccountStore(a.gateway.services.store!).read(b.baseURL)).apiKey;
}

/** Runs `body` against node A, then audits A (when `body` passed) and closes it either way. */
async function auditedThenClosed(a: PaidGateway, body: () => Promise<void>): Promise<void> {
  try {
    await body();
    await a.auditOk();
  } finally {
    await a.close();
  }
}

describe.each<PaidStore>(['sqlite', 'redis'])('a prepaid key at another node on %s', (store) => {
  let b: PaidGateway;
  const stores: ProcessStore[] = [];
  /** A store of the test's own, shared by the A gateways started on it (dropped after the suite). */
  const sharedStore = () => {
    const s = processStore(store);
    stores.push(s);
    return s;
  };
  const nodeA = (
    s: ProcessStore,
    entry: Record<string, unknown>,
    opts: { env?: Record<string, string>; log?: ReturnType<typeof captureLog> } = {},
  ) =>
    startPaidGateway({
      store,
      sharedMint: b.mint,
      env: { ...A_ENV, ...s.env, ...opts.env },
      providersFile: () => ({ providers: [{ base_url: b.baseURL, ...entry }] }),
      ...(opts.log !== undefined ? { log: opts.log.log } : {}),
    });
  /** Node A on `s` paying B from a prepaid key as `provider`: 20-sat top-ups below 5 sats. */
  const balanceNodeA = (s: ProcessStore, provider: string) =>
    nodeA(s, { name: provider, payment: 'cashu-balance', topup_sats: 20, min_balance_sats: 5 });

  beforeAll(async () => {
    b = await startPaidGateway({ store, env: B_ENV });
  });
  afterEach(async () => {
    await b.auditOk();
  });
  afterAll(async () => {
    await b?.close();
    await Promise.allSettled(stores.map((s) => s.drop()));
  });

  it('the key is made once with topup_sats, debited per call, and the same after a restart; the user pays A', async () => {
    const provider = `prepaid-${store}`;
    const entry = { name: provider, payment: 'cashu-balance', topup_sats: 20, min_balance_sats: 5 };
    const s = sharedStore();
    const logs = captureLog();
    const a1 = await nodeA(s, entry, { log: logs });
    let a2: PaidGateway | undefined;
    try {
      // The operator's own money at A: the surplus the key is made from.
      await a1.wallet.receive(await a1.mintToken(100));
      const { apiKey, balanceMsat } = await a1.fundKey(50);
      const [aBefore, bBefore] = [await proofsMsat(a1.wallet), await proofsMsat(b.wallet)];
      const depositedBefore = (await b.ledger.checkConservation()).totals.depositedMsat;

      const first = await chat(a1, apiKey);
      expect(first.status).toBe(200);
      // B's cost block is the operator's business: only A's reaches the user, and no eCash header.
      expect(first.text.split('"x-node-cost"').length - 1).toBe(1);
      expect(first.headers.get('x-cashu')).toBeNull();
      expect(chargedMsat(first)).toBe(A_PRICE);
      // The key was made with exactly topup_sats from A's wallet; B took them in.
      expect(await proofsMsat(a1.wallet)).toBe(aBefore - 20_000);
      expect(await proofsMsat(b.wallet)).toBe(bBefore + 20_000);
      expect((await b.ledger.checkConservation()).totals.depositedMsat).toBe(depositedBefore + 20_000);
      const key = await storedKey(a1, b);
      expect(key).toMatch(/^sk-/);
      // The call was paid from the key at B: B's price, to the msat.
      expect(await b.available(key!)).toBe(20_000 - B_CHARGE);
      await until('A counted what the call cost it at B', async () => (await paid(provider)) === B_CHARGE);

      const streamed = await chat(a1, apiKey, true);
      expect(streamed.status).toBe(200);
      expect(streamed.text).toContain('data: [DONE]');
      expect(streamed.text.split('\n').filter((l) => l.startsWith(': x-node-cost ')).length).toBe(1);
      expect(chargedMsat(streamed)).toBe(A_PRICE);
      expect(await b.available(key!)).toBe(20_000 - 2 * B_CHARGE);
      expect(await a1.available(apiKey)).toBe(balanceMsat - 2 * A_PRICE);
      await until('A counted the streamed call', async () => (await paid(provider)) === 2 * B_CHARGE);
      await a1.auditOk();
      await a1.close();

      // A restart on the same store: the same key, nothing paid to B again.
      a2 = await nodeA(s, entry, { log: logs });
      const third = await chat(a2, apiKey);
      expect(third.status).toBe(200);
      expect(await storedKey(a2, b)).toBe(key);
      expect(await b.available(key!)).toBe(20_000 - 3 * B_CHARGE);
      expect(await proofsMsat(b.wallet)).toBe(bBefore + 20_000);
      expect((await b.ledger.checkConservation()).totals.depositedMsat).toBe(depositedBefore + 20_000);
      expect(await topups(provider, 'create', 'ok')).toBe(1);
      expect(await topups(provider, 'topup', 'ok')).toBe(0);
      expect(await a2.available(apiKey)).toBe(balanceMsat - 3 * A_PRICE);
      // The key is a secret: in no log line and no metric.
      const metrics = await (await fetch(`${a2.gateway.url}/metrics`)).text();
      expect(metrics).toContain(`gateway_node_balance_msats{provider="${provider}"}`);
      expect(metrics).not.toContain(key!);
      expect(logs.text()).toContain('node prepaid key paid');
      expect(logs.text()).not.toContain(key!);
      expect(logs.text()).not.toContain('cashuB');
      await a2.auditOk();
    } finally {
      await a1.close();
      await a2?.close();
    }
  });

  it('below min_balance_sats the key is topped up exactly once, by one of two gateways sharing the store', async () => {
    const provider = `topup-${store}`;
    const entry = { name: provider, payment: 'cashu-balance', topup_sats: 20, min_balance_sats: 15 };
    const s = sharedStore();
    const a1 = await nodeA(s, entry);
    const a2 = await nodeA(s, entry);
    try {
      await a1.wallet.receive(await a1.mintToken(100));
      // A user of each gateway (a key's credit lease belongs to one process at a time: docs/ledger.md).
      const user1 = await a1.fundKey(100);
      const user2 = await a2.fundKey(100);
      const [aBefore, bBefore] = [await proofsMsat(a1.wallet), await proofsMsat(b.wallet)];
      // The first call makes the key (20 sats); B's balance for it is then 20,000 − one call.
      expect((await chat(a1, user1.apiKey)).status).toBe(200);
      const key = (await storedKey(a1, b))!;
      expect(await b.available(key)).toBe(20_000 - B_CHARGE);
      // Eight calls at once through both gateways: the key falls below 15 sats after the fourth.
      const calls = await Promise.all(
        Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? chat(a1, user1.apiKey) : chat(a2, user2.apiKey))),
      );
      expect(calls.map((c) => (c.status === 200 ? 200 : c.text))).toEqual(Array(8).fill(200));
      await until('the key was topped up', async () => (await topups(provider, 'topup', 'ok')) === 1);
      // Every gateway's check, run again now (each reads B's balance under the store's lock): no second top-up.
      for (const [gw, user] of [
        [a1, user1],
        [a2, user2],
      ] as const) {
        expect((await chat(gw, user.apiKey)).status).toBe(200);
        await gw.gateway.services.nodes!.accounts!.settled();
      }
      for (const gw of [a1, a2]) {
        gw.gateway.services.nodes!.accounts!.check(gw.gateway.services.providers.get(provider)!);
        await gw.gateway.services.nodes!.accounts!.settled();
      }
      expect(await topups(provider, 'topup', 'ok')).toBe(1);
      expect(await topups(provider, 'topup', 'failed')).toBe(0);
      expect((await openNodeAccountStore(a1.gateway.services.store!).read(b.baseURL)).topups).toBe(1);
      // Made and topped up once: 40 sats from A to B; 11 calls debited from the key at B's price.
      expect(await proofsMsat(a1.wallet)).toBe(aBefore - 40_000);
      expect(await proofsMsat(b.wallet)).toBe(bBefore + 40_000);
      expect(await b.available(key)).toBe(40_000 - 11 * B_CHARGE);
      expect(await a1.available(user1.apiKey)).toBe(user1.balanceMsat - 6 * A_PRICE);
      expect(await a2.available(user2.apiKey)).toBe(user2.balanceMsat - 5 * A_PRICE);
      await until('A counted every call it paid B for', async () => (await paid(provider)) === 11 * B_CHARGE);
      await a1.auditOk();
      await a2.auditOk();
    } finally {
      await a1.close();
      await a2.close();
    }
  });

  it('a key creation a process died in is finished with the same token: the node credits it once', async () => {
    const provider = `resumed-${store}`;
    const s = sharedStore();
    // A process made a 20-sat token, wrote it to the store, sent it to B (B made the key) and died before it
    // recorded the answer: its lock is left to run out, its token is still in the store.
    const token = await b.mintToken(20);
    const made = await fetch(`${b.baseURL}/wallet/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ cashu_token: token }),
    });
    expect(made.status).toBe(201);
    const key = ((await made.json()) as { api_key: string }).api_key;
    const depositedBefore = (await b.ledger.checkConservation()).totals.depositedMsat;
    await s.withLedger(async (_ledger, conn) => {
      const accounts = openNodeAccountStore(conn);
      expect(await accounts.lock(b.baseURL, 'dead-process', 1)).toBe(true);
      const pending = { kind: 'create' as const, token, amountMsat: 20_000, atMs: Date.now() };
      expect(await accounts.write(b.baseURL, 'dead-process', { pending })).toBe(true);
    });
    const a = await balanceNodeA(s, provider);
    await auditedThenClosed(a, async () => {
      const { apiKey, balanceMsat } = await a.fundKey(50);
      const aBefore = await proofsMsat(a.wallet);
      const call = await chat(a, apiKey);
      expect(call.status).toBe(200);
      // The same token again: B answered the key it had made, and credited nothing twice.
      expect(await storedKey(a, b)).toBe(key);
      expect((await openNodeAccountStore(a.gateway.services.store!).read(b.baseURL)).pending).toBeUndefined();
      expect((await b.ledger.checkConservation()).totals.depositedMsat).toBe(depositedBefore);
      expect(await b.available(key)).toBe(20_000 - B_CHARGE);
      // No new token was made from A's wallet.
      expect(await proofsMsat(a.wallet)).toBe(aBefore);
      expect(await a.available(apiKey)).toBe(balanceMsat - A_PRICE);
      expect(await topups(provider, 'create', 'ok')).toBe(1);
    });
  });

  it('a wallet too poor to make the key: 503 operator_wallet_insufficient, the user charged nothing', async () => {
    const provider = `poor-${store}`;
    const a = await balanceNodeA(sharedStore(), provider);
    await auditedThenClosed(a, async () => {
      // The only proofs at A are the user's deposit: the surplus is 0.
      const { apiKey, balanceMsat } = await a.fundKey(50);
      const [aBefore, bBefore] = [await proofsMsat(a.wallet), await proofsMsat(b.wallet)];
      const depositedBefore = (await b.ledger.checkConservation()).totals.depositedMsat;
      for (const stream of [false, true]) {
        const call = await chat(a, apiKey, stream);
        expect(call.status).toBe(503);
        const err = JSON.parse(call.text) as { error: { code: string; details: { needed_msat: number } } };
        expect(err.error.code).toBe('operator_wallet_insufficient');
        expect(err.error.details.needed_msat).toBe(20_000);
      }
      expect(await a.available(apiKey)).toBe(balanceMsat);
      expect(await proofsMsat(a.wallet)).toBe(aBefore);
      expect(await proofsMsat(b.wallet)).toBe(bBefore);
      expect((await b.ledger.checkConservation()).totals.depositedMsat).toBe(depositedBefore);
      expect(await storedKey(a, b)).toBeUndefined();
      expect(await topups(provider, 'create', 'failed')).toBe(2);
    });
  });

  it('a top-up the wallet cannot pay: calls go on while the key lasts, then fail over (nothing charged); retried once funded', async () => {
    const provider = `lean-${store}`;
    // A sells at 1 sat a call: what its users pay it (its surplus grows by that) is less than a top-up.
    const price = 1000;
    const a = await nodeA(
      sharedStore(),
      { name: provider, payment: 'cashu-balance', topup_sats: 3, min_balance_sats: 2 },
      { env: { FIXED_COST_PER_REQUEST: '1' } },
    );
    await auditedThenClosed(a, async () => {
      // Surplus for the key's making only: 3 sats.
      await a.wallet.receive(await a.mintToken(3));
      const { apiKey, balanceMsat } = await a.fundKey(50);
      expect((await chat(a, apiKey)).status).toBe(200);
      const key = (await storedKey(a, b))!;
      // 3,000 − 1,032 is below 2 sats: a top-up is tried and fails (no surplus), and is retried.
      await until(
        'the failed top-up was counted',
        async () => (await topups(provider, 'topup', 'failed')) >= 1,
      );
      // The key still pays one more call …
      expect((await chat(a, apiKey)).status).toBe(200);
      expect(await b.available(key)).toBe(3000 - 2 * B_CHARGE);
      // … then B refuses it (402, balance short): with no other provider, A answers 502 and charges nothing.
      const refused = await chat(a, apiKey);
      expect(refused.status).toBe(502);
      expect((JSON.parse(refused.text) as { error: { code: string } }).error.code).toBe('upstream_error');
      expect(await a.available(apiKey)).toBe(balanceMsat - 2 * price);
      expect(await topups(provider, 'topup', 'ok')).toBe(0);
      // The operator adds money: the retry tops the key up, and calls go through again.
      await a.wallet.receive(await a.mintToken(10));
      await until(
        'the retried top-up went through',
        async () => (await topups(provider, 'topup', 'ok')) === 1,
        30_000,
      );
      expect(await b.available(key)).toBe(6000 - 2 * B_CHARGE);
      expect((await chat(a, apiKey)).status).toBe(200);
      expect(await a.available(apiKey)).toBe(balanceMsat - 3 * price);
    });
    // Its own waits allow 15 s (the failed top-up counted) and 30 s (the retried one): the test's bound covers
    // both and the gateway start (a loaded CI machine once ran out the default 30 s here).
  }, 90_000);

  it('"pricing": "auto" × markup: the user pays the node’s advertised price × 1.05, to the msat, for both payments', async () => {
    // Independent of the production arithmetic: (request + prompt × per-1k / 1000 + completion × per-1k / 1000)
    // × markup, rounded up once; in thousandths of a msat with BigInt, the markup as 105/100.
    const expected = (req: number, p1k: number, c1k: number) => {
      const thousandths = BigInt(req * 1000 + PROMPT * p1k + COMPLETION * c1k) * 105n;
      const den = 1000n * 100n;
      return Number((thousandths + den - 1n) / den);
    };
    // B (token prices): 1,000 + 6 × 2,000/1,000 + 5 × 4,000/1,000 = 1,032 → × 1.05 = 1,083.6 → 1,084.
    expect(expected(1000, 2000, 4000)).toBe(1084);
    // B2 (model prices, per 1k rounded up by B2: 2,111 and 4,221): 1,033.771 × 1.05 = 1,085.45955 → 1,086.
    expect(expected(1000, 2111, 4221)).toBe(1086);
    const b2 = await startPaidGateway({ store, env: B_MODEL_ENV, sharedMint: b.mint });
    const prepaid = `auto-prepaid-${store}`;
    const perCall = `auto-cashu-${store}`;
    const models = async (gw: PaidGateway) =>
      (
        (await (await fetch(`${gw.baseURL}/models`)).json()) as {
          data: { id: string; pricing: Record<string, unknown> }[];
        }
      ).data.find((m) => m.id === 'mock-gpt')!.pricing;
    // What the nodes advertise is what the hand calculation above assumes.
    expect(await models(b)).toMatchObject({
      prompt_msats: 2000,
      completion_msats: 4000,
      request_msats: 1000,
    });
    expect(await models(b2)).toMatchObject({
      prompt_msats: 2111,
      completion_msats: 4221,
      request_msats: 1000,
    });
    const auto = { pricing: 'auto', markup: '1.05' };
    const a = await nodeA(sharedStore(), {
      name: prepaid,
      payment: 'cashu-balance',
      topup_sats: 20,
      min_balance_sats: 5,
      ...auto,
    });
    const a3 = await startPaidGateway({
      store,
      sharedMint: b.mint,
      env: A_ENV,
      providersFile: () => ({
        providers: [{ name: perCall, base_url: b2.baseURL, payment: 'cashu', ...auto }],
      }),
    });
    try {
      // What A lists is what it charges: the node's price per 1k tokens and per call × 1.05, rounded up.
      expect(await models(a)).toMatchObject({
        mode: 'auto',
        prompt_msats: 2100,
        completion_msats: 4200,
        request_msats: 1050,
      });
      const shown = (await (await fetch(`${a3.baseURL}/providers/${perCall}`)).json()) as {
        models: { id: string; pricing: Record<string, unknown> }[];
      };
      expect(shown.models.find((m) => m.id === 'mock-gpt')!.pricing).toMatchObject({
        prompt_msats: 2217, // 2,111 × 1.05 = 2,216.55
        completion_msats: 4433, // 4,221 × 1.05 = 4,432.05
        request_msats: 1050,
      });
      for (const [gw, provider, price] of [
        [a, prepaid, 1084],
        [a3, perCall, 1086],
      ] as const) {
        await gw.wallet.receive(await gw.mintToken(100));
        const { apiKey, balanceMsat } = await gw.fundKey(50);
        let spent = 0;
        for (const stream of [false, true]) {
          const call = await chat(gw, apiKey, stream);
          expect(call.status).toBe(200);
          expect(chargedMsat(call)).toBe(price);
          spent += price;
          expect(await gw.available(apiKey)).toBe(balanceMsat - spent);
          // The admin's audit record names the operator's cost of the call; the key's own reader does not.
          const requestId = call.headers.get('x-request-id')!;
          const record = async () =>
            (await gw.gateway.services.audit!.list({ limit: 20 })).data.find(
              (r) => r.request_id === requestId,
            );
          await until('the call’s audit record', async () => (await record()) !== undefined);
          const r = (await record())!;
          expect(r.cost_msats).toBe(price);
          // B's price to a key is its charge; a per-call token is paid in whole sats (2,000 for 1,034 msat).
          expect(r.upstream_msats).toBe(provider === prepaid ? B_CHARGE : 2000);
          const own = await fetch(`${gw.baseURL}/wallet/audit?limit=20`, {
            headers: { authorization: `Bearer ${apiKey}` },
          });
          const mine = ((await own.json()) as { data: Record<string, unknown>[] }).data;
          const same = mine.find((x) => x.request_id === requestId)!;
          expect(same.cost_msats).toBe(price);
          expect(same).not.toHaveProperty('upstream_msats');
        }
        await gw.auditOk();
      }
      await b2.auditOk();
    } finally {
      await a.close();
      await a3.close();
      await b2.close();
    }
  });
});
