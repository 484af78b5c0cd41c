import {
  issueL402Macaroon,
  parseL402Authorization,
  verifyL402Macaroon,
} from '@getalby/lightning-tools/402/l402';
import { GatewayError } from '../errors.js';

/**
 * The L402 door's token (docs/paying.md): the macaroon `@getalby/lightning-tools` issues and verifies (an HMAC
 * over its JSON caveats with the root key kept in the money store; no macaroon crypto written here). Caveats:
 * the invoice's payment hash, the service, the expiry (unix seconds) and, optionally, the models it may pay for.
 */

export interface L402Caveats {
  paymentHash: string;
  service: string;
  /** Unix seconds after which the token pays no call (its balance can still be read and refunded). */
  expires: number;
  models?: string[];
}

export function issueMacaroon(rootKey: string, c: L402Caveats): Promise<string> {
  const { paymentHash, ...params } = c;
  return issueL402Macaroon(rootKey, paymentHash, params);
}

/** The challenge header value: `L402 macaroon="…", invoice="…"` (Aperture's form; Alby reads `macaroon` too). */
export function l402Challenge(macaroon: string, invoice: string): string {
  return `L402 macaroon="${macaroon}", invoice="${invoice}"`;
}

/** `Authorization: L402 <macaroon>:<preimage>` (or the older `LSAT`): the parts, or null for another scheme. */
export function parseL402Credential(authorization: string): { macaroon: string; preimage: string } | null {
  let parts: { token: string; preimage: string } | null;
  try {
    parts = parseL402Authorization(authorization.trim());
  } catch {
    throw new GatewayError('invalid_payment_credential', {
      message: 'Authorization must be "L402 <macaroon>:<preimage>"',
    });
  }
  return parts === null ? null : { macaroon: parts.token, preimage: parts.preimage };
}

/**
 * The caveats of a macaroon this root key signed. @throws GatewayError `invalid_payment_credential` for a token
 * that does not verify or whose caveats are not ours.
 */
export async function verifyMacaroon(rootKey: string, macaroon: string): Promise<L402Caveats> {
  let payload: Record<string, unknown>;
  try {
    payload = await verifyL402Macaroon<Record<string, unknown>>(rootKey, macaroon);
  } catch {
    throw new GatewayError('invalid_payment_credential', { message: 'The L402 macaroon does not verify' });
  }
  const { paymentHash, service, expires, models } = payload;
  if (
    typeof paymentHash !== 'string' ||
    !/^[0-9a-f]{64}$/.test(paymentHash) ||
    typeof service !== 'string' ||
    typeof expires !== 'number' ||
    (models !== undefined && (!Array.isArray(models) || !models.every((m) => typeof m === 'string')))
  ) {
    throw new GatewayError('invalid_payment_credential', {
      message: 'The L402 macaroon has unknown caveats',
    });
  }
  return { paymentHash, service, expires, ...(models !== undefined ? { models: models as string[] } : {}) };
}
