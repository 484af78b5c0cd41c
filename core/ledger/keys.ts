import { createHash, createHmac, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { KeyLookup } from './types.js';

/**
 * Credential formats, hashing and derivations shared by both stores.
 *
 * `sk-` key = `sk-` + account id (10 base62) + secret (19 base62) = 32 chars, ~113 bits of secret. The
 * account id in the key names the shard (`{a:<id>}`) so admission needs no key→account lookup. Keys are
 * stored only as SHA-256 hex: the secret is high-entropy, so a slow password hash would add latency to every
 * call without adding safety.
 */
const B62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const ACCOUNT_ID_LEN = 10;
export const SECRET_LEN = 19;
const API_KEY_RE = /^sk-[0-9A-Za-z]{29}$/;

/** Unbiased base62 from a byte source (rejection sampling: bytes ≥ 248 are skipped). */
function base62From(next: () => Buffer, n: number): string {
  let out = '';
  while (out.length < n) {
    for (const b of next()) {
      if (b < 248) out += B62[b % 62];
      if (out.length === n) break;
    }
  }
  return out;
}

export function randomBase62(n: number): string {
  return base62From(() => randomBytes(32), n);
}

export function hmacBase62(secret: string, msg: string, n: number): string {
  let i = 0;
  return base62From(() => createHmac('sha256', secret).update(`${i++}:${msg}`).digest(), n);
}

export function sha256Hex(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

/** Public, non-secret id of a key (safe in logs, audit records, responses). */
export function keyIdOf(keyHash: string): string {
  return keyHash.slice(0, 16);
}

export interface ResolvedCredential {
  readonly accountId: string;
  readonly keyHash: string;
  readonly kind: 'apiKey' | 'tokenHash';
}

/**
 * Credentials this process resolved recently (raw API key, or `t:` + token hash → its ids). A paid call
 * resolves its credential twice (admission and the audit record), and a client calls with the same key many
 * times: each SHA-256 is taken once per process instead (docs/benchmarks.md, "The paid-path cuts"). The answer
 * is a pure function of the credential, so nothing ever invalidates an entry; the bound caps the memory.
 */
const RESOLVED = new LRUCache<string, ResolvedCredential>({ max: 20_000 });

/** Token-hash identities get a 32-char hex account id (never 10 chars, so never clashes with key ids). */
export function accountIdForToken(tokenHash: string): string {
  return `h${sha256Hex(`acct:${tokenHash}`).slice(0, 31)}`;
}

export function keyHashForToken(tokenHash: string): string {
  return sha256Hex(`tok:${tokenHash}`);
}

/** null when the credential is malformed (answered as invalid_api_key without a store round trip). */
export function resolveCredential(c: KeyLookup): ResolvedCredential | null {
  if ('keyRef' in c) {
    const { accountId, keyHash } = c.keyRef;
    if (typeof accountId !== 'string' || typeof keyHash !== 'string' || !/^[0-9a-f]{64}$/.test(keyHash))
      return null;
    return { accountId, keyHash, kind: 'apiKey' };
  }
  if ('apiKey' in c) {
    if (typeof c.apiKey !== 'string') return null;
    let r = RESOLVED.get(c.apiKey);
    if (r === undefined) {
      if (!API_KEY_RE.test(c.apiKey)) return null;
      r = { accountId: c.apiKey.slice(3, 3 + ACCOUNT_ID_LEN), keyHash: sha256Hex(c.apiKey), kind: 'apiKey' };
      RESOLVED.set(c.apiKey, r);
    }
    return r;
  }
  if (typeof c.tokenHash !== 'string') return null;
  const key = `t:${c.tokenHash}`;
  let r = RESOLVED.get(key);
  if (r === undefined) {
    if (!/^[0-9a-fA-F]{16,128}$/.test(c.tokenHash)) return null;
    r = {
      accountId: accountIdForToken(c.tokenHash),
      keyHash: keyHashForToken(c.tokenHash),
      kind: 'tokenHash',
    };
    RESOLVED.set(key, r);
  }
  return r;
}

export function displayKey(apiKey: string): string {
  return `sk-${apiKey.slice(3, 9)}…${apiKey.slice(-4)}`;
}

export function displayToken(keyHash: string): string {
  return `cashu:${keyIdOf(keyHash)}`;
}

/** A fresh random key on an existing account (child keys). */
export function newKeyForAccount(accountId: string): string {
  return `sk-${accountId}${randomBase62(SECRET_LEN)}`;
}

/**
 * Deposit-created keys are derived, not random, so a client whose create call crashed after the credit gets
 * the same key by retrying with the same token: account id candidate i = HMAC(secret, i, tokenHash), key
 * secret = HMAC(secret, accountId, tokenHash). Candidates 1..3 exist only for the (≈2⁻⁵⁹) case that
 * candidate 0 is already another deposit's account.
 */
export const DEPOSIT_CANDIDATES = 4;

export function depositAccountCandidates(secret: string, tokenHash: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < DEPOSIT_CANDIDATES; i++)
    out.push(hmacBase62(secret, `acct:${i}:${tokenHash}`, ACCOUNT_ID_LEN));
  return out;
}

export function depositApiKey(secret: string, accountId: string, tokenHash: string): string {
  return `sk-${accountId}${hmacBase62(secret, `key:${accountId}:${tokenHash}`, SECRET_LEN)}`;
}

/** Current period ids for child-key balance limits (UTC): days since epoch, Monday-based weeks, months. */
export function periodIds(now: number): { daily: number; weekly: number; monthly: number } {
  const day = Math.floor(now / 86_400_000);
  const d = new Date(now);
  return {
    daily: day,
    // 1970-01-01 was a Thursday: +3 makes weeks start on Monday.
    weekly: Math.floor((day + 3) / 7),
    monthly: d.getUTCFullYear() * 12 + d.getUTCMonth(),
  };
}
