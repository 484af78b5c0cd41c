import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLedger } from '../../core/ledger/index.js';
import { openStore, type StoreConnection } from '../../core/store/connection.js';
import type { BalanceLine, InvoicePayment, SolvencyReport } from '../../core/wallet/types.js';
import { type DevMint, startTestMint, testWallet } from '../support/dev-mint.js';

/**
 * The operator tools as an operator runs them (`tsx scripts/…` with the gateway's environment) against a
 * store the wallet filled from the dev mint: balance, solvency (ledger total or a given one), payout.
 */

const ROOT = new URL('../../', import.meta.url).pathname;

async function run(
  script: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', script), ...args], {
    env: { ...process.env, REDIS_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => {
    out += String(d);
  });
  child.stderr.on('data', (d) => {
    err += String(d);
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  return { code, out, err };
}

describe('operator wallet scripts', () => {
  let mint: DevMint;
  let dir: string;
  let conn: StoreConnection;
  let env: Record<string, string>;
  let received = 0;

  beforeAll(async () => {
    mint = await startTestMint({ inputFeePpk: 0 });
    dir = mkdtempSync(join(tmpdir(), 'wallet-ops-'));
    conn = openStore({ dataDir: dir, sqliteFile: 'gateway.db' });
    const wallet = await testWallet(conn, [mint.url]);
    received += (await wallet.receive(await mint.mintTokens(5000, 'sat'))).amountMsat;
    received += (await wallet.receive(await mint.mintTokens(7777, 'msat'))).amountMsat;
    env = { CASHU_MINTS: mint.url, DATA_DIR: dir };
  });

  afterAll(async () => {
    await conn.close();
    await mint.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('wallet:balance lists the proofs per mint and unit', async () => {
    const r = await run('wallet-balance.ts', ['--json'], env);
    expect(r.code).toBe(0);
    const lines = JSON.parse(r.out) as BalanceLine[];
    expect(lines.map((l) => [l.unit, l.amount])).toEqual([
      ['msat', 7777],
      ['sat', 5000],
    ]);
    const text = await run('wallet-balance.ts', [], env);
    expect(text.out).toContain(`total\t${received} msat`);
  });

  it('wallet:solvency compares unspent proofs with the user balances', async () => {
    const ok = await run('solvency.ts', ['--json', '--user-balances-msat', String(received)], env);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out) as SolvencyReport).toMatchObject({
      proofsMsat: received,
      solvent: true,
      spentMsat: 0,
    });
    const short = await run('solvency.ts', ['--user-balances-msat', String(received + 1)], env);
    expect(short.code).toBe(3);
    expect(short.out).toContain('NOT SOLVENT');
    // Without the flag the total comes from the ledger in the same store (no accounts here: 0).
    const ledger = await run('solvency.ts', ['--json'], env);
    expect(ledger.code).toBe(0);
    expect((JSON.parse(ledger.out) as SolvencyReport).userBalancesMsat).toBe(0);
  });

  it('wallet:payout pays a Lightning invoice from operator funds', async () => {
    const r = await run('payout.ts', [mint.invoice(1_000_000)], env);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out) as InvoicePayment).toMatchObject({
      amountMsat: 1_000_000,
      feeMsat: 0,
      unit: 'sat',
    });
    const after = JSON.parse((await run('wallet-balance.ts', ['--json'], env)).out) as BalanceLine[];
    expect(after.find((l) => l.unit === 'sat')?.amount).toBe(4000);
    const bad = await run('payout.ts', [], env);
    expect(bad.code).toBe(2);
  });

  it('wallet:payout cannot pay past the operator surplus (proofs held − user balances)', async () => {
    // Left after the payout above: 4,000 sats + 7,777 msats = 4,007,777 msats of proofs. A user owed
    // 3,500,000 msats leaves a surplus of 507,777 msats: a 600,000-msat invoice is refused, nothing paid.
    const ledger = await createLedger(conn);
    const owed = await ledger.createKeyFromDeposit({ tokenHash: 'f'.repeat(64), amountMsat: 3_500_000 });
    expect(owed.ok).toBe(true);
    const r = await run('payout.ts', [mint.invoice(600_000)], env);
    expect(r.code).toBe(1);
    expect(r.err).toContain('payout_exceeds_surplus');
    expect(r.err).toContain('507777');
    const after = JSON.parse((await run('wallet-balance.ts', ['--json'], env)).out) as BalanceLine[];
    expect(after.find((l) => l.unit === 'sat')?.amount).toBe(4000);
    // Within the surplus it pays.
    const ok = await run('payout.ts', [mint.invoice(500_000)], env);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out) as InvoicePayment).toMatchObject({ amountMsat: 500_000, feeMsat: 0 });
  }, 90_000);
});
