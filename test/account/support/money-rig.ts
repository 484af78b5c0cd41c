import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { settlePayoutRecord } from '../../../core/account/pay-out.js';
import { createLedger } from '../../../core/ledger/index.js';
import type { Ledger } from '../../../core/ledger/types.js';
import type { StoreConnection } from '../../../core/store/connection.js';
import type { CreateWalletOptions, WalletService } from '../../../core/wallet/types.js';
import { createWallet } from '../../../core/wallet/wallet.js';
import type { DevMintOptions } from '../../../scripts/mint/index.js';
import type { DevMint, StoreKind } from '../../support/dev-mint.js';
import { captureLog, dropStore, startTestMint, testStore, testWallet } from '../../support/dev-mint.js';
import { lateBound } from '../../support/late-bound.js';

/** The real money services of one store: what the money steps (core/account/) are given. */
export interface MoneyRig {
  readonly mint: DevMint;
  readonly conn: StoreConnection;
  readonly ledger: Ledger;
  readonly wallet: WalletService;
}

/**
 * For a describe block: a dev mint (`mintOptions`), a fresh store of `kind`, its ledger and the operator's wallet
 * holding a 5,000-sat float (so pay-outs can be made from the operator's proofs), started before the tests and
 * closed (the store dropped) after them. The fields stand for the started ones.
 */
export function moneyRigPerSuite(kind: StoreKind, mintOptions: DevMintOptions = {}): MoneyRig {
  let mint: DevMint | undefined;
  let conn: StoreConnection | undefined;
  let ledger: Ledger | undefined;
  let wallet: WalletService | undefined;
  beforeAll(async () => {
    mint = await startTestMint(mintOptions);
    conn = testStore(kind);
    ledger = await createLedger(conn, {});
    wallet = await testWallet(conn, [mint.url]);
    await wallet.receive(await mint.mintTokens(5_000));
  });
  afterAll(async () => {
    await wallet?.close();
    await ledger?.close();
    await dropStore(conn!);
    await mint?.close();
  });
  return {
    mint: lateBound(() => mint, 'the dev mint'),
    conn: lateBound(() => conn, 'the store'),
    ledger: lateBound(() => ledger, 'the ledger'),
    wallet: lateBound(() => wallet, 'the wallet'),
  };
}

/** After each test: the ledger's conservation check finds no breach and the wallet's solvency check matches `solvency`. */
export function balancedAfterEach(
  money: () => { ledger: Ledger; wallet: WalletService },
  solvency: object = { solvent: true },
): void {
  afterEach(async () => {
    const { ledger, wallet } = money();
    expect((await ledger.checkConservation()).breaches).toEqual([]);
    expect(await wallet.checkSolvency(() => ledger.totalUserBalancesMsat())).toMatchObject(solvency);
  });
}

/** What a settling wallet is opened with: createWallet's options but its log and payout settler. */
export type SettlingWalletOptions = Omit<CreateWalletOptions, 'log' | 'payouts'>;

/**
 * A wallet as core/services.ts builds it, with `options` and a captured log: payout records its recovery pass
 * finds are resolved with `ledger` (settlePayoutRecord).
 */
export function settlingWallet(ledger: Ledger, options: SettlingWalletOptions): Promise<WalletService> {
  return createWallet({
    log: captureLog().log,
    ...options,
    payouts: (record, w) => settlePayoutRecord({ ledger, wallet: w }, record),
  });
}

/**
 * A settling wallet on `conn` and the mint at `mintUrl`: payout records are resolved with `ledger` by its
 * recovery pass once older than `claimStaleAfterMs`.
 */
export function recoveringWallet(
  conn: StoreConnection,
  mintUrl: string,
  ledger: Ledger,
  claimStaleAfterMs: number,
): Promise<WalletService> {
  return settlingWallet(ledger, { conn, mints: [mintUrl], claimStaleAfterMs });
}
