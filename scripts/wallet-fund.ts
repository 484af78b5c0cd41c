/**
 * `npm run wallet:fund -- <cashu token>`: redeems a token into the operator's wallet as operator money (owed to
 * no user): the surplus that pays `"payment": "cashu"` nodes (docs/providers.md). The wallet's receive (a swap
 * at the token's trusted mint, idempotent by the token's hash). Uses the gateway's configuration (CASHU_MINTS,
 * REDIS_URL or DATA_DIR). Prints the amount received, never the token.
 */
import { fail, openOperatorWallet } from './wallet-open.js';

try {
  const token = process.argv.slice(2).find((a) => a.startsWith('cashu'));
  if (token === undefined) throw new Error('usage: npm run wallet:fund -- <cashuA…|cashuB… token>');
  const { wallet, conn } = await openOperatorWallet();
  try {
    const receipt = await wallet.receive(token);
    console.log(`received ${receipt.amountMsat} msat from ${receipt.mint} into the operator wallet`);
  } finally {
    await conn.close();
  }
} catch (err) {
  fail(err);
}
