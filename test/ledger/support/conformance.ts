import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type {
  Admission,
  AdmitInput,
  Credential,
  CreditInput,
  HoldInput,
  Ledger,
  LedgerOptions,
  RateLimits,
  SettleInput,
} from '../../../core/ledger/types.js';
import { callRecord } from './audit-records.js';
import { creditLeaseSuite } from './credit-leases.js';
import { randomTokenHash, type StoreFactory, type StoreHarness } from './harness.js';
import { leaseSuite } from './leases.js';
import { propertySuite } from './property.js';
import { raceSuite } from './races.js';

/** `count` child keys of `apiKey` with a daily balance limit, made at T0 (throws when refused). */
export async function dailyChildren(
  ledger: Ledger,
  apiKey: string,
  keys: { count: number; feePerKeyMsat: number; balanceLimitMsat: number },
  extra: { validityDateMs?: number } = {},
) {
  const r = await ledger.createChildKeys({
    parent: { apiKey },
    ...keys,
    balanceLimitReset: 'daily',
    ...extra,
    now: T0,
  });
  if (!r.ok) throw new Error(r.code);
  return r;
}

/**
 * The one conformance suite, run against every store (sqlite.test.ts, redis.test.ts,
 * redis-cluster.test.ts). It, not review, keeps the stores equal.
 */
export const T0 = Date.UTC(2030, 0, 7, 12, 0, 0); // a Monday, noon UTC
export const BIG: RateLimits = {
  requestsPerMinute: 1_000_000,
  tokensPerHour: 1_000_000_000,
  concurrent: 1_000_000,
};

export interface Ctx {
  open(opts?: LedgerOptions): Promise<StoreHarness>;
}

export async function fund(
  ledger: Ledger,
  amountMsat: number,
  now = T0,
): Promise<{ apiKey: string; accountId: string }> {
  const r = await ledger.createKeyFromDeposit({ tokenHash: randomTokenHash(), amountMsat, now });
  if (!r.ok) throw new Error(`deposit refused: ${r.code}`);
  return { apiKey: r.apiKey, accountId: r.key.accountId };
}

let seq = 0;
export function rid(): string {
  seq += 1;
  return `req-${process.pid}-${seq}-${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * An admit as the suites write one: the key (or another credential), a fresh request id, model 'm' and limits
 * that never bind; `over` names the amounts, the lease and whatever else a case changes.
 */
export function admitInput(
  credential: string | Credential,
  over: Pick<AdmitInput, 'maxMsat' | 'minMsat' | 'expiresInMs'> & Partial<AdmitInput>,
): AdmitInput {
  return {
    credential: typeof credential === 'string' ? { apiKey: credential } : credential,
    requestId: rid(),
    model: 'm',
    limits: BIG,
    ...over,
  };
}

/** A settle of an admitted call as the suites write one: model 'm', description 'd', no tokens, not estimated. */
export function settleInput(
  call: { accountId: string; requestId: string },
  over: Pick<SettleInput, 'costMsat'> & Partial<SettleInput>,
): SettleInput {
  return {
    accountId: call.accountId,
    requestId: call.requestId,
    promptTokens: 0,
    completionTokens: 0,
    model: 'm',
    description: 'd',
    estimated: false,
    ...over,
  };
}

/** A withdrawal hold on a key, as the suites write one (kind 'withdrawal' unless `over` names another). */
export function holdInput(
  apiKey: string,
  over: Pick<HoldInput, 'amountMsat' | 'holdId' | 'expiresInMs'> & Partial<HoldInput>,
): HoldInput {
  return { credential: { apiKey }, kind: 'withdrawal', ...over };
}

/** The first deposit of a token-hash identity (`bearer`): the credit creates it. */
function bearerDeposit(bearer: string, amountMsat: number, now?: number): CreditInput {
  return { credential: { tokenHash: bearer }, tokenHash: bearer, amountMsat, kind: 'deposit', now };
}

export async function admitOk(
  ledger: Ledger,
  apiKey: string,
  max: number,
  min = 0,
  now = T0,
): Promise<Admission> {
  const r = await ledger.admit(admitInput(apiKey, { maxMsat: max, minMsat: min, expiresInMs: 60_000, now }));
  if (!r.ok) throw new Error(`admit refused: ${r.code}`);
  return r;
}

export function conformance(factory: StoreFactory): void {
  const open: StoreHarness[] = [];
  const ctx: Ctx = {
    async open(opts) {
      const h = await factory.create(opts);
      open.push(h);
      return h;
    },
  };
  afterEach(async () => {
    for (const h of open.splice(0)) {
      const report = await h.ledger.checkConservation();
      await h.close();
      // Every test leaves a store whose audit passes (tests that tamper repair first).
      expect(report.breaches).toEqual([]);
    }
  });
  afterAll(() => factory.teardown());

  describe(`${factory.name}: keys and credits`, () => {
    it('creates a key from a deposit, and a retry with the same token returns the same key without a second credit', async () => {
      const { ledger } = await ctx.open();
      const tokenHash = randomTokenHash();
      const a = await ledger.createKeyFromDeposit({ tokenHash, amountMsat: 5000, now: T0, name: 'mine' });
      expect(a.ok).toBe(true);
      if (!a.ok) return;
      expect(a.apiKey).toMatch(/^sk-[0-9A-Za-z]{29}$/);
      expect(a.apiKey).toHaveLength(32);
      expect(a.replay).toBe(false);
      expect(a.balanceMsat).toBe(5000);
      expect(a.key.name).toBe('mine');
      const b = await ledger.createKeyFromDeposit({ tokenHash, amountMsat: 5000, now: T0 });
      expect(b).toMatchObject({
        ok: true,
        apiKey: a.apiKey,
        replay: true,
        balanceMsat: 5000,
        transactionId: a.transactionId,
      });
      const info = await ledger.getKeyInfo({ apiKey: a.apiKey });
      expect(info?.account).toMatchObject({ balanceMsat: 5000, depositedMsat: 5000, spentMsat: 0 });
      expect(info?.key.displayKey).not.toContain(a.apiKey.slice(9, 28));
    });

    it('credits a token at most once even raced 20 times, and refuses it for another account', async () => {
      const { ledger } = await ctx.open();
      const k = await fund(ledger, 1000);
      const tokenHash = randomTokenHash();
      const results = await Promise.all(
        Array.from({ length: 20 }, () =>
          ledger.credit({
            credential: { apiKey: k.apiKey },
            tokenHash,
            amountMsat: 700,
            kind: 'topup',
            now: T0,
          }),
        ),
      );
      expect(results.every((r) => r.ok)).toBe(true);
      expect(results.filter((r) => r.ok && !r.replay)).toHaveLength(1);
      const other = await fund(ledger, 1000);
      expect(
        await ledger.credit({
          credential: { apiKey: other.apiKey },
          tokenHash,
          amountMsat: 700,
          kind: 'topup',
        }),
      ).toEqual({
        ok: false,
        code: 'token_credited_elsewhere',
      });
      expect((await ledger.getKeyInfo({ apiKey: k.apiKey }))?.account.balanceMsat).toBe(1700);
      expect(await ledger.totalUserBalancesMsat()).toBe(2700);
    });

    it('the same deposit token raced 20 times creates one key and credits once', async () => {
      const { ledger } = await ctx.open();
      const tokenHash = randomTokenHash();
      const results = await Promise.all(
        Array.from({ length: 20 }, () => ledger.createKeyFromDeposit({ tokenHash, amountMsat: 900 })),
      );
      const keys = new Set(results.map((r) => (r.ok ? r.apiKey : r.code)));
      expect(keys.size).toBe(1);
      expect(results.filter((r) => r.ok && !r.replay)).toHaveLength(1);
      expect(await ledger.totalUserBalancesMsat()).toBe(900);
    });

    it('a token-hash identity is created by its first credit and can be admitted and settled', async () => {
      const { ledger } = await ctx.open();
      const bearer = randomTokenHash();
      const c = await ledger.credit(bearerDeposit(bearer, 2000, T0));
      expect(c).toMatchObject({ ok: true, balanceMsat: 2000, replay: false });
      const a = await ledger.admit(
        admitInput({ tokenHash: bearer }, { maxMsat: 500, minMsat: 100, expiresInMs: 1000, now: T0 }),
      );
      expect(a).toMatchObject({ ok: true, reservedMsat: 500, availableMsat: 1500 });
      if (!a.ok) return;
      const s = await ledger.settle(
        settleInput(a, { costMsat: 300, promptTokens: 1, completionTokens: 2, description: 'x', now: T0 }),
      );
      expect(s).toMatchObject({ ok: true, chargedMsat: 300, balanceMsat: 1700 });
      expect(
        await ledger.admit(
          admitInput({ tokenHash: randomTokenHash() }, { maxMsat: 1, minMsat: 1, expiresInMs: 1000 }),
        ),
      ).toEqual({ ok: false, code: 'invalid_api_key' });
    });

    it('refuses unknown, malformed and deleted keys, and credits to unknown keys', async () => {
      const { ledger } = await ctx.open();
      const k = await fund(ledger, 1000);
      // The real key with its last character changed (to one it does not already end with).
      const near = `${k.apiKey.slice(0, -1)}${k.apiKey.endsWith('x') ? 'y' : 'x'}`;
      const bad = [`sk-${'a'.repeat(29)}`, 'sk-short', 'nope', near];
      for (const apiKey of bad) {
        expect(await ledger.admit(admitInput(apiKey, { maxMsat: 1, minMsat: 0, expiresInMs: 1000 }))).toEqual(
          {
            ok: false,
            code: 'invalid_api_key',
          },
        );
      }
      expect(
        await ledger.credit({
          credential: { apiKey: bad[0]! },
          tokenHash: randomTokenHash(),
          amountMsat: 5,
          kind: 'topup',
        }),
      ).toEqual({ ok: false, code: 'invalid_api_key' });
      expect(await ledger.deleteKey({ credential: { apiKey: k.apiKey } })).toMatchObject({ ok: true });
      expect(await ledger.admit(admitInput(k.apiKey, { maxMsat: 1, minMsat: 0, expiresInMs: 1000 }))).toEqual(
        {
          ok: false,
          code: 'invalid_api_key',
        },
      );
      expect(await ledger.getKeyInfo({ apiKey: k.apiKey })).toBeNull();
    });

    it('finds a key by its public key id (deposit, child, token identity, deleted), also without the index', async () => {
      const h = await ctx.open();
      const { ledger } = h;
      const k = await fund(ledger, 5000);
      const children = await ledger.createChildKeys({
        parent: { apiKey: k.apiKey },
        count: 2,
        feePerKeyMsat: 0,
      });
      if (!children.ok) throw new Error(children.code);
      const bearer = randomTokenHash();
      const c = await ledger.credit(bearerDeposit(bearer, 10));
      expect(c.ok).toBe(true);
      const parent = await ledger.getKeyInfo({ apiKey: k.apiKey });
      const token = await ledger.getKeyInfo({ tokenHash: bearer });
      if (!parent || !token) throw new Error('keys not found');
      const targets = [parent.key, ...children.keys, token.key];
      for (const pass of ['indexed', 'without index']) {
        if (pass === 'without index') await h.forgetIndexes();
        for (const key of targets) {
          const ref = await ledger.findKeyById(key.keyId);
          expect(ref, `${pass}: ${key.keyId}`).not.toBeNull();
          const info = await ledger.getKeyInfo(ref!);
          expect(info?.key.keyId, pass).toBe(key.keyId);
          expect(info?.account.accountId).toBe(key.accountId);
          expect(await ledger.listTransactions(ref!)).not.toBeNull();
        }
      }
      // The parent's read through its id shows the same children and balance as through the key itself.
      const viaId = await ledger.getKeyInfo((await ledger.findKeyById(parent.key.keyId))!);
      expect(viaId?.children.map((x) => x.key.keyId).sort()).toEqual(
        children.keys.map((x) => x.keyId).sort(),
      );
      expect(viaId?.account.balanceMsat).toBe(parent.account.balanceMsat);
      // Unknown and malformed ids; a deleted key is found but reads as gone.
      expect(await ledger.findKeyById('0123456789abcdef')).toBeNull();
      for (const bad of [
        '',
        'xyz',
        parent.key.keyId.toUpperCase(),
        `${parent.key.keyId}0`,
        '*',
        '0123456789abcde*',
      ]) {
        expect(await ledger.findKeyById(bad), bad).toBeNull();
      }
      expect(
        (await ledger.deleteKey({ credential: { apiKey: k.apiKey }, childKeyId: children.keys[0]!.keyId }))
          .ok,
      ).toBe(true);
      const gone = await ledger.findKeyById(children.keys[0]!.keyId);
      expect(gone).not.toBeNull();
      expect(await ledger.getKeyInfo(gone!)).toBeNull();
      // A key reference is read-only and checked: a malformed one reads nothing.
      expect(
        await ledger.getKeyInfo({ keyRef: { accountId: parent.key.accountId, keyHash: 'nope' } }),
      ).toBeNull();
    });

    it('updates allowed IPs, refund address and name', async () => {
      const { ledger } = await ctx.open();
      const k = await fund(ledger, 1000);
      const r = await ledger.updateKey(
        { credential: { apiKey: k.apiKey } },
        { allowedIps: ['10.0.0.0/8', '::1'], refundAddress: 'me@ln.example', name: 'n1' },
      );
      expect(r).toMatchObject({
        ok: true,
        key: { allowedIps: ['10.0.0.0/8', '::1'], refundAddress: 'me@ln.example', name: 'n1' },
      });
      const a = await admitOk(ledger, k.apiKey, 10);
      expect(a.key.allowedIps).toEqual(['10.0.0.0/8', '::1']);
      expect(
        await ledger.updateKey({ credential: { apiKey: k.apiKey } }, { allowedIps: null, name: null }),
      ).toMatchObject({ ok: true, key: { allowedIps: null, name: null, refundAddress: 'me@ln.example' } });
      await ledger.release({ accountId: a.accountId, requestId: a.requestId });
    });

    it('the audit reports a conservation breach', async () => {
      const h = await ctx.open();
      const k = await fund(h.ledger, 1000);
      await h.tamper(k.accountId, 5);
      const r = await h.ledger.checkConservation();
      expect(r.ok).toBe(false);
      expect(r.breaches.map((b) => b.rule)).toContain('conservation');
      await h.tamper(k.accountId, -5);
      expect((await h.ledger.checkConservation()).ok).toBe(true);
    });
  });

  describe(`${factory.name}: admit, settle, release`, () => {
    it('reserves min(max, available) and refuses below min with balance, required and shortfall', async () => {
      const { ledger } = await ctx.open();
      const k = await fund(ledger, 1000);
      const a = await admitOk(ledger, k.apiKey, 700, 100);
      expect(a).toMatchObject({
        reservedMsat: 700,
        availableMsat: 300,
        rateLimit: {
          type: 'requests_per_minute',
          limit: BIG.requestsPerMinute,
          remaining: BIG.requestsPerMinute - 1,
        },
      });
      const b = await admitOk(ledger, k.apiKey, 700, 100);
      expect(b).toMatchObject({ reservedMsat: 300, availableMsat: 0 });
      const c = await ledger.admit(
        admitInput(k.apiKey, { maxMsat: 700, minMsat: 100, expiresInMs: 1000, now: T0 }),
      );
      expect(c).toEqual({ ok: false, code: 'payment_required', balance: 0, required: 100, shortfall: 100 });
      const dup = await ledger.admit(
        admitInput(k.apiKey, { requestId: a.requestId, maxMsat: 0, minMsat: 0, expiresInMs: 1000, now: T0 }),
      );
      expect(dup).toEqual({ ok: false, code: 'duplicate_request' });
      await ledger.release({ accountId: a.accountId, requestId: a.requestId });
      await ledger.release({ accountId: b.accountId, requestId: b.requestId });
    });

    it('countRequest shares the requests/min window with admit, reserves nothing, resets each minute', async () => {
      const { ledger } = await ctx.open();
      const k = await fund(ledger, 5000);
      const limits = { ...BIG, requestsPerMinute: 3 };
      const count = (now = T0) =>
        ledger.countRequest({ credential: { apiKey: k.apiKey }, requestsPerMinute: 3, now });
      expect(await count()).toEqual({
        ok: true,
        rateLimit: { type: 'requests_per_minute', limit: 3, remaining: 2, resetUnix: T0 / 1000 + 60 },
      });
      const a = await ledger.admit(
        admitInput(k.apiKey, { maxMsat: 100, minMsat: 0, expiresInMs: 60_000, limits, now: T0 }),
      );
      expect(a).toMatchObject({ ok: true, rateLimit: { remaining: 1 } });
      expect(await count()).toMatchObject({ ok: true, rateLimit: { remaining: 0 } });
      const refused = {
        ok: false,
        code: 'rate_limit_exceeded',
        rateLimit: { type: 'requests_per_minute', limit: 3, remaining: 0, resetUnix: T0 / 1000 + 60 },
      };
      expect(await count()).toEqual(refused);
      const b = await ledger.admit(
        admitInput(k.apiKey, { maxMsat: 100, minMsat: 0, expiresInMs: 60_000, limits, now: T0 }),
      );
      expect(b).toEqual(refused);
      // Nothing was reserved by counting: only the admitted call's 100 msat is held.
      const info = await ledger.getKeyInfo({ apiKey: k.apiKey }, T0);
      expect(info?.availableMsat).toBe(4900);
      expect(await count(T0 + 60_000)).toMatchObject({
        ok: true,
        rateLimit: { remaining: 2, resetUnix: T0 / 1000 + 120 },
      });
      expect(
        await ledger.countRequest({
          credential: {
            apiKey:
              `${k.apiKey.slice(0, -1)}0` === k.apiKey
                ? `${k.apiKey.slice(0, -1)}1`
                : `${k.apiKey.slice(0, -1)}0`,
          },
          requestsPerMinute: 3,
          now: T0,
        }),
      ).toEqual({ ok: false, code: 'invalid_api_key' });
      if (a.ok) await ledger.release({ accountId: a.accountId, requestId: a.requestId });
    });

    it('settles once: charges the cost, releases the rest, writes tx and audit record; a second settle replays', async () => {
      const h = await ctx.open();
      const { ledger } = h;
      const k = await fund(ledger, 10_000);
      const a = await admitOk(ledger, k.apiKey, 4000, 100);
      const input = {
        accountId: a.accountId,
        requestId: a.requestId,
        costMsat: 1234,
        promptTokens: 10,
        completionTokens: 20,
        model: 'gpt-x',
        description: 'gpt-x: 10 prompt + 20 completion tokens',
        estimated: false,
        auditRecord: callRecord(k.apiKey, a.requestId, T0 + 5, { userAgent: 'ua/1' }),
        now: T0 + 5,
      };
      const s1 = await ledger.settle(input);
      expect(s1).toMatchObject({
        ok: true,
        status: 'settled',
        replay: false,
        chargedMsat: 1234,
        releasedMsat: 2766,
        overrunMsat: 0,
        balanceMsat: 8766,
      });
      const s2 = await ledger.settle({ ...input, costMsat: 9999 });
      expect(s2).toEqual({ ...s1, replay: true });
      expect(await ledger.release({ accountId: a.accountId, requestId: a.requestId })).toEqual({
        ok: false,
        code: 'already_settled',
      });
      const info = await ledger.getKeyInfo({ apiKey: k.apiKey });
      expect(info).toMatchObject({
        availableMsat: 8766,
        account: { balanceMsat: 8766, reservedMsat: 0, spentMsat: 1234, requests: 1 },
        usage: { totalRequests: 1, totalSpentMsat: 1234, reservedMsat: 0 },
      });
      const txs = await ledger.listTransactions({ apiKey: k.apiKey });
      expect(txs?.total).toBe(2);
      expect(txs?.transactions[0]).toMatchObject({
        type: 'usage',
        amountMsat: -1234,
        balanceAfterMsat: 8766,
        model: 'gpt-x',
        estimated: false,
        description: input.description,
      });
      expect(txs?.transactions[1]).toMatchObject({
        type: 'deposit',
        amountMsat: 10_000,
        balanceAfterMsat: 10_000,
      });
      // The audit log's record, written by the settle step with what it charged (once: the replay wrote none).
      const log = await h.auditLog().list({ account: a.accountId, limit: 10 });
      expect(log.data).toEqual([
        {
          id: expect.any(String),
          timestamp: new Date(T0 + 5).toISOString(),
          request_id: a.requestId,
          api_key_id: a.key.keyId,
          endpoint: '/v1/chat/completions',
          method: 'POST',
          ip_address: '10.0.0.1',
          user_agent: 'ua/1',
          cost_msats: 1234,
          cost_sats: 1,
          response_status: 200,
          kind: 'key',
        },
      ]);
    });

    it('charges beyond the reservation only from what is available, reporting the overrun', async () => {
      const { ledger } = await ctx.open();
      const k = await fund(ledger, 1000);
      const a = await admitOk(ledger, k.apiKey, 200, 0);
      const b = await admitOk(ledger, k.apiKey, 300, 0);
      const s = await ledger.settle(settleInput(a, { costMsat: 5000, estimated: true, now: T0 }));
      // 200 reserved + 500 free (300 still held by b) = 700.
      expect(s).toMatchObject({
        ok: true,
        chargedMsat: 700,
        overrunMsat: 4300,
        releasedMsat: 0,
        balanceMsat: 300,
      });
      const r = await ledger.release({ accountId: b.accountId, requestId: b.requestId });
      expect(r).toEqual({ ok: true, status: 'released', replay: false, releasedMsat: 300 });
      expect(await ledger.release({ accountId: b.accountId, requestId: b.requestId })).toEqual({
        ok: true,
        status: 'released',
        replay: true,
        releasedMsat: 300,
      });
      expect(await ledger.settle(settleInput(b, { costMsat: 1 }))).toEqual({
        ok: false,
        code: 'already_released',
      });
      expect(await ledger.settle(settleInput(b, { requestId: 'nope', costMsat: 1 }))).toEqual({
        ok: false,
        code: 'unknown_reservation',
      });
    });

    it('an expired lease is released by the next admit and by the sweep; a late settle charges what is available', async () => {
      const { ledger } = await ctx.open();
      const k = await fund(ledger, 1000);
      const lease = async (now: number) => {
        const r = await ledger.admit(
          admitInput(k.apiKey, { maxMsat: 1000, minMsat: 1000, expiresInMs: 1000, now }),
        );
        if (!r.ok) throw new Error(r.code);
        return r;
      };
      const a = await lease(T0);
      expect(
        (
          await ledger.admit(
            admitInput(k.apiKey, { maxMsat: 1000, minMsat: 1000, expiresInMs: 1000, now: T0 + 999 }),
          )
        ).ok,
      ).toBe(false);
      const b = await lease(T0 + 1000); // a's lease ran out: released inside this admit
      expect(await ledger.sweepExpired(T0 + 1500)).toBe(0);
      expect(await ledger.sweepExpired(T0 + 2000)).toBe(1);
      expect((await ledger.getKeyInfo({ apiKey: k.apiKey }, T0 + 2000))?.account.reservedMsat).toBe(0);
      const late = await ledger.settle(
        settleInput(a, { costMsat: 400, description: 'late', now: T0 + 3000 }),
      );
      expect(late).toMatchObject({ ok: true, chargedMsat: 400, releasedMsat: 0, balanceMsat: 600 });
      expect(
        await ledger.release({ accountId: b.accountId, requestId: b.requestId, now: T0 + 3000 }),
      ).toMatchObject({ ok: true, replay: true });
      expect(await ledger.settle(settleInput(b, { costMsat: 1 }))).toEqual({
        ok: false,
        code: 'already_released',
      });
    });

    it('refuses expired keys with expired_at and models a key may not use', async () => {
      const { ledger } = await ctx.open();
      const r = await ledger.createKeyFromDeposit({
        tokenHash: randomTokenHash(),
        amountMsat: 1000,
        expiresAtMs: T0 + 10,
        now: T0,
      });
      if (!r.ok) throw new Error(r.code);
      const at = (now: number, model = 'm') =>
        ledger.admit(admitInput(r.apiKey, { model, maxMsat: 1, minMsat: 0, expiresInMs: 1000, now }));
      expect((await at(T0 + 9)).ok).toBe(true);
      expect(await at(T0 + 10)).toEqual({ ok: false, code: 'key_expired', expiredAtMs: T0 + 10 });
      const { ledger: l2 } = { ledger };
      const parent = await fund(l2, 5000);
      const ch = await l2.createChildKeys({
        parent: { apiKey: parent.apiKey },
        count: 1,
        feePerKeyMsat: 0,
        allowedModels: ['good'],
        now: T0,
      });
      if (!ch.ok) throw new Error(ch.code);
      const child = ch.apiKeys[0]!;
      const adm = (model: string) =>
        l2.admit(admitInput(child, { model, maxMsat: 1, minMsat: 0, expiresInMs: 1000, now: T0 }));
      expect(await adm('bad')).toEqual({ ok: false, code: 'model_not_allowed', model: 'bad' });
      const ok = await adm('good');
      expect(ok.ok).toBe(true);
      if (ok.ok) await l2.release({ accountId: ok.accountId, requestId: ok.requestId });
      // release the first key's admitted reservation too
      await l2.sweepExpired(T0 + 10_000);
    });

    it('enforces tokens per hour counted at settle, and its reset', async () => {
      const { ledger } = await ctx.open();
      const k = await fund(ledger, 100_000);
      const limits = { ...BIG, tokensPerHour: 100 };
      const a = await ledger.admit(
        admitInput(k.apiKey, { maxMsat: 10, minMsat: 0, expiresInMs: 1000, limits, now: T0 }),
      );
      if (!a.ok) throw new Error(a.code);
      await ledger.settle(settleInput(a, { costMsat: 10, promptTokens: 60, completionTokens: 40, now: T0 }));
      const b = await ledger.admit(
        admitInput(k.apiKey, { maxMsat: 10, minMsat: 0, expiresInMs: 1000, limits, now: T0 + 1 }),
      );
      const hour = Math.floor(T0 / 3_600_000);
      expect(b).toEqual({
        ok: false,
        code: 'rate_limit_exceeded',
        rateLimit: { type: 'tokens_per_hour', limit: 100, remaining: 0, resetUnix: (hour + 1) * 3600 },
      });
      const c = await ledger.admit(
        admitInput(k.apiKey, {
          maxMsat: 10,
          minMsat: 0,
          expiresInMs: 1000,
          limits,
          now: (hour + 1) * 3_600_000,
        }),
      );
      expect(c.ok).toBe(true);
      if (c.ok) await ledger.release({ accountId: c.accountId, requestId: c.requestId });
    });
  });

  describe(`${factory.name}: orphans of dead processes`, () => {
    it('releases what a silent process held (calls and holds) exactly once; a live process keeps its own', async () => {
      const { ledger } = await ctx.open();
      const dead = 'deadbeef0001';
      const live = 'a11ce0000002';
      const k = await fund(ledger, 10_000);
      const admitAs = async (owner: string, n: number) => {
        const r = await ledger.admit(
          admitInput(k.apiKey, {
            requestId: `r~${owner}~${n}-${rid()}`,
            maxMsat: 1_000,
            minMsat: 0,
            expiresInMs: 3_600_000,
            now: T0,
          }),
        );
        if (!r.ok) throw new Error(r.code);
      };
      await admitAs(dead, 1);
      await admitAs(dead, 2);
      await admitAs(live, 3);
      const hold = await ledger.holdWithdrawal(
        holdInput(k.apiKey, {
          amountMsat: 2_000,
          holdId: `withdrawal~${dead}~h`,
          expiresInMs: 3_600_000,
          now: T0,
        }),
      );
      expect(hold.ok).toBe(true);
      expect((await ledger.getKeyInfo({ apiKey: k.apiKey }, T0))!.availableMsat).toBe(5_000);
      await ledger.heartbeat(dead, T0);
      await ledger.heartbeat(live, T0 + 29_000);
      // Within the bound nothing is touched.
      expect(await ledger.releaseOrphans(30_000, T0 + 29_000)).toEqual({ processes: 0, released: 0 });
      // The dead one's two calls and its hold come back; the live one's call stays reserved.
      expect(await ledger.releaseOrphans(30_000, T0 + 31_000)).toEqual({ processes: 1, released: 3 });
      const info = (await ledger.getKeyInfo({ apiKey: k.apiKey }, T0 + 31_000))!;
      expect(info.account.reservedMsat).toBe(1_000);
      expect(info.availableMsat).toBe(9_000);
      // Exactly once: the process is forgotten, a second pass (from any process) changes nothing.
      expect(await ledger.releaseOrphans(30_000, T0 + 32_000)).toEqual({ processes: 0, released: 0 });
      expect((await ledger.checkConservation()).breaches).toEqual([]);
    });
  });

  describe(`${factory.name}: child keys and withdrawals`, () => {
    it('creates 1–50 child keys, debiting the fee all or nothing', async () => {
      const { ledger } = await ctx.open();
      const k = await fund(ledger, 1000);
      expect(
        await ledger.createChildKeys({ parent: { apiKey: k.apiKey }, count: 0, feePerKeyMsat: 1 }),
      ).toMatchObject({ ok: false, code: 'invalid_request' });
      expect(
        await ledger.createChildKeys({ parent: { apiKey: k.apiKey }, count: 51, feePerKeyMsat: 1 }),
      ).toMatchObject({ ok: false, code: 'invalid_request' });
      // Out-of-range limits are the caller's mistake: invalid_request, never store_unavailable.
      for (const bad of [{ balanceLimitMsat: 1e19 }, { validityDateMs: 1e19 }, { expiresAtMs: -1 }]) {
        await expect(
          ledger.createChildKeys({ parent: { apiKey: k.apiKey }, count: 1, feePerKeyMsat: 1, ...bad }),
        ).rejects.toMatchObject({ code: 'invalid_request' });
      }
      expect(
        await ledger.createChildKeys({ parent: { apiKey: k.apiKey }, count: 11, feePerKeyMsat: 100 }),
      ).toEqual({ ok: false, code: 'payment_required', balance: 1000, required: 1100, shortfall: 100 });
      expect((await ledger.getKeyInfo({ apiKey: k.apiKey }))?.children).toHaveLength(0);
      const r = await dailyChildren(ledger, k.apiKey, { count: 3, feePerKeyMsat: 100, balanceLimitMsat: 50 });
      expect(r.apiKeys).toHaveLength(3);
      expect(new Set(r.apiKeys).size).toBe(3);
      for (const key of r.apiKeys) expect(key.slice(3, 13)).toBe(k.accountId);
      expect(r).toMatchObject({ feeMsat: 300, parentBalanceMsat: 700 });
      const info = await ledger.getKeyInfo({ apiKey: k.apiKey });
      expect(info?.children.map((c) => c.key.balanceLimitMsat)).toEqual([50, 50, 50]);
      expect(info?.account).toMatchObject({ feesMsat: 300, balanceMsat: 700 });
      const txs = await ledger.listTransactions({ apiKey: k.apiKey });
      expect(txs?.transactions[0]).toMatchObject({
        type: 'child_key_fee',
        amountMsat: -300,
        balanceAfterMsat: 700,
      });
      const child = r.apiKeys[0]!;
      expect(await ledger.createChildKeys({ parent: { apiKey: child }, count: 1, feePerKeyMsat: 0 })).toEqual(
        { ok: false, code: 'child_key_forbidden' },
      );
      expect(
        await ledger.credit({
          credential: { apiKey: child },
          tokenHash: randomTokenHash(),
          amountMsat: 5,
          kind: 'topup',
        }),
      ).toEqual({ ok: false, code: 'child_key_forbidden' });
      const ci = await ledger.getKeyInfo({ apiKey: child });
      expect(ci).toMatchObject({
        key: { isChild: true, parentKeyId: info?.key.keyId },
        availableMsat: 50,
        children: [],
      });
      // parent deletes one child; deleting the parent invalidates the rest
      const del = await ledger.deleteKey({ credential: { apiKey: k.apiKey }, childKeyId: r.keys[1]!.keyId });
      expect(del).toMatchObject({ ok: true, key: { keyId: r.keys[1]!.keyId } });
      expect(
        await ledger.deleteKey({ credential: { apiKey: k.apiKey }, childKeyId: 'ffffffffffffffff' }),
      ).toEqual({ ok: false, code: 'not_found' });
      expect(await ledger.deleteKey({ credential: { apiKey: child } })).toEqual({
        ok: false,
        code: 'child_key_forbidden',
      });
      expect((await ledger.getKeyInfo({ apiKey: k.apiKey }))?.children).toHaveLength(2);
      await ledger.deleteKey({ credential: { apiKey: k.apiKey } });
      expect(await ledger.getKeyInfo({ apiKey: child })).toBeNull();
    });

    it('a child spends the parent balance within its limit, reset each period', async () => {
      const { ledger } = await ctx.open();
      const k = await fund(ledger, 10_000);
      const r = await dailyChildren(
        ledger,
        k.apiKey,
        { count: 1, feePerKeyMsat: 0, balanceLimitMsat: 500 },
        { validityDateMs: T0 + 3 * 86_400_000 },
      );
      const child = r.apiKeys[0]!;
      const a = await admitOk(ledger, child, 10_000, 1, T0);
      expect(a.reservedMsat).toBe(500);
      await ledger.settle(settleInput(a, { costMsat: 450, promptTokens: 1, completionTokens: 1, now: T0 }));
      const b = await ledger.admit(
        admitInput(child, { maxMsat: 100, minMsat: 100, expiresInMs: 1000, now: T0 + 1 }),
      );
      expect(b).toEqual({ ok: false, code: 'payment_required', balance: 50, required: 100, shortfall: 50 });
      const nextDay = await admitOk(ledger, child, 10_000, 1, T0 + 86_400_000);
      expect(nextDay.reservedMsat).toBe(500);
      await ledger.release({
        accountId: nextDay.accountId,
        requestId: nextDay.requestId,
        now: T0 + 86_400_000,
      });
      expect(
        await ledger.admit(
          admitInput(child, { maxMsat: 1, minMsat: 0, expiresInMs: 1000, now: T0 + 3 * 86_400_000 }),
        ),
      ).toEqual({ ok: false, code: 'key_expired', expiredAtMs: T0 + 3 * 86_400_000 });
      const pi = await ledger.getKeyInfo({ apiKey: k.apiKey }, T0 + 86_400_000);
      expect(pi?.children[0]?.usage).toMatchObject({
        totalSpentMsat: 450,
        totalRequests: 1,
        periodSpentMsat: 0,
      });
      expect(pi?.account).toMatchObject({ balanceMsat: 9550, spentMsat: 450 });
      const ctx2 = await ledger.listTransactions({ apiKey: child });
      expect(ctx2?.transactions.map((t) => t.type)).toEqual(['usage']);
    });

    it('holds, commits and aborts withdrawals idempotently; held money is not spendable; expired holds abort', async () => {
      const { ledger } = await ctx.open();
      const k = await fund(ledger, 1000);
      const h = await ledger.holdWithdrawal(
        holdInput(k.apiKey, { amountMsat: 600, holdId: 'w1', expiresInMs: 60_000, now: T0 }),
      );
      expect(h).toMatchObject({ ok: true, heldMsat: 600, availableMsat: 400, replay: false });
      expect(
        await ledger.holdWithdrawal(
          holdInput(k.apiKey, { amountMsat: 600, holdId: 'w1', expiresInMs: 60_000, now: T0 }),
        ),
      ).toMatchObject({ ok: true, replay: true, heldMsat: 600 });
      expect(
        await ledger.admit(admitInput(k.apiKey, { maxMsat: 500, minMsat: 500, expiresInMs: 1000, now: T0 })),
      ).toMatchObject({ ok: false, code: 'payment_required', balance: 400 });
      const c = await ledger.commitWithdrawal({ accountId: k.accountId, holdId: 'w1', now: T0 });
      expect(c).toMatchObject({
        ok: true,
        status: 'committed',
        replay: false,
        withdrawnMsat: 600,
        balanceMsat: 400,
      });
      expect(await ledger.commitWithdrawal({ accountId: k.accountId, holdId: 'w1' })).toEqual({
        ...c,
        replay: true,
      });
      expect(await ledger.abortWithdrawal({ accountId: k.accountId, holdId: 'w1' })).toEqual({
        ok: false,
        code: 'already_committed',
      });
      expect(
        await ledger.holdWithdrawal(
          holdInput(k.apiKey, { amountMsat: 1, holdId: 'w1', expiresInMs: 1, now: T0 }),
        ),
      ).toEqual({ ok: false, code: 'duplicate_request' });
      const h2 = await ledger.holdWithdrawal(
        holdInput(k.apiKey, {
          amountMsat: 'all',
          holdId: 'w2',
          kind: 'refund',
          expiresInMs: 60_000,
          now: T0,
        }),
      );
      expect(h2).toMatchObject({ ok: true, heldMsat: 400, availableMsat: 0 });
      expect(await ledger.abortWithdrawal({ accountId: k.accountId, holdId: 'w2' })).toEqual({
        ok: true,
        status: 'aborted',
        replay: false,
        releasedMsat: 400,
      });
      expect(await ledger.abortWithdrawal({ accountId: k.accountId, holdId: 'w2' })).toEqual({
        ok: true,
        status: 'aborted',
        replay: true,
        releasedMsat: 400,
      });
      expect(await ledger.commitWithdrawal({ accountId: k.accountId, holdId: 'w2' })).toEqual({
        ok: false,
        code: 'already_aborted',
      });
      await ledger.holdWithdrawal(
        holdInput(k.apiKey, { amountMsat: 300, holdId: 'w3', kind: 'refund', expiresInMs: 1000, now: T0 }),
      );
      expect(await ledger.sweepExpired(T0 + 1000)).toBe(1);
      expect((await ledger.getKeyInfo({ apiKey: k.apiKey }))?.account.reservedMsat).toBe(0);
      // an expired hold still commits when the money is there (the token may have gone out)
      expect(
        await ledger.commitWithdrawal({ accountId: k.accountId, holdId: 'w3', now: T0 + 2000 }),
      ).toMatchObject({ ok: true, withdrawnMsat: 300, balanceMsat: 100 });
      const types = (await ledger.listTransactions({ apiKey: k.apiKey }))?.transactions.map((t) => t.type);
      expect(types).toEqual(['refund', 'withdrawal', 'deposit']);
      expect(
        await ledger.holdWithdrawal(
          holdInput(k.apiKey, { amountMsat: 101, holdId: 'w4', expiresInMs: 1000 }),
        ),
      ).toEqual({ ok: false, code: 'payment_required', balance: 100, required: 101, shortfall: 1 });
      const info = await ledger.getKeyInfo({ apiKey: k.apiKey });
      expect(info?.account).toMatchObject({ withdrawnMsat: 900, depositedMsat: 1000, balanceMsat: 100 });
    });

    it('commits part of a hold (a Lightning refund debits the fee paid, not the reserve) and releases the rest in the same step', async () => {
      const { ledger } = await ctx.open();
      const k = await fund(ledger, 10_000);
      const hold = (holdId: string, expiresInMs = 60_000) =>
        ledger.holdWithdrawal(
          holdInput(k.apiKey, { amountMsat: 'all', holdId, kind: 'refund', expiresInMs, now: T0 }),
        );
      expect(await hold('p1')).toMatchObject({ ok: true, heldMsat: 10_000 });
      const c = await ledger.commitWithdrawal({
        accountId: k.accountId,
        holdId: 'p1',
        debitMsat: 9_100,
        now: T0,
      });
      expect(c).toMatchObject({ ok: true, withdrawnMsat: 9_100, balanceMsat: 900, replay: false });
      // A replay answers the first result, whatever debit it names.
      expect(
        await ledger.commitWithdrawal({ accountId: k.accountId, holdId: 'p1', debitMsat: 1, now: T0 }),
      ).toEqual({ ...c, replay: true });
      expect((await ledger.getKeyInfo({ apiKey: k.apiKey }))?.account).toMatchObject({
        balanceMsat: 900,
        reservedMsat: 0,
        withdrawnMsat: 9_100,
      });
      // A debit above the hold is capped at it.
      expect(await hold('p2')).toMatchObject({ ok: true, heldMsat: 900 });
      expect(
        await ledger.commitWithdrawal({ accountId: k.accountId, holdId: 'p2', debitMsat: 5_000, now: T0 }),
      ).toMatchObject({ ok: true, withdrawnMsat: 900, balanceMsat: 0 });
      await expect(
        ledger.commitWithdrawal({ accountId: k.accountId, holdId: 'p2', debitMsat: -1 }),
      ).rejects.toThrow();
      expect((await ledger.checkConservation()).ok).toBe(true);
    });

    it('a payout hold never expires and refuses every other hold of the account until its decision', async () => {
      const { ledger } = await ctx.open();
      const k = await fund(ledger, 100_000);
      const other = await fund(ledger, 5_000);
      const payout = await ledger.holdWithdrawal(
        holdInput(k.apiKey, {
          amountMsat: 'all',
          holdId: 'lnrefund-a',
          kind: 'refund',
          expiresInMs: null,
          now: T0,
        }),
      );
      expect(payout).toMatchObject({ ok: true, heldMsat: 100_000, availableMsat: 0, replay: false });
      // Its replay is still the hold (idempotent by id), not a refusal.
      expect(
        await ledger.holdWithdrawal(
          holdInput(k.apiKey, { amountMsat: 'all', holdId: 'lnrefund-a', kind: 'refund', expiresInMs: null }),
        ),
      ).toMatchObject({ ok: true, replay: true, heldMsat: 100_000 });
      // A year later: no sweep, no admit and no next hold of the account releases it.
      const later = T0 + 365 * 86_400_000;
      expect(await ledger.sweepExpired(later)).toBe(0);
      expect(
        await ledger.admit(admitInput(k.apiKey, { maxMsat: 1, minMsat: 1, expiresInMs: 1000, now: later })),
      ).toMatchObject({ ok: false, code: 'payment_required', balance: 0 });
      const refused = {
        ok: false,
        code: 'payout_in_progress',
        payout: { holdId: 'lnrefund-a', sinceMs: T0 },
      };
      for (const [holdId, amountMsat, expiresInMs] of [
        ['w-token', 1_000, 60_000],
        ['lnrefund-b', 'all', null],
      ] as const) {
        expect(
          await ledger.holdWithdrawal(holdInput(k.apiKey, { amountMsat, holdId, expiresInMs, now: later })),
        ).toEqual(refused);
      }
      expect((await ledger.getKeyInfo({ apiKey: k.apiKey }, later))?.account).toMatchObject({
        balanceMsat: 100_000,
        reservedMsat: 100_000,
        payout: { holdId: 'lnrefund-a', sinceMs: T0 },
      });
      // Another account is not concerned.
      expect(
        await ledger.holdWithdrawal(
          holdInput(other.apiKey, { amountMsat: 1_000, holdId: 'w-other', expiresInMs: 60_000, now: later }),
        ),
      ).toMatchObject({ ok: true, heldMsat: 1_000 });
      await ledger.abortWithdrawal({ accountId: other.accountId, holdId: 'w-other' });
      // The melt's decision commits it, past any old lease, for the amount paid plus the fee.
      expect(
        await ledger.commitWithdrawal({
          accountId: k.accountId,
          holdId: 'lnrefund-a',
          debitMsat: 98_000,
          now: later,
        }),
      ).toMatchObject({ ok: true, withdrawnMsat: 98_000, balanceMsat: 2_000 });
      const after = (await ledger.getKeyInfo({ apiKey: k.apiKey }, later))?.account;
      expect(after).toMatchObject({ balanceMsat: 2_000, reservedMsat: 0 });
      expect(after?.payout).toBeUndefined();
      // Then the account may hold again; an aborted payout hold frees it the same way.
      expect(
        await ledger.holdWithdrawal(
          holdInput(k.apiKey, {
            amountMsat: 'all',
            holdId: 'lnrefund-c',
            kind: 'refund',
            expiresInMs: null,
            now: later,
          }),
        ),
      ).toMatchObject({ ok: true, heldMsat: 2_000 });
      expect(await ledger.abortWithdrawal({ accountId: k.accountId, holdId: 'lnrefund-c' })).toMatchObject({
        ok: true,
        releasedMsat: 2_000,
      });
      expect(
        await ledger.holdWithdrawal(
          holdInput(k.apiKey, { amountMsat: 1_000, holdId: 'w-after', expiresInMs: 60_000, now: later }),
        ),
      ).toMatchObject({ ok: true, heldMsat: 1_000 });
      await ledger.abortWithdrawal({ accountId: k.accountId, holdId: 'w-after' });
      expect((await ledger.checkConservation()).ok).toBe(true);
    });

    it('paginates transactions newest first', async () => {
      const { ledger } = await ctx.open({ txRetention: 5 });
      const k = await fund(ledger, 100_000);
      for (let i = 1; i <= 7; i++) {
        const a = await admitOk(ledger, k.apiKey, 100, 0, T0 + i);
        await ledger.settle(settleInput(a, { costMsat: i, description: `#${i}`, now: T0 + i }));
      }
      const p1 = await ledger.listTransactions({ apiKey: k.apiKey }, { limit: 2 });
      expect(p1?.transactions.map((t) => t.description)).toEqual(['#7', '#6']);
      expect(p1).toMatchObject({ hasMore: true, total: 5 });
      const p3 = await ledger.listTransactions({ apiKey: k.apiKey }, { limit: 2, offset: 4 });
      expect(p3?.transactions.map((t) => t.description)).toEqual(['#3']);
      expect(p3?.hasMore).toBe(false);
      expect(p1?.transactions[0]?.balanceAfterMsat).toBe(100_000 - 28);
    });
  });

  leaseSuite(factory.name, ctx);
  creditLeaseSuite(factory.name, ctx);
  raceSuite(factory.name, ctx);
  propertySuite(factory.name, ctx);
}
