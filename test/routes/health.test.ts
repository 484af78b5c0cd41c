import { describe, expect, it } from 'vitest';
import { loadUws } from '../../core/http/uws-engine.js';
import { startTestGateway } from '../support/gateway.js';
import { type PaidGateway, paidGatewayPerSuite } from '../support/paid-gateway.js';
import { until } from '../support/until.js';
import { assertDocumented } from './response-schema.js';

/** GET /readyz of `h` answering 503 service_unavailable: the checks it names. */
async function unreadyChecks(h: PaidGateway): Promise<Record<string, string>> {
  const res = await fetch(`${h.gateway.url}/readyz`);
  expect(res.status).toBe(503);
  const body = (await res.json()) as {
    error: { code: string; details: { checks: Record<string, string> } };
  };
  expect(body.error.code).toBe('service_unavailable');
  return body.error.details.checks;
}

/** GET /healthz and /readyz: readiness follows the store, the primary mint and the shutdown. */
describe('health probes', () => {
  const h = paidGatewayPerSuite({ store: 'sqlite' }, { auditEachTest: false });

  it('healthz is 200 while the process runs', async () => {
    const res = await fetch(`${h.gateway.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', pid: process.pid });
  });

  it('readyz is 200 with every check ok, matching its schema', async () => {
    const res = await fetch(`${h.gateway.url}/readyz`);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toEqual({ status: 'ready', checks: { store: 'ok', mint: 'ok' } });
    assertDocumented('GET', '/readyz', 200, body);
  });

  it('readyz is 503 naming the mint while the primary mint is down', async () => {
    h.mint.setOutage(500);
    try {
      // Once the one-second cache of the last good answer has passed, readiness sees the mint down.
      const readyz = async () => (await fetch(`${h.gateway.url}/readyz`)).status;
      await until('readyz sees the mint down', async () => (await readyz()) === 503, 5_000, 50);
      expect(await unreadyChecks(h)).toEqual({ store: 'ok', mint: 'failing' });
    } finally {
      h.mint.setOutage(null);
    }
  });

  it('readyz is 503 draining once a shutdown began', async () => {
    h.gateway.services.lifecycle!.draining = true;
    try {
      const res = await fetch(`${h.gateway.url}/readyz`);
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: { details: unknown } }).error.details).toEqual({
        checks: { lifecycle: 'draining' },
      });
    } finally {
      h.gateway.services.lifecycle!.draining = false;
    }
  });
});

/** The store itself away: this gateway's own Redis connection is closed (other clients of Redis are untouched). */
describe('readyz with the store down', () => {
  const h = paidGatewayPerSuite({ store: 'redis' }, { auditEachTest: false });

  it('is 503 naming the store while the money store does not answer, and 200 again once it does', async () => {
    const store = h.gateway.services.store;
    if (store?.kind !== 'redis') throw new Error('expected the Redis store');
    store.redis.disconnect();
    try {
      expect(await unreadyChecks(h)).toEqual({ store: 'failing', mint: 'ok' });
    } finally {
      // The store reconnects a client that ended by itself (core/store/connection.ts, after 500 ms): when the
      // checks above took longer it is connecting already, which is what this line asks for.
      await store.redis.connect().catch((err: Error) => {
        if (!/already connecting|connected/.test(err.message)) throw err;
      });
    }
    // Past the one-second cache, ready again (bounded poll, no fixed expectation on timing).
    const readyz = async () => (await fetch(`${h.gateway.url}/readyz`)).status;
    await until('ready again', async () => (await readyz()) === 200, 10_000, 200);
    expect(await readyz()).toBe(200);
  });
});

/**
 * HTTP_ENGINE=uws where no uWS build loads (Node 22 and 24 with glibc 2.36: README, "HTTP engines"): node:http
 * serves, and GET /readyz says so and why. Where the binary loads (Node 20 here), uWS serves and readyz is silent.
 */
describe('readyz names the engine serving when uWS was asked for', () => {
  it('says node:http serves, and why, exactly when the uWS binary cannot load here', async () => {
    let loadError: string | undefined;
    try {
      loadUws();
    } catch (err) {
      loadError = (err as Error).message.split('\n')[0];
    }
    const gw = await startTestGateway({ engine: 'uws' });
    try {
      const res = await fetch(`${gw.url}/readyz`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { engine?: { requested: string; serving: string; reason: string } };
      assertDocumented('GET', '/readyz', 200, body);
      if (loadError === undefined) {
        expect(gw.engine).toBe('uws');
        expect(body.engine).toBeUndefined();
      } else {
        expect(gw.engine).toBe('node');
        expect(body.engine).toEqual({
          requested: 'uws',
          serving: 'node',
          reason: `uWebSockets.js could not load on Node ${process.versions.node} (${process.platform}-${process.arch}, ABI ${process.versions.modules}): ${loadError.slice(0, 200)}`,
        });
      }
    } finally {
      await gw.close();
    }
  });
});
