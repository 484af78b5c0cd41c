import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isGatewayError } from '../../core/errors.js';
import { createLedger } from '../../core/ledger/index.js';
import { openStore } from '../../core/store/connection.js';
import { freePort } from '../support/global-setup.js';
import { until } from '../support/until.js';
import { admitInput, settleInput } from './support/conformance.js';
import { randomTokenHash } from './support/harness.js';

/**
 * Redis killed (SIGKILL) in the middle of admit+settle traffic: every failing call rejects with the typed
 * `store_unavailable` error, and after a restart from the append-only file (fsync always) the store holds
 * no partial change: the audit passes, retried settles apply exactly once, unknown admits expire.
 */
const dir = mkdtempSync(join(tmpdir(), 'gw-crash-'));
let proc: ChildProcess | undefined;

function startRedis(port: number): ChildProcess {
  return spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      '--save',
      '',
    ],
    { stdio: 'ignore' },
  );
}

afterAll(() => {
  proc?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('redis crash mid-run', () => {
  it('typed errors while down, no partial state after restart', async () => {
    const port = await freePort();
    proc = startRedis(port);
    const conn = openStore({ redisUrl: `redis://127.0.0.1:${port}`, redisPrefix: 'crash' });
    if (conn.kind !== 'redis') throw new Error('expected redis');
    const ledger = await createLedger(conn, { warn: () => {} });
    const deposit = 10_000_000;
    const d = await ledger.createKeyFromDeposit({ tokenHash: randomTokenHash(), amountMsat: deposit });
    if (!d.ok) throw new Error(d.code);
    const limits = { requestsPerMinute: 1_000_000, tokensPerHour: 1_000_000_000, concurrent: 1_000_000 };

    const confirmed: number[] = [];
    const unsettled: Array<{ requestId: string; cost: number }> = [];
    const errors: unknown[] = [];
    let killed = false;
    let n = 0;
    const loop = async (w: number) => {
      for (let i = 0; i < 2000; i++) {
        const requestId = `w${w}-${i}`;
        const cost = 1 + ((w * 7919 + i * 104_729) % 500);
        try {
          const a = await ledger.admit(
            admitInput(d.apiKey, { requestId, maxMsat: 1000, minMsat: 1000, expiresInMs: 60_000, limits }),
          );
          if (!a.ok) throw new Error(a.code);
          n++;
          try {
            const s = await ledger.settle(
              settleInput(a, { requestId, costMsat: cost, promptTokens: 1, completionTokens: 1 }),
            );
            if (!s.ok) throw new Error(s.code);
            confirmed.push(s.chargedMsat);
          } catch (err) {
            unsettled.push({ requestId, cost });
            throw err;
          }
        } catch (err) {
          errors.push(err);
          return;
        }
      }
    };
    const loops = Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map(loop));
    await until('200 calls answered', () => n >= 200, 20_000, 50);
    proc.kill('SIGKILL');
    killed = true;
    await loops;
    expect(killed).toBe(true);
    expect(errors.length).toBe(8);
    for (const e of errors) expect(isGatewayError(e) && e.code).toBe('store_unavailable');
    // While down, calls fail fast with the same typed error (never a free call).
    await expect(
      ledger.admit(
        admitInput(d.apiKey, { requestId: 'down', maxMsat: 1, minMsat: 1, expiresInMs: 1000, limits }),
      ),
    ).rejects.toMatchObject({ code: 'store_unavailable' });

    proc = startRedis(port);
    await until('the client ready again', () => conn.redis.status === 'ready', 20_000, 50);
    const before = await ledger.checkConservation();
    expect(before.breaches).toEqual([]);
    const confirmedSum = confirmed.reduce((s, c) => s + c, 0);
    expect(before.totals.spentMsat).toBeGreaterThanOrEqual(confirmedSum);

    // Retried settles apply once (or replay if the lost reply had applied).
    let retried = 0;
    for (const u of unsettled) {
      const s = await ledger.settle(
        settleInput(
          { accountId: d.key.accountId, requestId: u.requestId },
          { costMsat: u.cost, promptTokens: 1, completionTokens: 1 },
        ),
      );
      expect(s.ok).toBe(true);
      if (s.ok) retried += s.chargedMsat;
    }
    // Admits whose reply was lost expire with their lease.
    await ledger.sweepExpired(Date.now() + 120_000);
    const after = await ledger.checkConservation();
    expect(after.breaches).toEqual([]);
    expect(after.totals).toMatchObject({
      reservedMsat: 0,
      spentMsat: confirmedSum + retried,
      balanceMsat: deposit - confirmedSum - retried,
    });
    await conn.close();
  }, 60_000);
});
