import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, signatureHeaders } from '../../core/events/signing.js';
import {
  assertSafeWebhookUrl,
  guardedAgent,
  isPublicAddress,
  UnsafeUrlError,
} from '../../core/events/ssrf.js';

describe('webhook signatures', () => {
  it('verify with the standardwebhooks package and with a plain HMAC of the raw body', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    const body = JSON.stringify({ id: 'evt_1', type: 'balance.low', data: { key_id: 'abc' } });
    const now = Math.floor(Date.now() / 1000);
    const headers = signatureHeaders(secret, 'evt_1', body, now);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    const hex = createHmac('sha256', secret).update(body).digest('hex');
    expect(headers['x-webhook-signature']).toBe(`sha256=${hex}`);
    // A changed body fails both.
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow();
    expect(createHmac('sha256', secret).update(`${body} `).digest('hex')).not.toBe(hex);
  });

  it('a secret that is not whsec_ still signs the spec header with the string as registered', () => {
    const headers = signatureHeaders('my plain secret', 'm1', '{}', 1);
    expect(headers['x-webhook-signature']).toBe(
      `sha256=${createHmac('sha256', 'my plain secret').update('{}').digest('hex')}`,
    );
    expect(headers['webhook-signature']).toMatch(/^v1,/);
  });
});

describe('SSRF guard', () => {
  const refused = [
    'http://127.0.0.1/',
    'http://127.1.2.3:8080/x',
    'http://localhost/',
    'http://[::1]/',
    'http://10.0.0.1/',
    'http://172.16.5.4/',
    'http://192.168.1.1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://100.64.0.1/',
    'http://0.0.0.0/',
    'http://[::]/',
    'http://[fc00::1]/',
    'http://[fd12:3456::1]/',
    'http://[fe80::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:10.0.0.1]/',
    'http://[::ffff:169.254.169.254]/',
    'http://[64:ff9b::a9fe:a9fe]/',
    'http://224.0.0.1/',
    'http://255.255.255.255/',
    'http://2130706433/', // 127.0.0.1 as one decimal number (the URL parser normalises it)
    'http://0x7f.1/',
  ];
  for (const url of refused) {
    it(`refuses ${url}`, async () => {
      await expect(assertSafeWebhookUrl(url, false)).rejects.toBeInstanceOf(UnsafeUrlError);
    });
  }

  it('refuses schemes other than http(s), credentials in the URL and garbage, even with private allowed', async () => {
    for (const url of [
      'ftp://example.com/',
      'file:///etc/passwd',
      'gopher://x/',
      'not a url',
      'http://u:p@example.com/',
    ]) {
      await expect(assertSafeWebhookUrl(url, true)).rejects.toBeInstanceOf(UnsafeUrlError);
    }
  });

  it('accepts public addresses, and private ones only when allowed', async () => {
    expect(isPublicAddress('8.8.8.8')).toBe(true);
    expect(isPublicAddress('2606:4700:4700::1111')).toBe(true);
    expect(isPublicAddress('::ffff:8.8.8.8')).toBe(true);
    await expect(assertSafeWebhookUrl('https://8.8.8.8/hook', false)).resolves.toBeInstanceOf(URL);
    await expect(assertSafeWebhookUrl('http://127.0.0.1:9/hook', true)).resolves.toBeInstanceOf(URL);
  });

  it('the delivery agent refuses to connect to a private address at request time (DNS rebinding)', async () => {
    const server = createServer((_req, res) => res.end('reached'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    try {
      // localhost is resolved by the agent itself: refused without WEBHOOK_ALLOW_PRIVATE_URLS…
      const strict = guardedAgent(false, 2000);
      await expect(request(`http://localhost:${port}/`, { dispatcher: strict })).rejects.toThrow(
        /non-public address/,
      );
      await strict.close();
      // …and reached with it.
      const open = guardedAgent(true, 2000);
      const r = await request(`http://localhost:${port}/`, { dispatcher: open });
      expect(await r.body.text()).toBe('reached');
      await open.close();
    } finally {
      server.close();
    }
  });
});
