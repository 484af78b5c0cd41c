import { randomBytes } from 'node:crypto';
import { APIError } from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { createLedger } from '../../core/ledger/index.js';
import type { Ledger } from '../../core/ledger/types.js';
import { openStore, type StoreConnection } from '../../core/store/connection.js';
import { leaseSteps } from '../ledger/support/other-process.js';
import { type PaidGateway, startPaidGateway } from '../support/paid-gateway.js';

/**
 * The answers a caller and the operator get while part of a key's balance sits in a credit lease of another
 * gateway process that does not answer its recall (stalled, or cut off from the store), end to end through the
 * default pipeline, on both stores: a paid call is 503 `balance_in_transit` with `Retry-After` (not 402
 * `payment_required`, and nothing reaches the provider), and the operator's PATCH disabling the key says
 * `applied_everywhere: false` with the time by which that lease has expired. The other process is the store's
 * own lease step, opened under another process id and never stepped again until the test gives it back.
 */

const TTL = 60_000;
const limits = { requestsPerMinute: 1_000_000, tokensPerHour: 1_000_000_000, concurrent: 1_000_000 };

let h: PaidGateway | undefined;
let other: StoreConnection | undefined;
afterEach(async () => {
  await other?.close();
  other = undefined;
  await h?.auditOk();
  await h?.close();
  h = undefined;
});

/** A plain store ledger on the gateway's store, as another gateway process would have it. */
async function otherProcessLedger(g: PaidGateway): Promise<Ledger> {
  const config = g.gateway.services.config;
  other =
    g.store === 'redis'
      ? openStore({ redisUrl: process.env.TEST_REDIS_URL!, redisPrefix: config.redisPrefix })
      : openStore({ dataDir: config.dataDir });
  if (other.kind === 'redis') await other.ready(10_000);
  return createLedger(other, { warn: () => {} });
}

describe.each(['redis', 'sqlite'] as const)('balance in transit (%s, end to end)', (store) => {
  it('a call whose money sits in a lease that does not answer: 503 balance_in_transit with Retry-After; the operator is told the disable is not applied everywhere', async () => {
    h = await startPaidGateway({
      store,
      // The gateway's recall wait is LEASE_IDLE_MS: 300 ms here. Every process runs with the same TTL.
      env: { LEASE_IDLE_MS: '300', LEASE_TTL_MS: String(TTL), ADMIN_PASSWORD: 'operator-secret' },
    });
    const { apiKey, keyId, balanceMsat } = await h.fundKey(100);
    // The other process's slice: all but 1 msat, less than any call costs.
    const slice = balanceMsat - 1;
    const ledger = await otherProcessLedger(h);
    const leaseId = `l~${randomBytes(6).toString('hex')}~${randomBytes(8).toString('hex')}`;
    const step = leaseSteps(ledger, apiKey, leaseId, { msat: slice, ttlMs: TTL, limits });
    expect(await step(1, false)).toMatchObject({ ok: true, open: true, grantedMsat: slice });
    const upstreamBefore = h.upstream.stats.requests;

    const client = h.openai(apiKey);
    const err = await client.chat.completions
      .create({ model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }], max_tokens: 200 })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(APIError);
    const e = err as APIError;
    expect(e.status).toBe(503);
    expect(e.code).toBe('balance_in_transit');
    expect(Number(e.headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((e.error as { details?: { held_until?: number } }).details?.held_until).toBeGreaterThan(
      Date.now(),
    );
    // Nothing was relayed and nothing charged: the whole balance is still the key's.
    expect(h.upstream.stats.requests).toBe(upstreamBefore);

    // The operator disables the key: refused everywhere through the store, and the answer says one process has
    // not answered, and by when its lease is gone.
    const patch = await fetch(`${h.gateway.url}/admin/api/keys/${keyId}`, {
      method: 'PATCH',
      headers: { cookie: 'admin_password=operator-secret', 'content-type': 'application/json' },
      body: JSON.stringify({ disabled: true }),
    });
    expect(patch.status).toBe(200);
    const body = (await patch.json()) as {
      disabled: boolean;
      applied_everywhere: boolean;
      applied_by: number;
    };
    expect(body.disabled).toBe(true);
    expect(body.applied_everywhere).toBe(false);
    expect(body.applied_by).toBeGreaterThan(Date.now());

    // The other process gives its slice back: enabled again, the call is served and charged.
    expect(await step(2, true)).toMatchObject({ ok: true, open: false, grantedMsat: 0 });
    const enable = await fetch(`${h.gateway.url}/admin/api/keys/${keyId}`, {
      method: 'PATCH',
      headers: { cookie: 'admin_password=operator-secret', 'content-type': 'application/json' },
      body: JSON.stringify({ disabled: false }),
    });
    expect(((await enable.json()) as { applied_everywhere: boolean }).applied_everywhere).toBe(true);
    const ok = await client.chat.completions.create({
      model: 'mock-gpt',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 200,
    });
    expect(ok.choices[0]?.message.content).toBeTruthy();
    // Charged once, from the balance the slice gave back; nothing left reserved.
    const info = (await h.ledger.getKeyInfo({ apiKey }))!;
    expect(info.account.spentMsat).toBeGreaterThan(0);
    expect(info.account).toMatchObject({
      reservedMsat: 0,
      balanceMsat: balanceMsat - info.account.spentMsat,
    });
  }, 60_000);
});
