import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { emptyUsage } from '../../core/metering/usage.js';
import { nodeCallBound, nodeCallCost, nodeRateCard } from '../../core/pricing/node-rates.js';
import { openNodeAccountStore } from '../../core/providers/node-account-store.js';
import { parseProvidersFile } from '../../core/providers/providers.js';
import { dropStore, type StoreKind, testStore } from '../support/dev-mint.js';
import { startPaidGateway } from '../support/paid-gateway.js';
import { until } from '../support/until.js';

/**
 * The rules of `"payment": "cashu-balance"` and `"pricing": "auto"` that need no second node (the chained
 * gateways are in test/network/pay-nodes-balance.test.ts): the providers file's checks, the auto price
 * arithmetic, the node key store's lock, and the start refused for a node that advertises no price.
 */

const DEFAULTS = { timeoutMs: 1000, maxConnections: 4 };
const file = (entry: object) =>
  parseProvidersFile(
    JSON.stringify({ providers: [{ name: 'n', base_url: 'http://node/v1', ...entry }] }),
    {},
    DEFAULTS,
  );
const prepaid = { payment: 'cashu-balance', topup_sats: 20, min_balance_sats: 5 };

describe('providers file: "cashu-balance", "pricing": "auto", "markup"', () => {
  it('reads a prepaid node with auto prices', () => {
    const spec = file({ ...prepaid, pricing: 'auto', markup: '1.05' }).providers[0]!;
    expect(spec.payment).toBe('cashu-balance');
    expect(spec.prepaid).toEqual({ topupMsat: 20_000, minBalanceMsat: 5000 });
    expect(spec.autoPricing).toEqual({ markup: '1.05' });
    expect(spec.pricing).toEqual({});
    expect(file({ payment: 'cashu', pricing: 'auto' }).providers[0]!.autoPricing).toEqual({ markup: '1' });
  });

  it('refuses bad combinations at start, naming the field', () => {
    const bad: [object, RegExp][] = [
      [{ payment: 'cashu-balance', min_balance_sats: 5 }, /needs "topup_sats"/],
      [{ payment: 'cashu-balance', topup_sats: 20 }, /needs "min_balance_sats"/],
      [{ ...prepaid, min_balance_sats: 20 }, /"min_balance_sats" \(20\) must be below "topup_sats" \(20\)/],
      [{ ...prepaid, topup_sats: 0 }, /"topup_sats" must be an integer from 1/],
      [{ ...prepaid, topup_sats: 2.5 }, /"topup_sats" must be an integer from 1/],
      [{ payment: 'cashu', topup_sats: 20 }, /"topup_sats" is only for a "payment": "cashu-balance" node/],
      [{ min_balance_sats: 1 }, /"min_balance_sats" is only for a "payment": "cashu-balance" node/],
      [{ ...prepaid, api_key: 'k' }, /"cashu-balance" node is paid with eCash; give it no "api_key"/],
      [{ ...prepaid, api: 'anthropic' }, /speaks the gateway's own \(openai\) API/],
      [{ pricing: 'auto' }, /only a "payment": "cashu" or "cashu-balance" node advertises them/],
      [{ payment: 'cashu', markup: '1.05' }, /"markup" goes with "pricing": "auto"/],
      [{ payment: 'cashu', pricing: 'auto', markup: '0.99' }, /at least "1".*sells below cost/],
      [{ payment: 'cashu', pricing: 'auto', markup: 1.05 }, /decimal string.*quoted/],
      [{ payment: 'cashu', pricing: 'auto', markup: '1.0000001' }, /at most 6 decimals/],
      [{ payment: 'cashu', pricing: 'auto', markup: '101' }, /at most "100"/],
      [{ payment: 'cashu', pricing: 'cheap' }, /"pricing" must be "auto" or map model ids to prices/],
    ];
    for (const [entry, message] of bad) expect(() => file(entry), JSON.stringify(entry)).toThrow(message);
  });
});

describe('auto prices: the node’s advertised msats × markup, rounded up once', () => {
  it('prompt and completion at fractional per-1k prices', () => {
    const card = nodeRateCard(
      { promptMsatPer1k: 2110.5, completionMsatPer1k: 4221, requestMsat: 1000 },
      '1.05',
    );
    const usage = { ...emptyUsage(), input: 6, output: 5 };
    // (1,000 + 6 × 2.1105 + 5 × 4.221) × 1.05 = 1,033.768 × 1.05 = 1,085.4564 → 1,086.
    const c = nodeCallCost(card, usage, undefined);
    expect(c.msat).toBe(1086);
    // The breakdown's parts sum to the charge: prompt 13 (13.29…), completion 22 (22.16…), the rest fees.
    expect(c.breakdown).toMatchObject({ promptMsat: 13, completionMsat: 22, feesMsat: 1086 - 35 });
    expect(Object.values(c.breakdown.dimensions).reduce((s, v) => s + v, 0)).toBe(1086);
  });

  it('the node’s other dimensions at their own prices; numbers written with an exponent read exactly', () => {
    const card = nodeRateCard(
      {
        promptMsatPer1k: 2000,
        completionMsatPer1k: 4000,
        requestMsat: 0,
        dimensionMsats: { input_cache_read: 500, web_search: 7 },
      },
      '1.5',
    );
    const usage = { ...emptyUsage(), input: 10, cacheRead: 100, webSearch: 1 };
    // (10 × 2 + 100 × 0.5 + 1 × 7) × 1.5 = 77 × 1.5 = 115.5 → 116.
    expect(nodeCallCost(card, usage, undefined).msat).toBe(116);
    // 1.5e-7 msats per 1k tokens (String(1.5e-7) is "1.5e-7") × 10^10 tokens = 1.5 msat → 2.
    const tiny = nodeRateCard({ promptMsatPer1k: 1.5e-7, completionMsatPer1k: 0, requestMsat: 0 }, '1');
    expect(nodeCallCost(tiny, { ...emptyUsage(), input: 10_000_000_000 }, undefined).msat).toBe(2);
  });

  it('the reservation bound: the prompt bound + max_tokens (else the whole window, else 4,096 told)', () => {
    const card = nodeRateCard(
      { promptMsatPer1k: 2000, completionMsatPer1k: 4000, requestMsat: 1000 },
      '1.05',
    );
    // In integers: × 105 / 100, rounded up.
    const at = (completion: number) => Math.ceil(((1000 + 40 * 2 + completion * 4) * 105) / 100);
    expect(nodeCallBound(card, { endpoint: 'chat', promptTokensBound: 40, maxTokens: 5 })).toEqual({
      maxMsat: at(5),
      minMsat: at(5),
      maxTokens: 5,
    });
    // The whole window, not 1,040 − 40: the real prompt may be far below its bound.
    expect(nodeCallBound(card, { endpoint: 'chat', promptTokensBound: 40, contextLength: 1040 })).toEqual({
      maxMsat: at(1040),
      minMsat: at(16),
      maxTokens: undefined,
    });
    // No window: 4,096, and the provider is told.
    expect(nodeCallBound(card, { endpoint: 'chat', promptTokensBound: 40 })).toMatchObject({
      maxMsat: at(4096),
      maxTokens: 4096,
    });
    expect(nodeCallBound(card, { endpoint: 'embeddings', promptTokensBound: 40, maxTokens: 5 }).maxMsat).toBe(
      at(0),
    );
  });
});

describe.each<StoreKind>(['sqlite', 'redis'])('the node key store on %s', (kind) => {
  it('one lock holder at a time; only the holder writes; the key is never replaced', async () => {
    const conn = testStore(kind);
    if (conn.kind === 'redis') await conn.ready();
    const s = openNodeAccountStore(conn);
    const url = 'http://node-b/v1';
    try {
      expect(await s.read(url)).toEqual({ apiKey: undefined, pending: undefined, topups: 0 });
      expect(await s.lock(url, 'p1', 60_000)).toBe(true);
      expect(await s.lock(url, 'p2', 60_000)).toBe(false);
      expect(await s.lock(url, 'p1', 60_000)).toBe(true); // the holder extends it
      const pending = { kind: 'create' as const, token: 'cashuBx', amountMsat: 20_000, atMs: 1 };
      expect(await s.write(url, 'p2', { pending })).toBe(false);
      expect(await s.write(url, 'p1', { pending })).toBe(true);
      expect((await s.read(url)).pending).toEqual(pending);
      expect(await s.write(url, 'p1', { apiKey: 'sk-first', pending: null })).toBe(true);
      expect(await s.read(url)).toEqual({ apiKey: 'sk-first', pending: undefined, topups: 0 });
      await s.unlock(url, 'p2'); // not the holder: nothing freed
      expect(await s.lock(url, 'p2', 60_000)).toBe(false);
      await s.unlock(url, 'p1');
      // A lock that ran out is taken by the next process.
      expect(await s.lock(url, 'p2', 1)).toBe(true);
      await until('the 1 ms lock ran out', () => s.lock(url, 'p3', 60_000), 5_000, 5);
      expect(await s.write(url, 'p2', { topup: true })).toBe(false);
      expect(await s.write(url, 'p3', { apiKey: 'sk-second', topup: true })).toBe(true);
      expect(await s.read(url)).toEqual({ apiKey: 'sk-first', pending: undefined, topups: 1 });
    } finally {
      await dropStore(conn);
    }
  });
});

describe('a "pricing": "auto" node that advertises no price', () => {
  it('stops the start, naming the provider and what is missing', async () => {
    const node = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      // Listed, but unpriced (a node without a fresh BTC price shows null prices).
      const pricing = { prompt_msats: null, completion_msats: null, request_msats: null };
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'mock-gpt', pricing }] }));
    });
    await new Promise<void>((r) => node.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(node.address() as AddressInfo).port}/v1`;
    try {
      await expect(
        startPaidGateway({
          store: 'sqlite',
          providersFile: () => ({
            providers: [{ name: 'unpriced', base_url: url, payment: 'cashu', pricing: 'auto' }],
          }),
        }),
      ).rejects.toThrow(/"unpriced" has "pricing": "auto" but the node advertises no price .* for any model/);
    } finally {
      await new Promise((r) => node.close(r));
    }
  });
});
