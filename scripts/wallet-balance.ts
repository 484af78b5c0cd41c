/**
 * `npm run wallet:balance [-- --json]`: the operator's eCash per mint and unit, from the proof store (no mint
 * call). Uses the gateway's configuration (CASHU_MINTS, REDIS_URL or DATA_DIR).
 */
import { fail, openOperatorWallet } from './wallet-open.js';

try {
  const { wallet, conn } = await openOperatorWallet();
  const lines = await wallet.balances();
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(lines, null, 2));
  } else if (lines.length === 0) {
    console.log('no proofs held');
  } else {
    for (const l of lines) {
      console.log(
        `${l.mint}\t${l.amount} ${l.unit}\t(${l.amountMsat} msat, ${l.proofs} proofs, ${l.reserved} ${l.unit} reserved)`,
      );
    }
    console.log(`total\t${lines.reduce((s, l) => s + l.amountMsat, 0)} msat`);
  }
  await conn.close();
} catch (err) {
  fail(err);
}
