import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LightningAddresses } from '../../core/account/lightning-address.js';
import { fakeInvoice } from '../../scripts/mint/index.js';

/**
 * The Lightning address resolver under the webhook SSRF rules: without LIGHTNING_ADDRESS_ALLOW_PRIVATE a
 * loopback or private host is refused before any request is sent, and a callback pointing at one is refused
 * too; with it, the loopback LNURL server is reached over http and its invoice amount is checked.
 */
describe('Lightning addresses under the SSRF rules', () => {
  let server: Server;
  let port = 0;
  let hits = 0;
  let callback = '';
  let pr = '';
  beforeAll(async () => {
    server = createServer((req, res) => {
      hits++;
      const url = new URL(req.url ?? '/', 'http://x');
      res.writeHead(200, { 'content-type': 'application/json' });
      if (url.pathname.startsWith('/.well-known/lnurlp/')) {
        res.end(
          JSON.stringify({
            tag: 'payRequest',
            callback: callback || `http://127.0.0.1:${port}/cb`,
            minSendable: 1000,
            maxSendable: 10_000_000,
            metadata: '[["text/plain","x"]]',
          }),
        );
      } else res.end(JSON.stringify({ pr }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('refuses loopback, private and metadata hosts without the operator allowance, sending nothing', async () => {
    const strict = new LightningAddresses({ allowPrivate: false, timeoutMs: 2000 });
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, '10.0.0.1', '169.254.169.254', '[::1]']) {
      await expect(strict.resolve(`alice@${host}`)).rejects.toMatchObject({ code: 'refund_address_refused' });
    }
    expect(hits).toBe(0);
    await strict.close();
  });

  it('with the allowance: resolves over http, refuses a callback with credentials, checks the invoice amount', async () => {
    const open = new LightningAddresses({ allowPrivate: true, timeoutMs: 2000 });
    const pay = await open.resolve(`Alice@127.0.0.1:${port}`);
    expect(pay).toMatchObject({
      address: `alice@127.0.0.1:${port}`,
      minSendableMsat: 1000,
      maxSendableMsat: 10_000_000,
    });
    pr = fakeInvoice(2000); // 2 sats
    await expect(open.invoice(pay, 3000)).rejects.toMatchObject({ code: 'refund_invoice_failed' });
    expect(await open.invoice(pay, 2000)).toBe(pr);
    pr = `${pr.slice(0, -1)}${pr.endsWith('q') ? 'p' : 'q'}`; // the same, with a broken checksum
    await expect(open.invoice(pay, 2000)).rejects.toMatchObject({ code: 'refund_invoice_failed' });
    callback = `http://user:pw@127.0.0.1:${port}/cb`;
    await expect(open.resolve(`alice@127.0.0.1:${port}`)).rejects.toMatchObject({
      code: 'refund_address_refused',
    });
    callback = '';
    await open.close();
  });
});
