import { join } from 'node:path';
import type { Cluster, Redis } from 'ioredis';
import {
  defineScriptSet,
  type LoadedScript,
  loadScriptFiles,
  type ScriptRunner,
  scriptDirOf,
} from '../store/lua-scripts.js';
import { originOf } from './ssrf.js';
import {
  type AlertSettings,
  type AttemptOutcome,
  type BalanceChange,
  type Delivery,
  type DeliveryLogEntry,
  type EventKey,
  type EventType,
  newId,
  newWebhook,
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
 *   <p>:{a:<id>}:evdue            zset  delivery id → when it may be claimed (due time, or claim end)
 *   <p>:{a:<id>}:evlog:<hookId>   list  delivery-log entries, newest first, trimmed
 * Global (written before the account's first watched key, so no event can exist without them):
 *   <p>:{ev}:accounts             set   accounts with watched keys (the delivery worker visits them)
 *   <p>:{ev}:expiry               zset  "<accountId> <keyId>" → expiry ms (the key.expired sweep)
 *   <p>:{ev}:due                  zset  account id → its earliest due delivery (a hint, written after the
 *                                       account's script; the worker visits these, and every account with a
 *                                       watched key once per FULL_SCAN_MS in case a hint was lost in a crash)
 *
 * Crossing decisions and the deliveries they enqueue are one Lua script (core/events/redis/*.lua).
 */

/** The webhook store's Lua scripts (core/events/redis/*.lua, KEYS/ARGV headers), loaded once per process. */
const SCRIPT_FILES = [
  'spend-4',
  'expire-4',
  'create-webhook-2',
  'watch-keys-1',
  'set-alerts-2',
  'claim-3',
  'finish-delivery-4',
  'delete-webhook-2',
  'fire-event-3',
] as const;
type ScriptName =
  | 'spend'
  | 'expire'
  | 'create-webhook'
  | 'watch-keys'
  | 'set-alerts'
  | 'claim'
  | 'finish-delivery'
  | 'delete-webhook'
  | 'fire-event';
/** Bumped when the stored shape changes (script names carry it). */
const EVENTS_SCRIPT_VERSION = 1;
let scripts: Map<ScriptName, LoadedScript> | undefined;
function loadEventScripts(): Map<ScriptName, LoadedScript> {
  scripts ??= loadScriptFiles<ScriptName>({
    dir: join(scriptDirOf(import.meta.url, join('redis', 'spend-4.lua')), 'redis'),
    files: SCRIPT_FILES,
    prefix: 'gwEvents',
    version: EVENTS_SCRIPT_VERSION,
  });
  return scripts;
}

type Client = Redis | Cluster;

export const DELIVERY_LOG_KEEP_REDIS = 100;
/** Node-wide recent delivery attempts kept for the console. */
const RECENT_KEEP = 1000;
/** How often the worker visits every account with a watched key, not only the hinted ones. */
export const FULL_SCAN_MS = 30_000;

export class RedisWebhookStore implements WebhookStore {
  private readonly run: ScriptRunner<ScriptName>;

  constructor(
    private readonly redis: Client,
    private readonly prefix: string,
  ) {
    this.run = defineScriptSet(redis, loadEventScripts());
  }

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
    const hook = newWebhook(key, w);
    await this.registerGlobal(key);
    const k = this.k(key.accountId);
    await this.run('create-webhook', [k.hooks, k.keys], [this.keyJson(key), JSON.stringify(hook)]);
    return hook;
  }

  async watchKeys(keys: EventKey[]): Promise<void> {
    const byAccount = new Map<string, EventKey[]>();
    for (const k of keys) byAccount.set(k.accountId, [...(byAccount.get(k.accountId) ?? []), k]);
    for (const [accountId, ks] of byAccount) {
      for (const k of ks) await this.registerGlobal(k);
      await this.run(
        'watch-keys',
        [this.k(accountId).keys],
        ks.map((k) => this.keyJson(k)),
      );
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
    return (await this.run('delete-webhook', [k.hooks, k.log(id)], [id, keyId])) === 1;
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
    await this.run(
      'set-alerts',
      [k.hooks, k.keys],
      [
        this.keyJson(key),
        s.lowBalanceThresholdMsat === null ? '' : String(s.lowBalanceThresholdMsat),
        s.dailySpendLimitMsat === null ? '' : String(s.dailySpendLimitMsat),
        s.webhookUrl ?? '',
        secret ?? '',
        String(now),
      ],
    );
  }

  async onEvent(
    key: Pick<EventKey, 'accountId' | 'keyId' | 'parentKeyId'>,
    type: EventType,
    eventId: string,
    data: Record<string, unknown>,
    now = Date.now(),
  ): Promise<number> {
    const k = this.k(key.accountId);
    const n = Number(
      await this.run(
        'fire-event',
        [k.hooks, k.out, k.due],
        [
          key.accountId,
          key.keyId,
          key.parentKeyId ?? '',
          type,
          JSON.stringify(data),
          String(now),
          new Date(now).toISOString(),
          eventId,
        ],
      ),
    );
    if (n > 0) await this.hint(key.accountId, now);
    return n;
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
    const n = await this.run(
      'spend',
      [k.hooks, k.keys, k.out, k.due],
      [
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
      ],
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
        await this.run(
          'expire',
          [k.hooks, k.keys, k.out, k.due],
          [
            accountId,
            keyId,
            String(now),
            new Date(now).toISOString(),
            newId('evt'),
            new Date(Number(due[i + 1])).toISOString(),
          ],
        ),
      );
      if (fired > 0) await this.hint(accountId, now);
      n += fired;
      await this.redis.zrem(this.expiryKey, member);
    }
    return n;
  }

  async claimDue(now: number, claimMs: number, max: number): Promise<Delivery[]> {
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
      const r = (await this.run(
        'claim',
        [k.hooks, k.out, k.due],
        [String(now), String(claimMs), String(max - out.length)],
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
    await this.run(
      'finish-delivery',
      [k.hooks, k.out, k.due, k.log(d.webhookId)],
      [d.id, d.webhookId, entry, mode, String(o.retryAtMs ?? 0), String(DELIVERY_LOG_KEEP_REDIS)],
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
