import { Buffer } from 'node:buffer';
import * as nip19 from 'nostr-tools/nip19';
import { generateSecretKey, getPublicKey } from 'nostr-tools/pure';
import type { StoreConnection } from '../store/connection.js';
import { migrate } from '../store/sqlite-migrations.js';

/**
 * The node's Nostr identity (docs/network.md): `NOSTR_NSEC` when the operator sets one, otherwise a key made
 * once and kept in the money store, so every process on that store and every restart sign with the same key.
 * The secret stays inside this object: it is never logged, put in settings or counted in a metric, and
 * `toJSON` leaves it out in case the object is ever serialised.
 */
export interface NodeIdentity {
  /** 32-byte secret key. */
  readonly secretKey: Uint8Array;
  /** x-only public key, hex. */
  readonly pubkey: string;
  readonly npub: string;
  /** Where the key came from. */
  readonly source: 'config' | 'store' | 'memory';
}

/** The secret's name in the store (SQLite table node_secrets; Redis key below). */
const SECRET_NAME = 'nostr_secret_key';

/** One key, no other key in its slot: a single-key command is cluster-safe; the tag keeps node keys together. */
export const nostrSecretRedisKey = (prefix: string) => `${prefix}:{node}:secret:${SECRET_NAME}`;

/**
 * Reads `NOSTR_NSEC`: an `nsec1…` (NIP-19) or 64 hex characters. Throws a message naming the variable and
 * never the value.
 */
export function parseNsec(value: string): Uint8Array {
  const v = value.trim();
  if (/^[0-9a-fA-F]{64}$/.test(v)) return checkKey(Uint8Array.from(Buffer.from(v, 'hex')));
  if (v.startsWith('nsec1')) {
    try {
      const decoded = nip19.decode(v);
      if (decoded.type === 'nsec') return checkKey(decoded.data);
    } catch {
      /* reported below without the value */
    }
  }
  throw new Error('NOSTR_NSEC must be an nsec1… key or 64 hex characters');
}

function checkKey(sk: Uint8Array): Uint8Array {
  try {
    getPublicKey(sk); // throws for 0 or a value outside the curve order
  } catch {
    throw new Error('NOSTR_NSEC is not a valid secp256k1 secret key');
  }
  return sk;
}

function identity(secretKey: Uint8Array, source: NodeIdentity['source']): NodeIdentity {
  const pubkey = getPublicKey(secretKey);
  const npub = nip19.npubEncode(pubkey);
  return {
    secretKey,
    pubkey,
    npub,
    source,
    toJSON: () => ({ pubkey, npub, source }),
  } as NodeIdentity;
}

/**
 * The node's identity: from `nsec` when given; else the store's key, created atomically by whichever process
 * comes first (Redis `SET NX GET`, SQLite `INSERT OR IGNORE`), so racing processes all end up with the same
 * one; without a store, a key for this process only.
 */
export async function loadNodeIdentity(
  store: StoreConnection | undefined,
  nsec: string | undefined,
): Promise<NodeIdentity> {
  if (nsec !== undefined && nsec !== '') return identity(parseNsec(nsec), 'config');
  if (store === undefined) return identity(generateSecretKey(), 'memory');
  const fresh = Buffer.from(generateSecretKey()).toString('hex');
  let hex: string;
  if (store.kind === 'redis') {
    // NX with GET answers the value already there (another process was first) or null (ours was stored).
    const before = (await store.redis.call('SET', nostrSecretRedisKey(store.prefix), fresh, 'NX', 'GET')) as
      | string
      | null;
    hex = before ?? fresh;
  } else {
    migrate(store.db);
    store.db
      .prepare('INSERT OR IGNORE INTO node_secrets (name, value, created_at) VALUES (?, ?, ?)')
      .run(SECRET_NAME, fresh, Date.now());
    const row = store.db.prepare('SELECT value FROM node_secrets WHERE name = ?').get(SECRET_NAME) as {
      value: string;
    };
    hex = row.value;
  }
  return identity(Uint8Array.from(Buffer.from(hex, 'hex')), 'store');
}
