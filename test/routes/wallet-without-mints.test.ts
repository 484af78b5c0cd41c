import { describe, expect, it } from 'vitest';
import { testGatewayPerSuite } from '../support/gateway.js';

/**
 * A bare start (no CASHU_MINTS): the store opens, the wallet does not. The wallet routes answer 503 with a message
 * that names the setting to set, not "no balance store" (the store is fine).
 */
describe('wallet routes on a node started without CASHU_MINTS', () => {
  const gw = testGatewayPerSuite({ engine: 'node' });

  it('POST /v1/wallet/create answers 503 service_unavailable naming CASHU_MINTS', async () => {
    const r = await fetch(`${gw.url}/v1/wallet/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ cashu_token: 'cashuBo2FteBxodHRwOi8vMTI3LjAuMC4xOjMzMzg' }),
    });
    const body = (await r.json()) as { error: { code: string; message: string } };
    expect(r.status, JSON.stringify(body)).toBe(503);
    expect(body.error.code).toBe('service_unavailable');
    expect(body.error.message).toBe(
      'This node has no eCash wallet: set CASHU_MINTS to the URLs of the mints it trusts (comma-separated) and restart it',
    );
  });
});
