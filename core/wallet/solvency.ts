import { CheckStateEnum } from '@cashu/cashu-ts';
import type { WalletContext } from './context.js';
import { mapMintError } from './mint-errors.js';
import { toMsat } from './token-codec.js';
import type { BalanceLine, CashuUnit, SolvencyReport } from './types.js';

/** Balances (store only) and the solvency check (NUT-07 states at each mint). Read-only. */

const BATCH = 500;

export async function balances(ctx: WalletContext): Promise<BalanceLine[]> {
  const lines = new Map<string, BalanceLine>();
  for (const p of await ctx.store.listProofs()) {
    const key = `${p.mint}|${p.unit}`;
    let l = lines.get(key);
    if (!l) {
      l = { mint: p.mint, unit: p.unit, amount: 0, amountMsat: 0, reserved: 0, proofs: 0 };
      lines.set(key, l);
    }
    l.amount += p.amount;
    l.amountMsat += toMsat(p.amount, p.unit);
    if (p.reservedBy) l.reserved += p.amount;
    l.proofs++;
  }
  return [...lines.values()].sort((a, b) => (a.mint + a.unit).localeCompare(b.mint + b.unit));
}

export async function checkSolvency(
  ctx: WalletContext,
  totalUserBalancesMsat: () => Promise<number>,
): Promise<SolvencyReport> {
  const proofs = await ctx.store.listProofs();
  const pools = new Map<string, { mint: string; unit: CashuUnit; items: typeof proofs }>();
  for (const p of proofs) {
    const key = `${p.mint}|${p.unit}`;
    const pool = pools.get(key) ?? { mint: p.mint, unit: p.unit, items: [] };
    pool.items.push(p);
    pools.set(key, pool);
  }
  const report: SolvencyReport = {
    proofsMsat: 0,
    pendingMsat: 0,
    spentMsat: 0,
    userBalancesMsat: 0,
    solvent: false,
    perMint: [],
  };
  for (const pool of pools.values()) {
    const client = await ctx.clients.get(pool.mint, pool.unit);
    const line = { mint: pool.mint, unit: pool.unit, unspentMsat: 0, pendingMsat: 0, spentMsat: 0 };
    for (let i = 0; i < pool.items.length; i += BATCH) {
      const batch = pool.items.slice(i, i + BATCH);
      let states: Map<string, string>;
      try {
        const res = await client.mint.check({ Ys: batch.map((p) => p.y) });
        states = new Map(res.states.map((s) => [s.Y, s.state]));
      } catch (err) {
        throw mapMintError(err);
      }
      for (const p of batch) {
        const msat = toMsat(p.amount, p.unit);
        const st = states.get(p.y) ?? CheckStateEnum.UNSPENT;
        if (st === CheckStateEnum.SPENT) line.spentMsat += msat;
        else if (st === CheckStateEnum.PENDING) line.pendingMsat += msat;
        else line.unspentMsat += msat;
      }
    }
    report.perMint.push(line);
    report.proofsMsat += line.unspentMsat;
    report.pendingMsat += line.pendingMsat;
    report.spentMsat += line.spentMsat;
  }
  report.userBalancesMsat = await totalUserBalancesMsat();
  report.solvent = report.proofsMsat >= report.userBalancesMsat;
  if (report.spentMsat > 0) {
    ctx.log.error({ spentMsat: report.spentMsat }, 'wallet holds proofs the mint reports spent');
  }
  return report;
}
