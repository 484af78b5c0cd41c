import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.js';
import { ListingPublisher } from '../../core/network/listing-publisher.js';
import { loadNodeIdentity } from '../../core/network/nostr-identity.js';
import { startTestRelay, type TestRelay } from '../support/nostr-relay.js';

/**
 * The publisher against real relays with an injected clock: a refusing relay is retried after 5 s, then 10 s
 * (±20 % jitter), without holding up the accepting one; an accepted event is not sent again until the listing
 * changes or the refresh period passes, and each new event is strictly newer.
 */
describe('ListingPublisher', () => {
  let good: TestRelay;
  let bad: TestRelay;
  let now = 1_800_000_000_000;
  let fingerprint = 'a';
  let pub: ListingPublisher;

  beforeAll(async () => {
    good = await startTestRelay();
    bad = await startTestRelay();
    bad.refuse = true;
    pub = new ListingPublisher({
      identity: await loadNodeIdentity(undefined, undefined),
      relays: [good.url, bad.url],
      log: createLogger('silent'),
      refreshMs: 3_600_000,
      checkMs: 1000,
      now: () => now,
      source: {
        listing: () => ({
          nodeId: 'n1',
          urls: ['https://n.example'],
          mints: [],
          version: '1',
          name: 'N',
          about: 'A',
        }),
        fingerprint: () => fingerprint,
      },
    });
  });
  afterAll(async () => {
    await pub.close();
    await good.close();
    await bad.close();
  });

  it('backs off a refusing relay (5 s, then 10 s) while the other keeps the listing', async () => {
    await pub.tick();
    expect(good.events()).toHaveLength(1);
    expect(bad.received).toBe(1);
    const [g, b] = pub.status();
    expect(g).toMatchObject({ ok: true, event_id: good.events()[0]!.id });
    expect(b).toMatchObject({ ok: false, last_error: 'blocked: test relay refuses' });
    const first = Date.parse(b!.next_attempt_at!) - now;
    expect(first).toBeGreaterThanOrEqual(4000);
    expect(first).toBeLessThanOrEqual(6000);

    now += 3000; // before the backoff: neither relay is asked (the good one has this event)
    await pub.tick();
    expect(bad.received).toBe(1);
    expect(good.received).toBe(1);

    now += 3001; // past 6 s: asked again, refused again, the delay doubles
    await pub.tick();
    expect(bad.received).toBe(2);
    const second = Date.parse(pub.status()[1]!.next_attempt_at!) - now;
    expect(second).toBeGreaterThanOrEqual(8000);
    expect(second).toBeLessThanOrEqual(12_000);
    expect(good.received).toBe(1);
  });

  it('republishes a strictly newer event on a change and after the refresh period, not otherwise', async () => {
    const first = good.events()[0]!;
    await pub.tick();
    expect(good.received).toBe(1);
    fingerprint = 'b';
    await pub.tick();
    expect(good.received).toBe(2);
    const second = good.events()[0]!;
    expect(good.events()).toHaveLength(1);
    expect(second.created_at).toBeGreaterThan(first.created_at);
    now += 3_600_000;
    await pub.tick();
    expect(good.received).toBe(3);
    expect(good.events()[0]!.created_at).toBeGreaterThan(second.created_at);
  });
});
