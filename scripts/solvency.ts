/**
 * `npm run wallet:solvency [-- --user-balances-msat N] [--json]`: asks each mint (NUT-07) which of the
 * operator's proofs are unspent and compares their value with the sum of user balances, read from the ledger
 * in the same store (or given with --user-balances-msat). Exit code 0 when solvent, 3 when not.
 */
import { parseArgs } from 'node:util';
import type { StoreConnection } from '../core/store/connection.js';
import { fail, openOperatorWallet } from './wallet-open.js';

const { values } = parseArgs({
  options: { 'user-balances-msat': { type: 'string' }, json: { type: 'boolean', default: false } },
});

async function ledgerTotal(conn: StoreConnection): Promise<number> {
  const given = values['user-balances-msat'];
  if (given !== undefined) {
    const n = Number(given);
    if (!Number.isSafeInteger(n) || n < 0)
      throw new Error('--user-balances-msat must be a non-negative integer');
    return n;
  }
  // The ledger lives in the same store; imported lazily so this tool has no hard dependency on its internals.
  const { createLedger } = await import('../core/ledger/index.js');
  const ledger = await createLedger(conn);
  return ledger.totalUserBalancesMsat();
}

try {
  const { wallet, conn } = await openOperatorWallet();
  const report = await wallet.checkSolvency(() => ledgerTotal(conn));
  if (values.json) {
    console.log(JSON.stringify(report, null, 2));
  } else {
    for (const m of report.perMint) {
      console.log(
        `${m.mint}\t${m.unit}\tunspent ${m.unspentMsat} msat\tpending ${m.pendingMsat}\tspent ${m.spentMsat}`,
      );
    }
    console.log(`proofs (unspent)  ${report.proofsMsat} msat`);
    console.log(`user balances     ${report.userBalancesMsat} msat`);
    console.log(report.solvent ? 'SOLVENT' : 'NOT SOLVENT');
    if (report.spentMsat > 0)
      console.log(`warning: ${report.spentMsat} msat of proofs held are spent at the mint`);
  }
  await conn.close();
  process.exit(report.solvent ? 0 : 3);
} catch (err) {
  fail(err);
}
