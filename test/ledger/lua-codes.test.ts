import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { LEDGER_CODE_NAMES, LedgerCode } from '../../core/ledger/errors.js';
import { createLedger } from '../../core/ledger/index.js';
import { dropStore, testStore } from '../support/dev-mint.js';
import { admitInput, holdInput, settleInput } from './support/conformance.js';

/**
 * Every negative code a ledger script returns is a `LedgerCode` member with ONE meaning across all scripts,
 * and the Redis ledger decodes each by name (`LedgerCode.X`), never by a bare number.
 */
const dir = new URL('../../core/ledger/redis/', import.meta.url);
const scripts = readdirSync(dir).filter((f) => f.endsWith('.lua'));
const includes = readdirSync(new URL('includes/', dir)).filter((f) => f.endsWith('.lua'));
const ledgerSource = readFileSync(new URL('redis-ledger.ts', dir), 'utf8');
const byValue = new Map<number, string>(
  Object.entries(LedgerCode)
    .filter(([, v]) => typeof v === 'number')
    .map(([k, v]) => [v as number, k]),
);

function returnedCodes(text: string): number[] {
  const codes = new Set<number>();
  for (const m of text.matchAll(/return\s*\{?\s*(-\d+)/g)) codes.add(Number(m[1]));
  return [...codes];
}

describe('ledger reply codes', () => {
  it('finds the scripts', () => {
    expect(scripts.length).toBeGreaterThanOrEqual(13);
  });

  for (const file of [...scripts, ...includes.map((f) => `includes/${f}`)]) {
    it(`${file}: every returned code is a LedgerCode member`, () => {
      const text = readFileSync(new URL(file, dir), 'utf8');
      for (const code of returnedCodes(text)) {
        expect(byValue.has(code), `${file} returns ${code}`).toBe(true);
      }
    });
  }

  it('the Redis ledger decodes every code a script returns by its enum name, no bare numbers', () => {
    for (const file of scripts) {
      for (const code of returnedCodes(readFileSync(new URL(file, dir), 'utf8'))) {
        expect(ledgerSource, `${file}: LedgerCode.${byValue.get(code)}`).toContain(
          `LedgerCode.${byValue.get(code)}`,
        );
      }
    }
    expect(ledgerSource).not.toMatch(/r\[0\] === -\d|case -\d/);
  });

  it('every code has one name', () => {
    const names = Object.values(LEDGER_CODE_NAMES);
    expect(new Set(names).size).toBe(names.length);
    expect(Object.keys(LEDGER_CODE_NAMES)).toHaveLength(byValue.size);
  });
});

describe('Redis ledger decoders refuse codes their script never returns', () => {
  const conn = testStore('redis');
  afterAll(() => dropStore(conn));

  /** The real ledger whose scripts all answer `reply` (a script and its decoder out of step). */
  async function answering(reply: Array<number | string>) {
    const ledger = await createLedger(conn, {});
    (ledger as unknown as { run: () => Promise<unknown> }).run = async () => reply;
    return ledger;
  }
  const ref = { accountId: 'abcdefghij', holdId: 'withdrawal~0123456789ab~x' };
  const call = { accountId: 'abcdefghij', requestId: 'r1' };

  for (const reply of [[LedgerCode.PaymentRequired], [-99], [0]]) {
    it(`settle, release, commit and abort answer internal_error on ${JSON.stringify(reply)}, never ok`, async () => {
      const l = await answering(reply);
      const internal = { code: 'internal_error' };
      await expect(l.settle(settleInput(call, { costMsat: 1 }))).rejects.toMatchObject(internal);
      await expect(l.release(call)).rejects.toMatchObject(internal);
      await expect(l.commitWithdrawal(ref)).rejects.toMatchObject(internal);
      await expect(l.abortWithdrawal(ref)).rejects.toMatchObject(internal);
    });
  }
});

describe('input checks shared by both ledgers (core/ledger/rules.ts)', () => {
  const stores = { sqlite: testStore('sqlite'), redis: testStore('redis') };
  afterAll(async () => {
    await dropStore(stores.sqlite);
    await dropStore(stores.redis);
  });
  const apiKey = `sk-${'a'.repeat(29)}`;
  const limits = { requestsPerMinute: 1, tokensPerHour: 1, concurrent: 1 };

  it('refuse (throw, or answer for createChildKeys) the same bad input with the same message on SQLite and Redis', async () => {
    const messages: Record<string, string[]> = {};
    for (const [kind, conn] of Object.entries(stores)) {
      const l = await createLedger(conn, {});
      const refusal = async (p: Promise<unknown>) => {
        const err = (await p.then(
          (r) => r,
          (e: unknown) => e,
        )) as { code?: string; message?: string };
        return `${err.code}: ${err.message}`;
      };
      messages[kind] = [
        await refusal(
          l.admit(admitInput(apiKey, { requestId: 'r', maxMsat: 1, minMsat: 2, expiresInMs: 1, limits })),
        ),
        await refusal(l.settle(settleInput({ accountId: 'a b', requestId: 'r' }, { costMsat: 1 }))),
        await refusal(l.release({ accountId: 'a', requestId: '' })),
        await refusal(l.holdWithdrawal(holdInput(apiKey, { amountMsat: 1, holdId: 'h', expiresInMs: 0 }))),
        await refusal(l.commitWithdrawal({ accountId: 'a', holdId: '{h}' })),
        await refusal(l.abortWithdrawal({ accountId: '', holdId: 'h' })),
        await refusal(l.credit({ credential: { apiKey }, tokenHash: 'xyz', amountMsat: 1, kind: 'topup' })),
        await refusal(l.createChildKeys({ parent: { apiKey }, count: 0, feePerKeyMsat: 0 })),
      ];
      await l.close();
    }
    expect(messages.sqlite).toEqual(messages.redis);
    expect(messages.sqlite).toEqual([
      'invalid_request: minMsat must be ≤ maxMsat',
      'invalid_request: accountId must be a non-empty string of at most 200 chars without braces or spaces',
      'invalid_request: requestId must be a non-empty string of at most 200 chars without braces or spaces',
      'invalid_request: expiresInMs must be an integer ≥ 1',
      'invalid_request: holdId must be a non-empty string of at most 200 chars without braces or spaces',
      'invalid_request: accountId must be a non-empty string of at most 200 chars without braces or spaces',
      'invalid_request: tokenHash must be 16–128 hex chars',
      'invalid_request: count must be an integer from 1 to 50',
    ]);
  });
});
