/**
 * `npm run wallet:payout -- <bolt11 invoice> [--mint URL] [--unit sat|msat]`: pays operator funds out to a
 * Lightning invoice through a trusted mint (NUT-05 melt; the change comes back as proofs), only within the
 * operator surplus (core/account/operator-withdrawal.ts). Against the dev mint use an invoice of its fake
 * Lightning (a signed regtest invoice, `lnbcrt…`: a mint quote's `request`, or another dev mint's).
 */
import { parseArgs } from 'node:util';
import { withdrawSurplus } from '../core/account/operator-withdrawal.js';
import { createLedger } from '../core/ledger/index.js';
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
  // The same step as the console's payout action: only the operator surplus (proofs held − user balances of the
  // ledger in the same store) may leave.
  const ledger = await createLedger(conn);
  const res = await withdrawSurplus({ wallet, ledger }, invoice, {
    ...(values.mint ? { mint: values.mint } : {}),
    ...(unit ? { unit } : {}),
  });
  console.log(JSON.stringify(res, null, 2));
  await conn.close();
} catch (err) {
  fail(err);
}
