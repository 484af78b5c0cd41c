/**
 * `npm run lnurl:dev -- --mint http://127.0.0.1:3342 [--port 8004]`
 *
 * The LNURL-pay server the refund tests use (test/support/lnurl-server.ts) on 127.0.0.1, for the README's
 * Lightning-address walkthrough: `alice@127.0.0.1:<port>` is a payRequest whose invoices are mint quotes of the
 * dev mint at `--mint` (the recipient's wallet; start it with `--manual-pay`, so a quote turns PAID only when a
 * melt pays it). Prints the address; stops on SIGINT/SIGTERM. A gateway resolves it only with
 * LIGHTNING_ADDRESS_ALLOW_PRIVATE=true (a loopback host).
 */
import { parseArgs } from 'node:util';
import { Wallet } from '@cashu/cashu-ts';
import { LnurlServer } from '../test/support/lnurl-server.js';

const { values } = parseArgs({
  options: { port: { type: 'string', default: '8004' }, mint: { type: 'string' } },
});
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || !values.mint) {
  console.error('usage: npm run lnurl:dev -- --mint <recipient dev mint URL> [--port 8004]');
  process.exit(2);
}
const recipient = new Wallet(values.mint, { unit: 'sat' });
try {
  await recipient.loadMint();
} catch (err) {
  console.error(
    `could not reach the recipient mint at ${values.mint}: ${err instanceof Error ? err.message : err}`,
  );
  process.exit(1);
}
const server = new LnurlServer(recipient);
await server.start(port);
console.log(server.address('alice'));
console.error(
  `LNURL-pay server listening on http://127.0.0.1:${server.port} (alice: invoices of ${values.mint})`,
);
const stop = (): void => void server.close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
