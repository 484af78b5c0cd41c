import { createHash } from 'node:crypto';
import { getTokenMetadata, normalizeMintUrl, type Proof } from '@cashu/cashu-ts';
import { GatewayError } from '../errors.js';
import type { CashuUnit } from './types.js';

/**
 * Token parsing without the mint: cashuA (v3, base64url JSON) and cashuB (v4, base64url CBOR) via cashu-ts,
 * plus the v3 encoder cashu-ts 4 no longer ships. Nothing here logs or echoes token content.
 */

export const UNIT_MSAT: Record<CashuUnit, number> = { sat: 1000, msat: 1 };

export function isCashuUnit(u: string): u is CashuUnit {
  return u === 'sat' || u === 'msat';
}

export function toMsat(amount: number, unit: CashuUnit): number {
  return amount * UNIT_MSAT[unit];
}

/** `normalizeMintUrl` that throws GatewayError instead of CTSError. */
export function normalizeMint(url: string): string {
  try {
    return normalizeMintUrl(url);
  } catch {
    throw new GatewayError('invalid_request', { message: 'Invalid mint URL' });
  }
}

export interface TokenMeta {
  mint: string;
  unit: string;
  amount: number;
  proofs: number;
  version: 3 | 4;
  secrets: string[];
}

/** Strips the optional `cashu:` URI scheme and surrounding whitespace. */
export function cleanToken(token: string): string {
  let t = token.trim();
  for (const p of ['web+cashu://', 'cashu://', 'cashu:']) if (t.startsWith(p)) t = t.slice(p.length);
  return t;
}

export function readTokenMeta(raw: string): TokenMeta {
  const token = cleanToken(raw);
  const version = token.startsWith('cashuA') ? 3 : token.startsWith('cashuB') ? 4 : 0;
  if (version === 0 || token.length > 1_000_000) throw new GatewayError('invalid_token');
  try {
    const meta = getTokenMetadata(token);
    const secrets = meta.incompleteProofs.map((p) => p.secret);
    if (secrets.length === 0 || secrets.some((s) => typeof s !== 'string' || s.length === 0)) {
      throw new Error('no proofs');
    }
    return {
      mint: normalizeMintUrl(meta.mint),
      unit: meta.unit,
      amount: meta.amount.toNumber(),
      proofs: secrets.length,
      version,
      secrets,
    };
  } catch {
    // The cause may quote token content: keep it out of the error entirely.
    throw new GatewayError('invalid_token');
  }
}

/** See WalletService.tokenHash. */
export function hashSecrets(secrets: string[]): string {
  const sorted = [...secrets].sort();
  return createHash('sha256')
    .update(`cashu-token-v1:${sorted.join(',')}`)
    .digest('hex');
}

/** Encodes proofs as a v3 `cashuA` token (NUT-00 serialization V3, base64url JSON). */
export function encodeTokenV3(token: { mint: string; unit: string; proofs: Proof[]; memo?: string }): string {
  const body = {
    token: [
      {
        mint: token.mint,
        proofs: token.proofs.map((p) => ({
          id: p.id,
          amount: Number(p.amount.toBigInt()),
          secret: p.secret,
          C: p.C,
          ...(p.dleq ? { dleq: p.dleq } : {}),
        })),
      },
    ],
    unit: token.unit,
    ...(token.memo ? { memo: token.memo } : {}),
  };
  return `cashuA${Buffer.from(JSON.stringify(body), 'utf8').toString('base64url')}`;
}
