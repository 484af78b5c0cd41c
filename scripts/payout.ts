/**
 * `npm run wallet:payout -- <bolt11 invoice> [--mint URL] [--unit sat|msat]`: pays operator funds out to a
 * Lightning invoice through a trusted mint (NUT-05 melt; the change comes back as proofs). Against the dev
 * mint use one of its fake invoices (`lnbcrt<amount>n1…`).
 */
import { parseArgs } from 'node:util';
import { fail, openOperatorWallet } from './wallet-open.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { mint: { type: 'string' }, unit: { type: 'string' } },
});
const invoice = positionals[0];
const unit = values.unit;
if (!invoice || (unit !== undefined && unit !== 'sat' && unit !== 'msat')) {
  console.error('usage: npm run wallet:payout -- <bolt11 invoice> [--mint URL] [--unit sat|msat]');
  process.exit(2);
}
try {
  const { wallet, conn } = await openOperatorWallet();
  const res = await wallet.payout(invoice, {
    ...(values.mint ? { mint: values.mint } : {}),
    ...(unit ? { unit } : {}),
  });
  console.log(JSON.stringify(res, null, 2));
  await conn.close();
} catch (err) {
  fail(err);
}
