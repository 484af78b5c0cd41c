import { generateSecretKey, getPublicKey } from 'nostr-tools/pure';
import { describe, expect, it } from 'vitest';
import { challengeHeader, issueChallenge, verifyCredential } from '../../core/doors/mpp.js';
import { signCallReceipt, verifyCallReceipt, wantsReceipt } from '../../core/receipts/call-receipt.js';

/** The MPP challenge binding and the receipt signature, field by field (no mint, no gateway). */
const SECRET = 'a'.repeat(64);
const REALM = 'gw.example';
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

describe('MPP challenge binding', () => {
  const c = issueChallenge(SECRET, {
    realm: REALM,
    expiresAt: Date.parse('2030-01-01T00:00:00Z'),
    request: {
      amount: '50',
      currency: 'sat',
      methodDetails: { invoice: 'lnbcrt1', paymentHash: 'ab'.repeat(32) },
    },
  });
  const cred = (challenge: Record<string, string>) =>
    `Payment ${b64({ challenge, payload: { preimage: 'cd'.repeat(32) } })}`;

  it('verifies the challenge it issued, echoed as Alby builds the credential', () => {
    const v = verifyCredential(SECRET, REALM, cred({ ...c } as unknown as Record<string, string>));
    expect(v?.request.methodDetails.paymentHash).toBe('ab'.repeat(32));
    expect(v?.expiresAt).toBe(Date.parse('2030-01-01T00:00:00Z'));
    expect(challengeHeader(c)).toMatch(
      /^Payment id="[^"]+", realm="gw\.example", method="lightning", intent="charge"/,
    );
  });

  it.each(['realm', 'method', 'intent', 'request', 'expires', 'id'])(
    'refuses the challenge with %s changed',
    (field) => {
      const altered = { ...c, [field]: `${(c as unknown as Record<string, string>)[field]}x` };
      expect(() =>
        verifyCredential(SECRET, REALM, cred(altered as unknown as Record<string, string>)),
      ).toThrow(expect.objectContaining({ code: 'invalid_payment_credential' }));
    },
  );

  it('refuses a challenge bound with another secret, and reads other schemes as none of its business', () => {
    expect(() =>
      verifyCredential('b'.repeat(64), REALM, cred(c as unknown as Record<string, string>)),
    ).toThrow(expect.objectContaining({ code: 'invalid_payment_credential' }));
    expect(verifyCredential(SECRET, REALM, 'Bearer sk-x')).toBeNull();
    expect(() => verifyCredential(SECRET, REALM, 'Payment not base64 json!')).toThrow(
      expect.objectContaining({ code: 'invalid_payment_credential' }),
    );
  });
});

describe('signed call receipts', () => {
  const sk = generateSecretKey();
  const pubkey = getPublicKey(sk);
  const receipt = {
    request_id: 'req-1',
    model: 'mock-gpt',
    usage: { input: 6, output: 4 },
    msats: 3000,
    balance_msats: 47_000,
    time: 1_900_000_000,
  };
  const encoded = signCallReceipt(sk, receipt);

  it('verifies against the signing key and no other', () => {
    expect(verifyCallReceipt(encoded, pubkey)).toEqual({ ok: true, receipt, pubkey });
    expect(verifyCallReceipt(encoded, getPublicKey(generateSecretKey()))).toMatchObject({ ok: false });
  });

  it.each(['request_id', 'model', 'msats', 'balance_msats', 'time', 'usage'])(
    'fails with %s changed',
    (field) => {
      const event = JSON.parse(Buffer.from(encoded, 'base64url').toString()) as { content: string };
      const content = JSON.parse(event.content) as Record<string, unknown>;
      content[field] =
        field === 'usage' ? { input: 6, output: 5 } : typeof content[field] === 'number' ? 1 : 'other';
      const forged = Buffer.from(JSON.stringify({ ...event, content: JSON.stringify(content) })).toString(
        'base64url',
      );
      expect(verifyCallReceipt(forged, pubkey)).toMatchObject({ ok: false });
    },
  );

  it('reads the Prefer header as RFC 7240 preferences', () => {
    expect(wantsReceipt('receipt')).toBe(true);
    expect(wantsReceipt('respond-async, receipt')).toBe(true);
    expect(wantsReceipt('return=minimal; receipt')).toBe(true);
    expect(wantsReceipt('receipts')).toBe(false);
    expect(wantsReceipt(undefined)).toBe(false);
  });
});
