import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { encodeInvoice, nodeKeyFromSeed } from '../../../scripts/mint/fake-lightning.js';

/**
 * A session client written to draft-lightning-session-00, for the doors' tests: it reads the `intent="session"`
 * challenge of an unpaid call's 402, pays its deposit invoice (through the dev mint, as a Lightning wallet's pay
 * call does), opens with the preimage and an amountless return invoice, then sends bearer, top-up and close
 * credentials. JSON in headers is JCS (keys sorted) and base64url without padding.
 */
export interface MppSessionClientOptions {
  /** The chat completions URL of the gateway under test (read at each call: a suite's URL is set in beforeAll). */
  url: () => string;
  /** The call's request (POST, JSON body); `body` adds to it. */
  init: (body?: Record<string, unknown>) => RequestInit;
  /** Pays a BOLT11 invoice: the preimage. */
  payInvoice: (invoice: string) => Promise<{ preimage: string }>;
}

/** JSON in canonical form (JCS: keys sorted), as the session draft signs and echoes it. */
export const jcs = (v: unknown): string =>
  Array.isArray(v)
    ? `[${v.map(jcs).join(',')}]`
    : v !== null && typeof v === 'object'
      ? `{${Object.keys(v)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${jcs((v as Record<string, unknown>)[k])}`)
          .join(',')}}`
      : JSON.stringify(v);

/** A `Payment` authorization: the challenge echoed and the payload. */
export const paymentAuth = (challenge: Record<string, string>, payload: Record<string, unknown>): string =>
  `Payment ${Buffer.from(jcs({ challenge, payload })).toString('base64url')}`;

/** The `Payment` challenges of a WWW-Authenticate value, each as its parameters. */
export const paymentChallenges = (www: string): Array<Record<string, string>> =>
  www
    .split(/,\s*(?=(?:Payment|L402)\s)/)
    .filter((c) => c.startsWith('Payment '))
    .map((c) => Object.fromEntries([...c.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]])));

/** An amountless BOLT11 invoice of a fresh payment hash: what a session client gives to be refunded on close. */
export const returnInvoice = (): string =>
  encodeInvoice({
    amountMsat: null,
    paymentHash: randomBytes(32),
    paymentSecret: randomBytes(32),
    description: 'session refund',
    timestamp: Math.floor(Date.now() / 1000),
    expirySeconds: 30 * 86_400,
    nodeKey: nodeKeyFromSeed('session-client'),
  });

/** An error answer's status and code. */
export const codeOf = async (r: Response): Promise<[number, string]> => [
  r.status,
  ((await r.json()) as { error: { code: string } }).error.code,
];

/** The `Payment-Receipt` header, decoded. */
export const decodeReceipt = (r: Response): Record<string, unknown> =>
  JSON.parse(Buffer.from(r.headers.get('payment-receipt') ?? '', 'base64url').toString()) as Record<
    string,
    unknown
  >;

/** An MPP close's answer body. */
export type CloseBody = { status: string; refundSats: number; refundStatus: string };

export function mppSessionClient(o: MppSessionClientOptions) {
  /** The session challenge of an unpaid call's 402, and its decoded request. */
  const sessionChallenge = async () => {
    const res = await fetch(o.url(), o.init());
    expect(res.status).toBe(402);
    await res.body?.cancel();
    const c = paymentChallenges(res.headers.get('www-authenticate') ?? '').find(
      (p) => p.intent === 'session',
    );
    expect(c).toBeDefined();
    const request = JSON.parse(Buffer.from(c!.request!, 'base64url').toString()) as Record<string, string>;
    return { challenge: c as Record<string, string>, request };
  };
  /** A session challenge whose deposit invoice is paid: its preimage, and the session id (the payment hash). */
  const paidSession = async () => {
    const { challenge, request } = await sessionChallenge();
    const { preimage } = await o.payInvoice(request.depositInvoice!);
    return { challenge, request, preimage, sessionId: request.paymentHash! };
  };
  /** The call with this authorization (and `body` added to the request's). */
  const callWith = (authorization: string, body: Record<string, unknown> = {}) =>
    fetch(o.url(), { ...o.init(body), headers: { 'content-type': 'application/json', authorization } });
  /** An opened session with one call paid: its credentials and its return invoice. */
  const openedSession = async () => {
    const { challenge, preimage, sessionId } = await paidSession();
    const ret = returnInvoice();
    const open = await callWith(paymentAuth(challenge, { action: 'open', preimage, returnInvoice: ret }));
    expect(open.status).toBe(200);
    await open.body?.cancel();
    return {
      sessionId,
      ret,
      bearer: paymentAuth(challenge, { action: 'bearer', sessionId, preimage }),
      closeAuth: paymentAuth(challenge, { action: 'close', sessionId, preimage }),
    };
  };
  return { sessionChallenge, paidSession, callWith, openedSession };
}
