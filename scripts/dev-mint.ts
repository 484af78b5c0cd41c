/**
 * `npm run mint:dev -- [--port 3338] [--fee-ppk 0] [--units sat,msat] [--data ./data/dev-mint.json]
 *   [--manual-pay] [--no-nut09] [--peer http://127.0.0.1:3338 …]`
 *
 * Starts the dev Cashu mint (scripts/mint/) on 127.0.0.1 and prints its URL. Fake Lightning: mint quotes are
 * paid at once (with `--manual-pay`: UNPAID until `POST /dev/pay/mint-quote/{quote}`), melt invoices are
 * "paid" at once — and with `--peer <url>` (repeatable) the payment is also delivered to that dev mint's
 * `POST /dev/pay`, so a melt here pays an invoice another dev mint issued (a foreign-mint swap, FOREIGN_MINTS=swap,
 * against a `--manual-pay` primary). `--no-nut09`: a mint without NUT-09 restore (optional in the protocol). Not
 * for real money.
 */
import { parseArgs } from 'node:util';
import { addFakeNetworkPeer } from './mint/fake-lightning.js';
import { type MintUnit, startDevMint } from './mint/index.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '3338' },
    'fee-ppk': { type: 'string', default: '0' },
    units: { type: 'string', default: 'sat,msat' },
    data: { type: 'string' },
    'manual-pay': { type: 'boolean', default: false },
    'no-nut09': { type: 'boolean', default: false },
    peer: { type: 'string', multiple: true },
  },
});

const units = (values.units ?? 'sat,msat').split(',').map((u) => u.trim());
for (const u of units) {
  if (u !== 'sat' && u !== 'msat') {
    console.error(`--units: unsupported unit ${u} (sat, msat)`);
    process.exit(2);
  }
}
const port = Number(values.port);
const inputFeePpk = Number(values['fee-ppk']);
if (!Number.isInteger(port) || port < 0 || !Number.isInteger(inputFeePpk) || inputFeePpk < 0) {
  console.error('--port and --fee-ppk must be non-negative integers');
  process.exit(2);
}

for (const peer of values.peer ?? []) addFakeNetworkPeer(peer);
const mint = await startDevMint({
  port,
  inputFeePpk,
  units: units as MintUnit[],
  mintQuotePayment: values['manual-pay'] ? 'manual' : 'auto',
  ...(values['no-nut09'] ? { nut09: false } : {}),
  ...(values.data ? { dataFile: values.data } : {}),
});
console.log(mint.url);
console.error(
  `dev mint listening on ${mint.url} (units ${units.join(', ')}, input_fee_ppk ${inputFeePpk}` +
    `${values.data ? `, state in ${values.data}` : ', in-memory'}); fake Lightning node ${mint.nodePubkey} ` +
    '(signed regtest BOLT11 invoices, lnbcrt…)' +
    (values['manual-pay'] ? '; mint quotes stay UNPAID until POST /dev/pay/mint-quote/{quote}' : ''),
);
const stop = async (): Promise<void> => {
  await mint.close();
  process.exit(0);
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
