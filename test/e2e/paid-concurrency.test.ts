import { afterAll, describe, expect, it } from 'vitest';
import { readTokenMeta } from '../../core/wallet/token-codec.js';
import { captureLog } from '../support/dev-mint.js';
import { type PaidGateway, type PaidStore, startPaidGateway } from '../support/paid-gateway.js';

/**
 * 200 concurrent paid calls on a key that affords 50: at most 50 are served, the balance never goes
 * negative and the audit holds. Plus a captured-log run: no API key, token or proof secret in the logs.
 */
const messages = [{ role: 'user' as const, content: 'hi' }];

describe.each<PaidStore>(['sqlite', 'redis'])('concurrency on %s', (store) => {
  let h: PaidGateway | undefined;
  afterAll(async () => h?.close());

  it('200 concurrent calls on a key that affords 50 → exactly 50 served, never negative', async () => {
    h = await startPaidGateway({
      store,
      env: { FIXED_PRICING: 'true', FIXED_COST_PER_REQUEST: '1', RATE_LIMIT_CONCURRENT: '1000' },
      upstream: { latencyMs: 20 },
    });
    const gw = h;
    const { apiKey } = await gw.fundKey(50);
    const statuses = await Promise.all(
      Array.from({ length: 200 }, () =>
        gw
          .post('/chat/completions', { model: 'mock-gpt', messages }, { authorization: `Bearer ${apiKey}` })
          .then(async (r) => {
            await r.arrayBuffer();
            return r.status;
          }),
      ),
    );
    const served = statuses.filter((s) => s === 200).length;
    expect(served).toBe(50);
    expect(statuses.filter((s) => s !== 200).every((s) => s === 402)).toBe(true);
    expect(gw.upstream.stats.requests).toBe(50 + 1); // + the model-list fetch at start
    const info = await gw.ledger.getKeyInfo({ apiKey });
    expect(info!.account.balanceMsat).toBe(0);
    expect(info!.usage.reservedMsat).toBe(0);
    expect(info!.usage.totalSpentMsat).toBe(50_000);
    await gw.auditOk();
  });
});

describe('logs of a full run', () => {
  it('contain no API key, eCash token or proof secret', async () => {
    const captured = captureLog();
    const h = await startPaidGateway({
      store: 'sqlite',
      env: { FIXED_PRICING: 'true', FIXED_COST_PER_REQUEST: '1', LOG_LEVEL: 'debug' },
      log: captured.log,
    });
    const secrets: string[] = [];
    try {
      const { apiKey } = await h.fundKey(10);
      secrets.push(apiKey);
      await h.openai(apiKey).chat.completions.create({ model: 'mock-gpt', messages });
      const bearer = await h.mintToken(5);
      const xcashu = await h.mintToken(5);
      const spent = await h.mintToken(3);
      for (const t of [bearer, xcashu, spent]) {
        secrets.push(t, ...readTokenMeta(t).secrets);
      }
      await h.openai(bearer).chat.completions.create({ model: 'mock-gpt', messages });
      const r = await h.post(
        '/chat/completions',
        { model: 'mock-gpt', messages, stream: true },
        { 'x-cashu': xcashu },
      );
      const text = await r.text();
      const change = /: x-cashu (\S+)/.exec(text)![1]!;
      secrets.push(change, ...readTokenMeta(change).secrets);
      // Failures log too: a spent token, an upstream failure, a bad key.
      const w = await h.newWallet();
      await w.receive(spent);
      await h.post(
        '/chat/completions',
        { model: 'mock-gpt', messages },
        { authorization: `Bearer ${spent}` },
      );
      h.upstream.setBehaviour({ error: { status: 500, body: 'nope', contentType: 'text/plain' } });
      await h.post(
        '/chat/completions',
        { model: 'mock-gpt', messages },
        { authorization: `Bearer ${apiKey}` },
      );
      await h.auditOk();
    } finally {
      await h.close();
    }
    const logs = captured.text();
    expect(logs.length).toBeGreaterThan(0);
    for (const s of secrets) expect(logs.includes(s)).toBe(false);
  });
});
