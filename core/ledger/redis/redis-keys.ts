import { type KeyState, newKeyState } from '../rules.js';
import type { BalanceLimitReset } from '../types.js';

/**
 * Redis key layout. Every key of one account carries the hash tag `{a:<accountId>}` so all of them live in
 * one slot and each script touches one slot (Redis Cluster runs them unchanged):
 *
 *   <p>:{a:<id>}:acct   hash   balance, reserved, deposited, spent, withdrawn, fees, requests, created,
 *                              deleted, txseq, origin, nsw (lower bound of the next reservation expiry)
 *                              + keyHash → that key's usage counters packed in one field (see KST)
 *   <p>:{a:<id>}:keys   hash   keyHash → metadata JSON (numbers as strings)
 *   <p>:{a:<id>}:res    hash   requestId/holdId → reservation JSON (kind, status, amount, key, expiry, result)
 *   <p>:{a:<id>}:lease  zset   open reservation ids by expiry (the expiry set)
 *   <p>:{a:<id>}:fin    zset   finished reservation ids by finish time (bounded forgetting)
 *   <p>:{a:<id>}:cred   hash   credited tokenHash → transaction id (credit-once, account half)
 *   <p>:{a:<id>}:tx     list   transactions, newest first, trimmed to the retention
 *   <p>:{a:<id>}:audit-log  stream  the account's audit records (core/audit/audit-log.ts): written by settle and
 *                              lease steps with the charge, and by the audit log's own batches; trimmed by age
 *   <p>:{t:<tokenHash>}:claim  string  owning account id (credit-once, global half)
 *   <p>:{meta}:secret   string  server secret for deposit-derived keys
 *   <p>:{meta}:kid      hash    key id → "<accountId> <keyHash>" (the console's lookup by key id; written after
 *                              a key is created, best effort — a miss falls back to the account index)
 *   <p>:{meta}:accounts set    every account id, added BEFORE the credit that may create the account (so it is
 *                              never short of one; an id whose credit was refused reads as an empty account).
 *                              Sums, audits and sweeps walk it instead of SCANning the whole keyspace, so their
 *                              cost is the gateway's accounts, not whatever else shares the Redis.
 *   <p>:{meta}:accounts-complete  string  set once the index holds every account: at the store's first start
 *                              (a new secret: no account can exist yet), or after a store from before the index
 *                              was scanned once (redis-reads.ts `accountIds`)
 *   <p>:{audit}:accounts  zset  accounts with audit records, by when a writer last confirmed them (audit-index.ts)
 *   <p>:{audit}:node    stream  audit records of no account (admin changes, unknown keys)
 *
 * Layout version 3 (LEDGER_SCRIPT_VERSION): version 1 kept key counters as one field per counter in a
 * separate `kst` hash; version 2 kept a count-capped `audit` list and an `auditseq` field per account (the
 * ledger's own audit trail, gone: the audit log's stream is the only one). A version-2 store runs unchanged:
 * its old lists and fields are left alone: nothing reads them (delete `<p>:{a:*}:audit` at leisure). A store
 * from before the account index (`{meta}:accounts`) is scanned once by the first process that needs the index;
 * an older process still running after that adds no ids, so upgrade every process of a store together.
 */
export interface AccountKeys {
  acct: string;
  keys: string;
  res: string;
  expiry: string;
  fin: string;
  cred: string;
  tx: string;
  auditLog: string;
}

export function accountKeys(prefix: string, accountId: string): AccountKeys {
  const b = `${prefix}:{a:${accountId}}:`;
  return {
    acct: `${b}acct`,
    keys: `${b}keys`,
    res: `${b}res`,
    expiry: `${b}lease`, // stored name kept (layout 1-3): the reservation expiry set
    fin: `${b}fin`,
    cred: `${b}cred`,
    tx: `${b}tx`,
    auditLog: `${b}audit-log`,
  };
}

export function claimKey(prefix: string, tokenHash: string): string {
  return `${prefix}:{t:${tokenHash}}:claim`;
}

export function keyIdIndexKey(prefix: string): string {
  return `${prefix}:{meta}:kid`;
}

/** Accounts with audit records (core/ledger/redis/audit-index.ts). */
export function auditIndexKey(prefix: string): string {
  return `${prefix}:{audit}:accounts`;
}

/** Audit records of no account: admin changes and failed logins, requests naming an unknown key. */
export function auditNodeKey(prefix: string): string {
  return `${prefix}:{audit}:node`;
}

/** Every account id of the store (see the layout above). */
export function accountIndexKey(prefix: string): string {
  return `${prefix}:{meta}:accounts`;
}

/** Present once `accountIndexKey` holds every account. */
export function accountIndexCompleteKey(prefix: string): string {
  return `${prefix}:{meta}:accounts-complete`;
}

export function secretKey(prefix: string): string {
  return `${prefix}:{meta}:secret`;
}

/** Account id inside a key name `<p>:{a:<id>}:…`. */
export function accountIdFromKey(key: string): string | null {
  const m = /\{a:([^}]+)\}/.exec(key);
  return m ? m[1]! : null;
}

interface MetaJson {
  child?: '1';
  parent?: string;
  disp: string;
  name?: string;
  ips?: string[];
  models?: string[];
  ref?: string;
  exp?: string;
  lim?: string;
  lr?: BalanceLimitReset;
  vd?: string;
  cr: string;
  del?: '1';
  /** Disabled by the operator (update-key-2.lua also marks a parent's account). */
  dis?: '1';
}

/** Metadata as the scripts store it: absent = null, numbers as strings, empty lists as absent. */
export function encodeMeta(k: KeyState): string {
  const m: MetaJson = { disp: k.display, cr: String(k.createdAt) };
  if (k.isChild) m.child = '1';
  if (k.parentHash) m.parent = k.parentHash;
  if (k.name !== null) m.name = k.name;
  if (k.allowedIps !== null && k.allowedIps.length > 0) m.ips = k.allowedIps;
  if (k.allowedModels !== null && k.allowedModels.length > 0) m.models = k.allowedModels;
  if (k.refundAddress !== null) m.ref = k.refundAddress;
  if (k.expiresAt !== null) m.exp = String(k.expiresAt);
  if (k.balanceLimit !== null) m.lim = String(k.balanceLimit);
  if (k.balanceLimitReset !== null) m.lr = k.balanceLimitReset;
  if (k.validityDate !== null) m.vd = String(k.validityDate);
  if (k.deleted) m.del = '1';
  if (k.disabled) m.dis = '1';
  return JSON.stringify(m);
}

const num = (v: string | undefined): number | null => (v === undefined ? null : Number(v));
/** cjson encodes an empty Lua table as {}: treat anything that is not a non-empty array as "any". */
const list = (v: unknown): string[] | null => (Array.isArray(v) && v.length > 0 ? (v as string[]) : null);

/** Usage counters, in the order they are packed into the key's field of the acct hash (includes/key.lua). */
const KST = ['r', 'o', 'pi', 'ps', 'ts', 'tr', 'lu', 'rw', 'rc', 'tw', 'tc'] as const;

/** `acct` is the account hash (its field keyHash holds the packed counters); absent = all zero. */
export function decodeKey(
  hash: string,
  accountId: string,
  raw: string,
  acct: Map<string, string> = new Map(),
): KeyState {
  const m = JSON.parse(raw) as MetaJson;
  const packed = acct.get(hash)?.split(',') ?? [];
  const c = (f: (typeof KST)[number]): number => Number(packed[KST.indexOf(f)] ?? 0);
  const lastUsed = c('lu');
  return newKeyState({
    hash,
    accountId,
    display: m.disp,
    createdAt: Number(m.cr),
    isChild: m.child === '1',
    parentHash: m.parent ?? null,
    name: m.name ?? null,
    allowedIps: list(m.ips),
    allowedModels: list(m.models),
    refundAddress: m.ref ?? null,
    expiresAt: num(m.exp),
    balanceLimit: num(m.lim),
    balanceLimitReset: m.lr ?? null,
    validityDate: num(m.vd),
    deleted: m.del === '1',
    disabled: m.dis === '1',
    reserved: c('r'),
    open: c('o'),
    periodId: c('pi'),
    periodSpent: c('ps'),
    totalSpent: c('ts'),
    totalRequests: c('tr'),
    lastUsed: lastUsed === 0 ? null : lastUsed,
    rpmWindow: c('rw'),
    rpmCount: c('rc'),
    tphWindow: c('tw'),
    tphCount: c('tc'),
  });
}

/** A flat HGETALL reply as a map. */
export function flatToMap(flat: unknown): Map<string, string> {
  const m = new Map<string, string>();
  const a = flat as string[];
  for (let i = 0; i + 1 < a.length; i += 2) m.set(a[i]!, a[i + 1]!);
  return m;
}
