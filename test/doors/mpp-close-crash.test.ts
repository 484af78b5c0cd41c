import { describe, expect, it } from 'vitest';
import { paidProcesses } from '../support/paid-process.js';
import { TOKEN_PRICES } from '../support/prices.js';
import { until } from '../support/until.js';
import { type CloseBody, decodeReceipt, mppSessionClient } from './support/mpp-session.js';

/**
 * An MPP session close killed (SIGKILL, `crashPoint`) at each step of its payout, then asked again of the
 * restarted gateway (the same INSTANCE_NAME, so its start-up recovery pass decides what the dead one left): the
 * return invoice is paid exactly once, the session's balance debited once, and the close answers `succeeded`
 * with the melt's amount — never stuck behind the dead closer's claim, never paid twice.
 *
 * - `lnrefund-after-hold`: the payout hold made, no melt journalled. The recovery pass aborts the hold; the
 *   close's claim (no payout under way) is taken over once MPP_CLOSE_TAKEOVER_MS old, and the close pays.
 * - `before-melt`: the melt journalled and marked submitted, never sent. The mint says its quote is unpaid, which
 *   the pass does not believe while the dead process's request could still reach the mint (until the quote
 *   expires: 15 s here, `meltQuoteTtlS`; 409 `payout_in_progress` meanwhile); then it rolls the melt back and
 *   aborts the hold, and the close is taken over as above.
 * - `after-melt`: the mint paid, the hold not settled. The pass commits the refund; the close answers from the
 *   ledger with the amount written into its claim before the melt, and pays nothing more.
 *
 * Real gateway processes on both stores, the dev mint over HTTP (melts pay), the mock upstream. Prices: 2 sats a
 * call + tokens, a call costs 3,000 msats; L402_MIN_SATS 50, so the session's deposit is 50,000 msats.
 */
const ENV = {
  ...TOKEN_PRICES,
  L402_MIN_SATS: '50',
  INSTANCE_NAME: 'gw-mpp-close',
  MPP_CLOSE_TAKEOVER_MS: '1000',
  WALLET_RECOVERY_MS: '500',
};
const CALL = 3000;
const MELT_QUOTE_TTL_S = 15;
const DEPOSIT = 50_000;
const POINTS = ['lnrefund-after-hold', 'before-melt', 'after-melt'] as const;
const LEFT_AT_MINT: Record<(typeof POINTS)[number], string | undefined> = {
  'lnrefund-after-hold': undefined,
  'before-melt': 'UNPAID',
  'after-melt': 'PAID',
};

/** One close killed at `point` on `store`, its own rig (mint, upstream, store, processes) closed after. */
async function closeKilledAt(store: 'sqlite' | 'redis', point: (typeof POINTS)[number]): Promise<void> {
  const rig = await paidProcesses(
    store,
    { chunks: 2 },
    { mintQuotePayment: 'manual', meltQuoteTtlS: MELT_QUOTE_TTL_S },
  );
  try {
    let base = '';
    const client = mppSessionClient({
      url: () => `${base}/v1/chat/completions`,
      init: (body = {}) => ({
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'mock-gpt',
          messages: [{ role: 'user', content: 'Say something, please.' }],
          max_tokens: 4,
          ...body,
        }),
      }),
      payInvoice: (invoice) => rig.mint.payInvoice(invoice),
    });
    const balanceOf = async (authorization: string) => {
      const r = await fetch(`${base}/v1/wallet/balance`, { headers: { authorization } });
      expect(r.status).toBe(200);
      return ((await r.json()) as { balance: number }).balance;
    };

    const dying = await rig.spawn({ ...ENV, WALLET_TEST_CRASH_AT: point });
    base = `http://127.0.0.1:${dying.port}`;
    const s = await client.openedSession();
    expect(await balanceOf(s.bearer)).toBe(DEPOSIT - CALL);
    // The close dies at its step: no answer.
    const cut = await client.callWith(s.closeAuth).then(
      (r) => r.status,
      () => 'no answer',
    );
    expect(cut).toBe('no answer');
    expect(await dying.exited).toMatch(/SIGKILL/);
    // What the mint saw of the return invoice: no quote yet, a quote never melted, or the payment made.
    expect(rig.mint.meltQuoteState(s.ret)).toBe(LEFT_AT_MINT[point]);

    const restarted = await rig.spawn(ENV);
    base = `http://127.0.0.1:${restarted.port}`;
    // Until the dead closer's payout is decided and its claim may be taken over: 409 payout_in_progress.
    let answer: Response | undefined;
    const refusals = new Set<string>();
    await until(
      'the close answered',
      async () => {
        const r = await client.callWith(s.closeAuth);
        if (r.status === 200) {
          answer = r;
          return true;
        }
        const body = (await r.json()) as { error: { code: string; details?: { state?: string } } };
        refusals.add(
          `${r.status} ${body.error.code}${body.error.details?.state ? ` ${body.error.details.state}` : ''}`,
        );
        await new Promise((done) => setTimeout(done, 200));
        return false;
      },
      60_000,
    ).catch((err: Error) => {
      throw new Error(
        `${err.message}; answers ${[...refusals].join(', ')}; ${restarted
          .logs()
          .split('\n')
          .filter((l) => !l.includes('wallet recovery pass'))
          .join('\n')
          .slice(-3000)}`,
      );
    });
    for (const r of refusals) expect(r).toMatch(/^409 payout_in_progress/);
    const closed = (await answer!.json()) as CloseBody;
    expect(closed, restarted.logs().slice(-4000)).toMatchObject({
      status: 'closed',
      refundStatus: 'succeeded',
    });
    expect(decodeReceipt(answer!)).toMatchObject({
      refundSats: closed.refundSats,
      refundStatus: 'succeeded',
    });
    expect(rig.mint.meltQuoteState(s.ret)).toBe('PAID');

    // Paid once: one refund in the session's history, the balance debited by the amount and a fee within the
    // mint's reserve (2 sats here), and the answer's amount is what the refund paid.
    const txs = await fetch(`${base}/v1/wallet/transactions?limit=100`, {
      headers: { authorization: s.bearer },
    });
    expect(txs.status).toBe(200);
    const list = ((await txs.json()) as { transactions: Array<{ type: string; amount: number }> })
      .transactions;
    const refunds = list.filter((t) => t.type === 'refund');
    expect(refunds).toHaveLength(1);
    const after = await balanceOf(s.bearer);
    const debited = DEPOSIT - CALL - after;
    expect(-refunds[0]!.amount).toBe(debited);
    expect(debited - closed.refundSats * 1000).toBeGreaterThanOrEqual(0);
    expect(debited - closed.refundSats * 1000).toBeLessThanOrEqual(2000);
    expect(closed.refundSats).toBeGreaterThanOrEqual(40);

    // Asked again: the same answer, nothing more paid; the session takes no call.
    const again = await client.callWith(s.closeAuth);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(closed);
    expect(await balanceOf(s.bearer)).toBe(after);
    const late = await client.callWith(s.bearer);
    expect(late.status).toBe(401);
    await late.body?.cancel();
    await rig.ps.withLedger(async (ledger) => {
      expect((await ledger.checkConservation()).breaches).toEqual([]);
    });
  } finally {
    await rig.close();
  }
}

// The three points at once per store: each waits mostly on the recovery's clocks (the takeover window, the
// quote's 15 s), each on a rig of its own.
describe.each(['sqlite', 'redis'] as const)('an MPP close killed mid-payout, on %s', (store) => {
  it.concurrent.each(POINTS)(
    'killed at %s: the restarted gateway answers succeeded; paid once, debited once',
    { timeout: 150_000 },
    (point) => closeKilledAt(store, point),
  );
});
