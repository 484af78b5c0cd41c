import type { Cluster, Redis } from 'ioredis';
import { newId } from './sqlite-webhook-store.js';
import { originOf } from './ssrf.js';
import {
  type AlertSettings,
  type AttemptOutcome,
  type BalanceChange,
  type Delivery,
  type DeliveryLogEntry,
  type EventKey,
  type EventType,
  type RecentDelivery,
  utcDay,
  type Webhook,
  type WebhookStore,
} from './types.js';

/**
 * The Redis `WebhookStore`. Per account (hash tag `{a:<id>}`, the ledger's slot, so every script touches one
 * slot and runs unchanged on Cluster):
 *
 *   <p>:{a:<id>}:evhooks          hash  webhook id → webhook JSON (incl. the alert target `alert_<keyId>`)
 *   <p>:{a:<id>}:evkeys           hash  key id → watched-key JSON (alert settings, armed flag, day spend)
 *   <p>:{a:<id>}:evout            hash  delivery id → {msgId, webhookId, body, attempts}
 *   <p>:{a:<id>}:evdue            zset  delivery id → when it may be claimed (due time, or lease end)
 *   <p>:{a:<id>}:evlog:<hookId>   list  delivery-log entries, newest first, trimmed
 * Global (written before the account's first watched key, so no event can exist without them):
 *   <p>:{ev}:accounts             set   accounts with watched keys (the delivery worker visits them)
 *   <p>:{ev}:expiry               zset  "<accountId> <keyId>" → expiry ms (the key.expired sweep)
 *   <p>:{ev}:due                  zset  account id → its earliest due delivery (a hint, written after the
 *                                       account's script; the worker visits these, and every account with a
 *                                       watched key once per FULL_SCAN_MS in case a hint was lost in a crash)
 *
 * Crossing decisions and the deliveries they enqueue are one Lua script.
 */

const FIRE = `
local function fire(hooksKey, outKey, dueKey, accountId, keyId, parentKeyId, etype, data, now, nowIso, evtId)
  local n = 0
  local all = redis.call('HGETALL', hooksKey)
  data.key_id = keyId
  local body = cjson.encode({id = evtId, type = etype, created_at = nowIso, data = data})
  for i = 1, #all, 2 do
    local w = cjson.decode(all[i + 1])
    local match = false
    if not w.disabled then
      for _, e in ipairs(w.events) do if e == etype then match = true end end
    end
    if match and ((w.kind == 'webhook' and (w.keyId == keyId or w.keyId == parentKeyId)) or (w.kind == 'alert' and w.keyId == keyId)) then
      local did = evtId .. ':' .. w.id
      redis.call('HSET', outKey, did, cjson.encode({msgId = evtId, webhookId = w.id, body = body, attempts = 0}))
      redis.call('ZADD', dueKey, now, did)
      n = n + 1
    end
  end
  return n
end
-- Only a credit re-arms (rearm): a spend's reported balance can be stale (a credit lease's settle leaves out
-- other processes' calls), so a higher spend report must not re-arm, or the next drop would fire again.
local function balanceStep(K, row, accountId, balance, rearm, now, nowIso, evtId)
  if row.low == nil or row.low == cjson.null then return 0 end
  if balance < row.low and row.armed then
    row.armed = false
    return fire(K[1], K[3], K[4], accountId, row.keyId, row.parentKeyId, 'balance.low', {balance = balance, threshold = row.low}, now, nowIso, evtId)
  end
  if rearm and balance >= row.low and not row.armed then row.armed = true end
  return 0
end
`;

/**
 * KEYS: hooks, keys, out, due. ARGV: accountId, keyId, parentKeyId, charged, balance, now, nowIso, day,
 * evtIdBase, rearm ('1' = a credit: balance.low re-arms at or above the threshold).
 */
const SPEND = `${FIRE}
local accountId, keyId, parentKeyId = ARGV[1], ARGV[2], ARGV[3]
local charged, balance, now = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local nowIso, day, base = ARGV[7], ARGV[8], ARGV[9]
local rearm = ARGV[10] == '1'
local n, seq = 0, 0
local all = redis.call('HGETALL', KEYS[2])
for i = 1, #all, 2 do
  local row = cjson.decode(all[i + 1])
  seq = seq + 1
  n = n + balanceStep(KEYS, row, accountId, balance, rearm, now, nowIso, base .. 'b' .. seq)
  if charged > 0 and (row.keyId == keyId or row.keyId == parentKeyId) then
    local spent = charged
    if row.day == day then spent = row.daySpent + charged end
    row.day = day
    row.daySpent = spent
    if row.daily ~= nil and row.daily ~= cjson.null and row.dayFired ~= day and spent >= row.daily then
      row.dayFired = day
      n = n + fire(KEYS[1], KEYS[3], KEYS[4], accountId, row.keyId, row.parentKeyId, 'spend.daily_limit', {day = day, spent = spent, limit = row.daily}, now, nowIso, base .. 'd' .. seq)
    end
  end
  redis.call('HSET', KEYS[2], row.keyId, cjson.encode(row))
end
return n
`;

/** KEYS: hooks, keys, out, due. ARGV: accountId, keyId, now, nowIso, evtId. */
const EXPIRE = `${FIRE}
local raw = redis.call('HGET', KEYS[2], ARGV[2])
if not raw then return 0 end
local row = cjson.decode(raw)
if row.expiredFired or row.expiresAt == cjson.null or row.expiresAt == nil or row.expiresAt > tonumber(ARGV[3]) then return 0 end
row.expiredFired = true
redis.call('HSET', KEYS[2], row.keyId, cjson.encode(row))
local expiredAt = ARGV[6]
return fire(KEYS[1], KEYS[3], KEYS[4], ARGV[1], row.keyId, row.parentKeyId, 'key.expired', {expired_at = expiredAt}, tonumber(ARGV[3]), ARGV[4], ARGV[5])
`;

/** KEYS: keys. ARGV: keyJson (keyId, parentKeyId, expiresAt). Returns the row. */
const WATCH_FN = `
local function watch(keysKey, k)
  local raw = redis.call('HGET', keysKey, k.keyId)
  local row
  if raw then row = cjson.decode(raw) else
    row = {keyId = k.keyId, parentKeyId = k.parentKeyId, low = cjson.null, daily = cjson.null, armed = true, day = '', daySpent = 0, dayFired = '', expiredFired = false}
  end
  row.expiresAt = k.expiresAt
  return row
end
`;

/** KEYS: hooks, keys. ARGV: keyJson, hookJson. */
const CREATE = `${WATCH_FN}
local row = watch(KEYS[2], cjson.decode(ARGV[1]))
redis.call('HSET', KEYS[2], row.keyId, cjson.encode(row))
local hook = cjson.decode(ARGV[2])
redis.call('HSET', KEYS[1], hook.id, ARGV[2])
return 1
`;

/** KEYS: keys. ARGV: keyJson... (one account). */
const WATCH_KEYS = `${WATCH_FN}
for i = 1, #ARGV do
  local row = watch(KEYS[1], cjson.decode(ARGV[i]))
  redis.call('HSET', KEYS[1], row.keyId, cjson.encode(row))
end
return #ARGV
`;

/** KEYS: hooks, keys, out, due. ARGV: keyJson, low, daily, url, secret, now. */
const SET_ALERTS = `${WATCH_FN}
local row = watch(KEYS[2], cjson.decode(ARGV[1]))
local low = ARGV[2] == '' and cjson.null or tonumber(ARGV[2])
-- A new threshold is a new alert: armed (the old one's state says nothing about it).
if low ~= row.low then row.armed = true end
row.low = low
row.daily = ARGV[3] == '' and cjson.null or tonumber(ARGV[3])
redis.call('HSET', KEYS[2], row.keyId, cjson.encode(row))
local id = 'alert_' .. row.keyId
if ARGV[4] == '' then
  redis.call('HDEL', KEYS[1], id)
  return 1
end
local old = redis.call('HGET', KEYS[1], id)
local secret = ARGV[5]
local created = tonumber(ARGV[6])
if old then
  local o = cjson.decode(old)
  if secret == '' then secret = o.secret end
  created = o.createdAtMs
end
if secret == '' then return redis.error_reply('setAlerts: a new webhook_url needs a secret') end
local k = cjson.decode(ARGV[1])
redis.call('HSET', KEYS[1], id, cjson.encode({id = id, accountId = k.accountId, keyId = row.keyId, kind = 'alert', url = ARGV[4],
  events = {'balance.low', 'key.expired', 'spend.daily_limit'}, secret = secret, createdAtMs = created, disabled = false}))
return 1
`;

/** KEYS: hooks, out, due. ARGV: now, leaseMs, max. Returns [did, deliveryJson, url, secret]... */
const CLAIM = `
local now, lease = tonumber(ARGV[1]), tonumber(ARGV[2])
local ids = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, did in ipairs(ids) do
  local raw = redis.call('HGET', KEYS[2], did)
  local d = raw and cjson.decode(raw)
  local hraw = d and redis.call('HGET', KEYS[1], d.webhookId)
  local h = hraw and cjson.decode(hraw)
  if not d or not h or h.disabled then
    redis.call('HDEL', KEYS[2], did)
    redis.call('ZREM', KEYS[3], did)
  else
    redis.call('ZADD', KEYS[3], now + lease, did)
    table.insert(out, did)
    table.insert(out, raw)
    table.insert(out, h.url)
    table.insert(out, h.secret)
  end
end
local nxt = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
table.insert(out, nxt[2] or '')
return out
`;

/** KEYS: hooks, out, due, log. ARGV: did, webhookId, entryJson, mode (done|retry|disable), retryAt, keep. */
const FINISH = `
redis.call('LPUSH', KEYS[4], ARGV[3])
redis.call('LTRIM', KEYS[4], 0, tonumber(ARGV[6]) - 1)
local mode = ARGV[4]
if mode == 'disable' then
  local raw = redis.call('HGET', KEYS[1], ARGV[2])
  if raw then
    local h = cjson.decode(raw)
    h.disabled = true
    redis.call('HSET', KEYS[1], ARGV[2], cjson.encode(h))
  end
  local all = redis.call('HGETALL', KEYS[2])
  for i = 1, #all, 2 do
    if cjson.decode(all[i + 1]).webhookId == ARGV[2] then
      redis.call('HDEL', KEYS[2], all[i])
      redis.call('ZREM', KEYS[3], all[i])
    end
  end
elseif mode == 'done' then
  redis.call('HDEL', KEYS[2], ARGV[1])
  redis.call('ZREM', KEYS[3], ARGV[1])
else
  local raw = redis.call('HGET', KEYS[2], ARGV[1])
  if raw then
    local d = cjson.decode(raw)
    d.attempts = d.attempts + 1
    redis.call('HSET', KEYS[2], ARGV[1], cjson.encode(d))
    redis.call('ZADD', KEYS[3], tonumber(ARGV[5]), ARGV[1])
  end
end
return 1
`;

/** KEYS: hooks, log. ARGV: id, keyId. */
const DELETE = `
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
local h = cjson.decode(raw)
if h.kind ~= 'webhook' or h.keyId ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
return 1
`;

type Client = Redis | Cluster;

export const DELIVERY_LOG_KEEP_REDIS = 100;
/** Node-wide recent delivery attempts kept for the console. */
const RECENT_KEEP = 1000;
/** How often the worker visits every account with a watched key, not only the hinted ones. */
export const FULL_SCAN_MS = 30_000;

export class RedisWebhookStore implements WebhookStore {
  constructor(
    private readonly redis: Client,
    private readonly prefix: string,
  ) {}

  private k(accountId: string) {
    const b = `${this.prefix}:{a:${accountId}}:`;
    return {
      hooks: `${b}evhooks`,
      keys: `${b}evkeys`,
      out: `${b}evout`,
      due: `${b}evdue`,
      log: (id: string) => `${b}evlog:${id}`,
    };
  }
  private get accountsKey() {
    return `${this.prefix}:{ev}:accounts`;
  }
  private get dueKey() {
    return `${this.prefix}:{ev}:due`;
  }
  private lastFullScan = 0;

  /** Records that `accountId` has a delivery due at `at` (keeps the earlier time). */
  private async hint(accountId: string, at: number): Promise<void> {
    await this.redis.zadd(this.dueKey, 'LT', at, accountId);
  }

  private get expiryKey() {
    return `${this.prefix}:{ev}:expiry`;
  }

  private async registerGlobal(key: EventKey): Promise<void> {
    await this.redis.sadd(this.accountsKey, key.accountId);
    if (key.expiresAtMs !== null)
      await this.redis.zadd(this.expiryKey, key.expiresAtMs, `${key.accountId} ${key.keyId}`);
  }

  private keyJson(key: EventKey): string {
    return JSON.stringify({
      accountId: key.accountId,
      keyId: key.keyId,
      parentKeyId: key.parentKeyId ?? '',
      expiresAt: key.expiresAtMs,
    });
  }

  async createWebhook(
    key: EventKey,
    w: { url: string; events: EventType[]; secret: string; now?: number },
  ): Promise<Webhook> {
    const hook: Webhook = {
      id: newId('wh'),
      accountId: key.accountId,
      keyId: key.keyId,
      kind: 'webhook',
      url: w.url,
      events: [...new Set(w.events)],
      secret: w.secret,
      createdAtMs: w.now ?? Date.now(),
      disabled: false,
    };
    await this.registerGlobal(key);
    const k = this.k(key.accountId);
    await this.redis.eval(CREATE, 2, k.hooks, k.keys, this.keyJson(key), JSON.stringify(hook));
    return hook;
  }

  async watchKeys(keys: EventKey[]): Promise<void> {
    const byAccount = new Map<string, EventKey[]>();
    for (const k of keys) byAccount.set(k.accountId, [...(byAccount.get(k.accountId) ?? []), k]);
    for (const [accountId, ks] of byAccount) {
      for (const k of ks) await this.registerGlobal(k);
      await this.redis.eval(WATCH_KEYS, 1, this.k(accountId).keys, ...ks.map((k) => this.keyJson(k)));
    }
  }

  private async hooks(accountId: string): Promise<Webhook[]> {
    const all = await this.redis.hvals(this.k(accountId).hooks);
    return all.map((s) => JSON.parse(s) as Webhook);
  }

  async listWebhooks(accountId: string, keyId: string): Promise<Webhook[]> {
    return (await this.hooks(accountId))
      .filter((h) => h.kind === 'webhook' && h.keyId === keyId)
      .sort((a, b) => a.createdAtMs - b.createdAtMs || a.id.localeCompare(b.id));
  }

  async getWebhook(accountId: string, id: string): Promise<Webhook | null> {
    const raw = await this.redis.hget(this.k(accountId).hooks, id);
    return raw ? (JSON.parse(raw) as Webhook) : null;
  }

  async deleteWebhook(accountId: string, keyId: string, id: string): Promise<boolean> {
    const k = this.k(accountId);
    // Pending deliveries of a deleted webhook are dropped by the next claim.
    return (await this.redis.eval(DELETE, 2, k.hooks, k.log(id), id, keyId)) === 1;
  }

  async getAlerts(accountId: string, keyId: string): Promise<AlertSettings | null> {
    const k = this.k(accountId);
    const [row, hook] = await Promise.all([
      this.redis.hget(k.keys, keyId),
      this.redis.hget(k.hooks, `alert_${keyId}`),
    ]);
    if (!row) return null;
    const r = JSON.parse(row) as { low: number | null; daily: number | null };
    return {
      lowBalanceThresholdMsat: r.low ?? null,
      dailySpendLimitMsat: r.daily ?? null,
      webhookUrl: hook ? (JSON.parse(hook) as Webhook).url : null,
    };
  }

  async setAlerts(key: EventKey, s: AlertSettings, secret: string | null, now = Date.now()): Promise<void> {
    await this.registerGlobal(key);
    const k = this.k(key.accountId);
    await this.redis.eval(
      SET_ALERTS,
      4,
      k.hooks,
      k.keys,
      k.out,
      k.due,
      this.keyJson(key),
      s.lowBalanceThresholdMsat === null ? '' : String(s.lowBalanceThresholdMsat),
      s.dailySpendLimitMsat === null ? '' : String(s.dailySpendLimitMsat),
      s.webhookUrl ?? '',
      secret ?? '',
      String(now),
    );
  }

  private async spend(
    accountId: string,
    keyId: string,
    parentKeyId: string | null,
    charged: number,
    balance: number,
    rearm: boolean,
    now: number,
  ): Promise<number> {
    const k = this.k(accountId);
    const n = await this.redis.eval(
      SPEND,
      4,
      k.hooks,
      k.keys,
      k.out,
      k.due,
      accountId,
      keyId,
      parentKeyId ?? '',
      String(charged),
      String(balance),
      String(now),
      new Date(now).toISOString(),
      utcDay(now),
      newId('evt'),
      rearm ? '1' : '0',
    );
    if (Number(n) > 0) await this.hint(accountId, now);
    return Number(n);
  }

  async onSpend(
    key: Pick<EventKey, 'accountId' | 'keyId' | 'parentKeyId'>,
    chargedMsat: number,
    balanceMsat: number,
    now = Date.now(),
  ): Promise<number> {
    return this.spend(key.accountId, key.keyId, key.parentKeyId, chargedMsat, balanceMsat, false, now);
  }

  async onBalance(
    accountId: string,
    balanceMsat: number,
    change: BalanceChange,
    now = Date.now(),
  ): Promise<number> {
    return this.spend(accountId, '', null, 0, balanceMsat, change === 'credit', now);
  }

  async sweepExpired(now = Date.now(), max = 100): Promise<number> {
    const due = await this.redis.zrangebyscore(this.expiryKey, '-inf', now, 'WITHSCORES', 'LIMIT', 0, max);
    let n = 0;
    for (let i = 0; i < due.length; i += 2) {
      const member = due[i]!;
      const [accountId, keyId] = member.split(' ') as [string, string];
      const k = this.k(accountId);
      const fired = Number(
        await this.redis.eval(
          EXPIRE,
          4,
          k.hooks,
          k.keys,
          k.out,
          k.due,
          accountId,
          keyId,
          String(now),
          new Date(now).toISOString(),
          newId('evt'),
          new Date(Number(due[i + 1])).toISOString(),
        ),
      );
      if (fired > 0) await this.hint(accountId, now);
      n += fired;
      await this.redis.zrem(this.expiryKey, member);
    }
    return n;
  }

  async claimDue(now: number, leaseMs: number, max: number): Promise<Delivery[]> {
    let accounts: string[];
    if (Date.now() - this.lastFullScan >= FULL_SCAN_MS) {
      this.lastFullScan = Date.now();
      accounts = await this.redis.smembers(this.accountsKey);
    } else {
      accounts = await this.redis.zrangebyscore(this.dueKey, '-inf', now, 'LIMIT', 0, 1000);
    }
    const out: Delivery[] = [];
    for (const accountId of accounts) {
      if (out.length >= max) break;
      const k = this.k(accountId);
      const r = (await this.redis.eval(
        CLAIM,
        3,
        k.hooks,
        k.out,
        k.due,
        String(now),
        String(leaseMs),
        String(max - out.length),
      )) as string[];
      // The last element: the account's next due time after this claim ('' = nothing left).
      const next = r.pop();
      if (next === '' || next === undefined) await this.redis.zrem(this.dueKey, accountId);
      else await this.redis.zadd(this.dueKey, Number(next), accountId);
      for (let i = 0; i < r.length; i += 4) {
        const d = JSON.parse(r[i + 1]!) as {
          msgId: string;
          webhookId: string;
          body: string;
          attempts: number;
        };
        out.push({
          id: r[i]!,
          accountId,
          webhookId: d.webhookId,
          msgId: d.msgId,
          url: r[i + 2]!,
          secret: r[i + 3]!,
          body: d.body,
          attempts: d.attempts,
        });
      }
    }
    return out;
  }

  async finishAttempt(d: Delivery, o: AttemptOutcome): Promise<void> {
    const k = this.k(d.accountId);
    const entry = JSON.stringify({ attempt: d.attempts + 1, atMs: o.atMs, status: o.status, error: o.error });
    const mode = o.disable ? 'disable' : o.retryAtMs === null ? 'done' : 'retry';
    await this.redis.eval(
      FINISH,
      4,
      k.hooks,
      k.out,
      k.due,
      k.log(d.webhookId),
      d.id,
      d.webhookId,
      entry,
      mode,
      String(o.retryAtMs ?? 0),
      String(DELIVERY_LOG_KEEP_REDIS),
    );
    if (mode === 'retry') await this.hint(d.accountId, o.retryAtMs!);
    // The console's node-wide list (its own key: outside the account's slot, so not in the script). Best effort.
    const recent = JSON.stringify({ accountId: d.accountId, webhookId: d.webhookId, ...JSON.parse(entry) });
    await this.redis
      .multi()
      .lpush(this.recentKey, recent)
      .ltrim(this.recentKey, 0, RECENT_KEEP - 1)
      .exec()
      .catch(() => undefined);
  }

  private get recentKey(): string {
    return `${this.prefix}:{evrecent}:deliveries`;
  }

  async listRecentDeliveries(limit: number, failedOnly: boolean): Promise<RecentDelivery[]> {
    const raw = await this.redis.lrange(this.recentKey, 0, RECENT_KEEP - 1);
    const out: RecentDelivery[] = [];
    const hooks = new Map<string, Webhook | null>();
    for (const s of raw) {
      if (out.length >= limit) break;
      const e = JSON.parse(s) as DeliveryLogEntry & { accountId: string; webhookId: string };
      if (failedOnly && e.status !== null && e.status >= 200 && e.status < 300) continue;
      const id = `${e.accountId} ${e.webhookId}`;
      if (!hooks.has(id)) hooks.set(id, await this.getWebhook(e.accountId, e.webhookId));
      const w = hooks.get(id) ?? null;
      out.push({
        attempt: e.attempt,
        atMs: e.atMs,
        status: e.status,
        error: e.error,
        accountId: e.accountId,
        webhookId: e.webhookId,
        keyId: w?.keyId ?? null,
        kind: w?.kind ?? null,
        origin: w ? originOf(w.url) : null,
      });
    }
    return out;
  }

  async listDeliveries(accountId: string, webhookId: string, limit: number): Promise<DeliveryLogEntry[]> {
    const raw = await this.redis.lrange(this.k(accountId).log(webhookId), 0, limit - 1);
    return raw.map((s) => JSON.parse(s) as DeliveryLogEntry);
  }

  async hasWatchedKeys(accountId: string): Promise<boolean> {
    return (await this.redis.exists(this.k(accountId).keys)) === 1;
  }

  async close(): Promise<void> {}
}
