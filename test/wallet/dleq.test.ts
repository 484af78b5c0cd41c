import { getDecodedToken, hasValidDleq, type Proof } from '@cashu/cashu-ts';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proofDleqValid } from '../../core/wallet/dleq.js';
import { type DevMint, startTestMint } from '../support/dev-mint.js';

/**
 * core/wallet/dleq.ts (the receive path's DLEQ check on libsecp256k1) answers what cashu-ts's `hasValidDleq`
 * answers, on the dev mint's real proofs and on every kind of tampering a sender could try: a changed e, s or r,
 * a missing r, zero or out-of-range scalars, another proof's C or secret, another amount's key, non-hex.
 */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const hex64 = (n: bigint) => n.toString(16).padStart(64, '0');
const flip = (h: string, at: number) => {
  const i = at % h.length;
  return h.slice(0, i) + (h[i] === '0' ? '1' : '0') + h.slice(i + 1);
};

type Tamper =
  | { kind: 'none' }
  | { kind: 'flip'; field: 'e' | 's' | 'r' | 'C'; at: number }
  | { kind: 'set'; field: 'e' | 's' | 'r'; value: string }
  | { kind: 'no-r' }
  | { kind: 'swap'; field: 'C' | 'secret' | 'dleq'; other: number }
  | { kind: 'other-key'; other: number };

describe('the receive path’s DLEQ check (core/wallet/dleq.ts)', () => {
  let mint: DevMint;
  let proofs: Proof[];
  let keys: Record<string, string>;

  beforeAll(async () => {
    mint = await startTestMint();
    const res = (await (await fetch(`${mint.url}/v1/keys`)).json()) as {
      keysets: { id: string; unit: string; keys: Record<string, string> }[];
    };
    const ks = res.keysets.find((k) => k.unit === 'sat')!;
    keys = ks.keys;
    proofs = [
      ...getDecodedToken(await mint.mintTokens(1023), [ks.id]).proofs,
      ...getDecodedToken(await mint.mintTokens(7), [ks.id]).proofs,
    ];
  });
  afterAll(async () => {
    await mint.close();
  });

  const keyset = () =>
    ({ id: proofs[0]!.id, unit: 'sat', keys }) as unknown as Parameters<typeof hasValidDleq>[1];

  it('accepts every real proof, as cashu-ts does', () => {
    expect(proofs.length).toBe(13);
    for (const p of proofs) {
      const key = keys[p.amount.toString()]!;
      expect(proofDleqValid(p, key)).toBe(true);
      expect(hasValidDleq(p, keyset())).toBe(true);
    }
  });

  it('answers as cashu-ts on tampered proofs (fast-check)', () => {
    const tamper: fc.Arbitrary<Tamper> = fc.oneof(
      fc.constant({ kind: 'none' as const }),
      fc.record({
        kind: fc.constant('flip' as const),
        field: fc.constantFrom('e', 's', 'r', 'C'),
        at: fc.nat(),
      }),
      fc.record({
        kind: fc.constant('set' as const),
        field: fc.constantFrom('e', 's', 'r'),
        value: fc.constantFrom('0'.repeat(64), hex64(N), hex64(N - 1n), hex64(N + 5n), 'zz', '', '01', '1'),
      }),
      fc.constant({ kind: 'no-r' as const }),
      fc.record({
        kind: fc.constant('swap' as const),
        field: fc.constantFrom('C', 'secret', 'dleq'),
        other: fc.nat(),
      }),
      fc.record({ kind: fc.constant('other-key' as const), other: fc.nat() }),
    );
    fc.assert(
      fc.property(fc.nat(), tamper, (which, t) => {
        const p0 = proofs[which % proofs.length]!;
        const p: Proof = { ...p0, dleq: { ...p0.dleq! } };
        let key = keys[p.amount.toString()]!;
        const other = (i: number) => proofs[(which + 1 + (i % (proofs.length - 1))) % proofs.length]!;
        if (t.kind === 'flip') {
          if (t.field === 'C') p.C = flip(p.C, t.at);
          else p.dleq![t.field] = flip(p.dleq![t.field] ?? '', t.at);
        } else if (t.kind === 'set') p.dleq![t.field] = t.value;
        else if (t.kind === 'no-r') delete p.dleq!.r;
        else if (t.kind === 'swap') {
          const o = other(t.other);
          if (t.field === 'dleq') p.dleq = { ...o.dleq! };
          else p[t.field] = o[t.field];
        } else if (t.kind === 'other-key') {
          const o = other(t.other);
          if (o.amount.toString() !== p.amount.toString()) key = keys[o.amount.toString()]!;
        }
        // cashu-ts reads the key by the proof's amount: hand it a keyset whose key for that amount is `key`.
        const ks = {
          id: p.id,
          unit: 'sat',
          keys: { ...keys, [p.amount.toString()]: key },
        } as unknown as Parameters<typeof hasValidDleq>[1];
        let expected: boolean;
        try {
          expected = hasValidDleq(p, ks);
        } catch {
          expected = false;
        }
        expect(proofDleqValid(p, key)).toBe(expected);
        if (t.kind === 'none') expect(expected).toBe(true);
      }),
      { numRuns: 150 },
    );
  });
});
