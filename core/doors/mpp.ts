import { createHmac, timingSafeEqual } from 'node:crypto';
import { GatewayError } from '../errors.js';

/**
 * The MPP door (`WWW-Authenticate: Payment`, draft-ryan-httpauth-payment, Lightning `charge` intent as
 * draft-lightning-charge-00 and Alby's `fetchWithMpp` implement it). A challenge names one invoice; its `id` is an
 * HMAC of every other challenge parameter with a secret kept in the money store, so a credential echoing an
 * altered challenge (another invoice, realm, intent or expiry) or one this node never issued does not verify.
 *
 * - Challenge: `Payment id="…", realm="…", method="lightning", intent="charge", request="<b64url JCS JSON>",
 *   expires="<RFC 3339>"`; the request is `{ amount, currency: "sat", description, methodDetails: { invoice,
 *   paymentHash } }`.
 * - Credential: `Authorization: Payment <b64url JSON { challenge: {…echo…}, payload: { preimage } }>` (padding
 *   accepted, `source` ignored).
 * - Receipt: `Payment-Receipt: <b64url JCS JSON { challengeId, method: "lightning", reference, status: "success",
 *   timestamp }>`, the reference being the invoice's payment hash (never the preimage).
 *
 * JSON carried in headers is JCS-serialized (RFC 8785): for the strings and plain objects used here, that is
 * `JSON.stringify` with every object's keys sorted; base64url without padding.
 */

export interface MppChallenge {
  id: string;
  realm: string;
  method: string;
  intent: string;
  request: string;
  expires?: string;
}

export interface ChargeRequest {
  amount: string;
  currency: string;
  description?: string;
  methodDetails: { invoice: string; paymentHash: string; network?: string };
}

const b64url = (s: string) => Buffer.from(s, 'utf8').toString('base64url');

/** JCS (RFC 8785) for JSON made of strings, integers, arrays and plain objects: keys sorted at every level. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
const unb64url = (s: string) => Buffer.from(s, 'base64url').toString('utf8');

/** The binding of a challenge: HMAC-SHA256 over its parameters in a fixed order, base64url. */
function bindingId(secret: string, c: Omit<MppChallenge, 'id'>): string {
  const text = [c.realm, c.method, c.intent, c.request, c.expires ?? ''].join('\n');
  return createHmac('sha256', secret).update(text).digest('base64url');
}

/**
 * The `session` intent's request (draft-lightning-session-00): `amount` the price of one unit (here one call, its
 * reservation bound), the deposit invoice to open the session with, and its payment hash (the session id).
 */
export interface SessionRequest {
  amount: string;
  currency: string;
  description?: string;
  unitType?: string;
  depositInvoice: string;
  depositAmount?: string;
  paymentHash: string;
}

export function issueChallenge(
  secret: string,
  input: {
    realm: string;
    request: ChargeRequest | SessionRequest;
    expiresAt: number;
    intent?: 'charge' | 'session';
  },
): MppChallenge {
  const c = {
    realm: input.realm,
    method: 'lightning',
    intent: input.intent ?? 'charge',
    request: b64url(canonicalJson(input.request)),
    expires: new Date(input.expiresAt).toISOString(),
  };
  return { id: bindingId(secret, c), ...c };
}

const quoted = (v: string) => `"${v.replace(/["\\]/g, '')}"`;

export function challengeHeader(c: MppChallenge): string {
  const params = [
    `id=${quoted(c.id)}`,
    `realm=${quoted(c.realm)}`,
    `method=${quoted(c.method)}`,
    `intent=${quoted(c.intent)}`,
    `request=${quoted(c.request)}`,
    ...(c.expires !== undefined ? [`expires=${quoted(c.expires)}`] : []),
  ];
  return `Payment ${params.join(', ')}`;
}

export interface VerifiedCharge {
  challenge: MppChallenge;
  request: ChargeRequest;
  preimage: string;
  /** Unix ms; NaN when the challenge named none. */
  expiresAt: number;
}

const bad = (message: string) => new GatewayError('invalid_payment_credential', { message });

/** A credential whose challenge this node issued, as echoed: its intent, decoded request and payload. */
export interface MppCredential {
  challenge: MppChallenge;
  request: Record<string, unknown>;
  payload: Record<string, unknown>;
  /** Unix ms; NaN when the challenge named none. */
  expiresAt: number;
}

/**
 * Reads and checks an `Authorization: Payment …` credential: null for another scheme. @throws
 * `invalid_payment_credential` when it is malformed, not a Lightning `charge` or `session`, of another realm, or
 * its challenge was not issued with `secret` exactly as echoed.
 */
export function readCredential(secret: string, realm: string, authorization: string): MppCredential | null {
  const m = /^Payment\s+([A-Za-z0-9_-]+=*)$/i.exec(authorization.trim());
  if (!m) {
    if (/^Payment(\s|$)/i.test(authorization.trim()))
      throw bad('Authorization must be "Payment <credential>"');
    return null;
  }
  let cred: { challenge?: Partial<MppChallenge>; payload?: unknown };
  try {
    cred = JSON.parse(unb64url(m[1] as string)) as typeof cred;
  } catch {
    throw bad('The Payment credential is not base64url JSON');
  }
  const c = cred?.challenge;
  const payload = cred?.payload;
  if (
    c === undefined ||
    c === null ||
    typeof c.id !== 'string' ||
    typeof c.realm !== 'string' ||
    typeof c.method !== 'string' ||
    typeof c.intent !== 'string' ||
    typeof c.request !== 'string' ||
    (c.expires !== undefined && typeof c.expires !== 'string') ||
    payload === null ||
    typeof payload !== 'object' ||
    Array.isArray(payload)
  ) {
    throw bad('The Payment credential lacks its challenge or payload');
  }
  const challenge: MppChallenge = {
    id: c.id,
    realm: c.realm,
    method: c.method,
    intent: c.intent,
    request: c.request,
    ...(c.expires !== undefined ? { expires: c.expires } : {}),
  };
  const expected = Buffer.from(bindingId(secret, challenge));
  const given = Buffer.from(challenge.id);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    throw bad('The Payment challenge was not issued by this node, or was altered');
  }
  if (
    challenge.realm !== realm ||
    challenge.method !== 'lightning' ||
    (challenge.intent !== 'charge' && challenge.intent !== 'session')
  ) {
    throw bad('The Payment challenge is not a Lightning charge or session of this node');
  }
  let request: Record<string, unknown>;
  try {
    request = JSON.parse(unb64url(challenge.request)) as Record<string, unknown>;
  } catch {
    throw bad('The Payment challenge request is not base64url JSON');
  }
  return {
    challenge,
    request,
    payload: payload as Record<string, unknown>,
    expiresAt: challenge.expires === undefined ? Number.NaN : Date.parse(challenge.expires),
  };
}

/**
 * A `charge` credential (null for another scheme). @throws `invalid_payment_credential` as `readCredential`, and
 * for another intent or a payload without its preimage.
 */
export function verifyCredential(
  secret: string,
  realm: string,
  authorization: string,
): VerifiedCharge | null {
  const cred = readCredential(secret, realm, authorization);
  if (cred === null) return null;
  if (cred.challenge.intent !== 'charge') throw bad('The Payment challenge is not a Lightning charge');
  const preimage = cred.payload.preimage;
  if (typeof preimage !== 'string') throw bad('The Payment credential lacks its challenge or preimage');
  return {
    challenge: cred.challenge,
    request: cred.request as unknown as ChargeRequest,
    preimage,
    expiresAt: cred.expiresAt,
  };
}

/**
 * The `Payment-Receipt` header value of a call paid through the MPP door: `charge` names its challenge
 * (draft-lightning-charge-00); `session` has no challengeId, its reference is the session id
 * (draft-lightning-session-00). `extra`: a session close's `refundSats` and `refundStatus`.
 */
export function receiptHeader(
  challengeId: string | undefined,
  paymentHash: string,
  now: number,
  extra: Record<string, string | number> = {},
): string {
  return b64url(
    canonicalJson({
      challengeId,
      method: 'lightning',
      reference: paymentHash,
      status: 'success',
      timestamp: new Date(now).toISOString(),
      ...extra,
    }),
  );
}
