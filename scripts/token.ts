/**
 * `npm run token -- <amount> [--unit sat|msat] [--mint http://127.0.0.1:3338] [--v3]`
 *
 * Prints a fresh token from a (dev) mint through the public NUT-04 flow with cashu-ts as the client: request
 * a mint quote, (the fake Lightning backend marks it paid), mint the proofs, encode them (cashuB by default).
 */
import { parseArgs } from 'node:util';
import { getEncodedToken, MintQuoteState, Wallet } from '@cashu/cashu-ts';
import { encodeTokenV3 } from '../core/wallet/token-codec.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    unit: { type: 'string', default: 'sat' },
    mint: { type: 'string', default: process.env.DEV_MINT_URL ?? 'http://127.0.0.1:3338' },
    v3: { type: 'boolean', default: false },
  },
});

const amount = Number(positionals[0]);
const unit = values.unit ?? 'sat';
if (!Number.isSafeInteger(amount) || amount <= 0 || (unit !== 'sat' && unit !== 'msat')) {
  console.error('usage: npm run token -- <amount> [--unit sat|msat] [--mint URL] [--v3]');
  process.exit(2);
}
const mintUrl = (values.mint ?? '').replace(/\/+$/, '');
try {
  const wallet = new Wallet(mintUrl, { unit });
  await wallet.loadMint();
  const quote = await wallet.createMintQuoteBolt11(amount);
  const state = (await wallet.checkMintQuoteBolt11(quote)).state;
  if (state !== MintQuoteState.PAID) {
    console.error(
      `the mint quote is ${state}: pay ${quote.request} first (only the dev mint pays by itself)`,
    );
    process.exit(1);
  }
  const proofs = await wallet.mintProofsBolt11(amount, quote);
  const token = { mint: mintUrl, unit, proofs };
  console.log(values.v3 ? encodeTokenV3(token) : getEncodedToken(token));
} catch (err) {
  console.error(`could not mint a token at ${mintUrl}: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
