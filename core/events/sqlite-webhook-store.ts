import type Database from 'libsql';
import { GatewayError } from '../errors.js';
import { migrate } from '../store/sqlite-migrations.js';
import { statementCache } from '../store/statement-cache.js';
import { originOf } from './ssrf.js';
import {
  type AlertSettings,
  type AttemptOutcome,
  type BalanceChange,
  type Delivery,
  type DeliveryLogEntry,
  type EventKey,
  type EventType,
  eventBody,
  newId,
  newWebhook,
  type RecentDelivery,
  utcDay,
  type Webhook,
  type WebhookStore,
} from './types.js';

/**
 * The SQLite `WebhookStore`: tables `ev_*` in the ledger's database file, every change one `BEGIN IMMEDIATE`
 * transaction (so a crossing decision and the deliveries it enqueues are one step, across processes sharing
 * the file). The tables come from the database's migrations (core/store/sqlite-migrations.ts), applied at open.
 */

/** Delivery-log entries kept per webhook. */
export const DELIVERY_LOG_KEEP = 100;

interface KeyRow {
  key_id: string;
  parent_key_id: string | null;
  low: number | null;
  daily: number | null;
  armed: number;
  day: string;
  day_spent: number;
  day_fired: string;
}

function toWebhook(r: Record<string, unknown>): Webhook {
  return {
    id: r.id as string,
    accountId: r.account_id as string,
    keyId: r.key_id as string,
    kind: r.kind as Webhook['kind'],
    url: r.url as string,
    events: JSON.parse(r.events as string) as EventType[],
    secret: r.secret as string,
    createdAtMs: r.created_at as number,
    disabled: r.disabled === 1,
  };
}

export class SqliteWebhookStore implements WebhookStore {
  /** Prepared statements by SQL text: a statement is compiled once per connection, not on every call. */
  private readonly q: (sql: string) => Database.Statement;

  constructor(private readonly db: Database.Database) {
    migrate(db);
    this.q = statementCache(db);
  }

  private tx<T>(fn: () => T): T {
    try {
      this.db.exec('BEGIN IMMEDIATE');
    } catch (err) {
      throw new GatewayError('store_unavailable', { cause: err });
    }
    try {
      const out = fn();
      this.db.exec('COMMIT');
      return out;
    } catch (err) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw err;
    }
  }

  private watch(key: EventKey): void {
    this.q(
      `INSERT INTO ev_keys (key_id, account_id, parent_key_id, expires_at) VALUES (?, ?, ?, ?)
         ON CONFLICT(key_id) DO UPDATE SET expires_at = excluded.expires_at`,
    ).run(key.keyId, key.accountId, key.parentKeyId, key.expiresAtMs);
  }

  async createWebhook(
    key: EventKey,
    w: { url: string; events: EventType[]; secret: string; now?: number },
  ): Promise<Webhook> {
    const hook = newWebhook(key, w);
    this.tx(() => {
      this.watch(key);
      this.q(
        'INSERT INTO ev_webhooks (id, account_id, key_id, kind, url, events, secret, created_at) VALUES (?,?,?,?,?,?,?,?)',
      ).run(
        hook.id,
        hook.accountId,
        hook.keyId,
        hook.kind,
        hook.url,
        JSON.stringify(hook.events),
        hook.secret,
        hook.createdAtMs,
      );
    });
    return hook;
  }

  async listWebhooks(accountId: string, keyId: string): Promise<Webhook[]> {
    const rows = this.q(
      `SELECT * FROM ev_webhooks WHERE account_id = ? AND key_id = ? AND kind = 'webhook' ORDER BY created_at, id`,
    ).all(accountId, keyId) as Record<string, unknown>[];
    return rows.map(toWebhook);
  }

  async getWebhook(accountId: string, id: string): Promise<Webhook | null> {
    const r = this.q('SELECT * FROM ev_webhooks WHERE account_id = ? AND id = ?').get(accountId, id) as
      | Record<string, unknown>
      | undefined;
    return r ? toWebhook(r) : null;
  }

  async deleteWebhook(accountId: string, keyId: string, id: string): Promise<boolean> {
    return this.tx(() => {
      const r = this.q(
        `DELETE FROM ev_webhooks WHERE account_id = ? AND key_id = ? AND id = ? AND kind = 'webhook'`,
      ).run(accountId, keyId, id);
      if (r.changes === 0) return false;
      this.q('DELETE FROM ev_outbox WHERE webhook_id = ?').run(id);
      this.q('DELETE FROM ev_delivery_log WHERE webhook_id = ?').run(id);
      return true;
    });
  }

  async watchKeys(keys: EventKey[]): Promise<void> {
    if (keys.length === 0) return;
    this.tx(() => {
      for (const k of keys) this.watch(k);
    });
  }

  async getAlerts(accountId: string, keyId: string): Promise<AlertSettings | null> {
    const r = this.q('SELECT low, daily FROM ev_keys WHERE account_id = ? AND key_id = ?').get(
      accountId,
      keyId,
    ) as { low: number | null; daily: number | null } | undefined;
    if (!r) return null;
    const hook = this.q(`SELECT url FROM ev_webhooks WHERE id = ? AND account_id = ?`).get(
      `alert_${keyId}`,
      accountId,
    ) as { url: string } | undefined;
    return { lowBalanceThresholdMsat: r.low, dailySpendLimitMsat: r.daily, webhookUrl: hook?.url ?? null };
  }

  async setAlerts(key: EventKey, s: AlertSettings, secret: string | null, now = Date.now()): Promise<void> {
    this.tx(() => {
      this.watch(key);
      this.q(
        // A new threshold is a new alert: armed (the old one's state says nothing about it).
        'UPDATE ev_keys SET armed = CASE WHEN low IS ? THEN armed ELSE 1 END, low = ?, daily = ? WHERE key_id = ?',
      ).run(s.lowBalanceThresholdMsat, s.lowBalanceThresholdMsat, s.dailySpendLimitMsat, key.keyId);
      const id = `alert_${key.keyId}`;
      if (s.webhookUrl === null) {
        this.q('DELETE FROM ev_webhooks WHERE id = ?').run(id);
        this.q('DELETE FROM ev_outbox WHERE webhook_id = ?').run(id);
        return;
      }
      const old = this.q('SELECT url, secret FROM ev_webhooks WHERE id = ?').get(id) as
        | { url: string; secret: string }
        | undefined;
      const useSecret = secret ?? old?.secret;
      if (useSecret === undefined) throw new Error('setAlerts: a new webhook_url needs a secret');
      this.q(
        `INSERT INTO ev_webhooks (id, account_id, key_id, kind, url, events, secret, created_at)
           VALUES (?, ?, ?, 'alert', ?, ?, ?, ?)
           ON CONFLICT(id) DO UPDATE SET url = excluded.url, secret = excluded.secret, disabled = 0`,
      ).run(
        id,
        key.accountId,
        key.keyId,
        s.webhookUrl,
        JSON.stringify(['balance.low', 'key.expired', 'spend.daily_limit']),
        useSecret,
        now,
      );
    });
  }

  async onEvent(
    key: Pick<EventKey, 'accountId' | 'keyId' | 'parentKeyId'>,
    type: EventType,
    eventId: string,
    data: Record<string, unknown>,
    now = Date.now(),
  ): Promise<number> {
    return this.tx(() => {
      // A replay of the same event (a settlement resumed after a crash) enqueues nothing new.
      const seen = this.q('SELECT 1 FROM ev_outbox WHERE msg_id = ? LIMIT 1').get(eventId);
      if (seen) return 0;
      return this.fire(key.accountId, key.keyId, key.parentKeyId, type, data, now, eventId);
    });
  }

  /** Inside a transaction: enqueue one event to every target. */
  private fire(
    accountId: string,
    keyId: string,
    parentKeyId: string | null,
    type: EventType,
    data: Record<string, unknown>,
    now: number,
    eventId?: string,
  ): number {
    const targets = this.q(
      `SELECT id FROM ev_webhooks WHERE account_id = ? AND disabled = 0 AND instr(events, ?) > 0
           AND ((kind = 'webhook' AND (key_id = ? OR key_id = ?)) OR (kind = 'alert' AND key_id = ?))`,
    ).all(accountId, `"${type}"`, keyId, parentKeyId ?? keyId, keyId) as { id: string }[];
    const msgId = eventId ?? newId('evt');
    const body = eventBody(msgId, type, now, { key_id: keyId, ...data });
    const ins = this.q(
      'INSERT INTO ev_outbox (msg_id, webhook_id, account_id, body, next_at) VALUES (?,?,?,?,?)',
    );
    for (const t of targets) ins.run(msgId, t.id, accountId, body, now);
    return targets.length;
  }

  /**
   * Inside a transaction: balance.low for one watched key. Only a credit re-arms (`rearm`): a spend's reported
   * balance can be stale (a credit lease's settle leaves out other processes' calls), so a higher spend
   * report must not re-arm, or the next drop would fire again.
   */
  private balanceStep(
    accountId: string,
    row: KeyRow,
    balanceMsat: number,
    rearm: boolean,
    now: number,
  ): number {
    if (row.low === null) return 0;
    if (balanceMsat < row.low && row.armed === 1) {
      this.q('UPDATE ev_keys SET armed = 0 WHERE key_id = ?').run(row.key_id);
      return this.fire(
        accountId,
        row.key_id,
        row.parent_key_id,
        'balance.low',
        { balance: balanceMsat, threshold: row.low },
        now,
      );
    }
    if (rearm && balanceMsat >= row.low && row.armed === 0) {
      this.q('UPDATE ev_keys SET armed = 1 WHERE key_id = ?').run(row.key_id);
    }
    return 0;
  }

  private rows(accountId: string): KeyRow[] {
    return this.q(
      'SELECT key_id, parent_key_id, low, daily, armed, day, day_spent, day_fired FROM ev_keys WHERE account_id = ?',
    ).all(accountId) as KeyRow[];
  }

  async onSpend(
    key: Pick<EventKey, 'accountId' | 'keyId' | 'parentKeyId'>,
    chargedMsat: number,
    balanceMsat: number,
    now = Date.now(),
  ): Promise<number> {
    return this.tx(() => {
      let n = 0;
      const day = utcDay(now);
      for (const row of this.rows(key.accountId)) {
        n += this.balanceStep(key.accountId, row, balanceMsat, false, now);
        if (chargedMsat <= 0 || (row.key_id !== key.keyId && row.key_id !== key.parentKeyId)) continue;
        const spent = (row.day === day ? row.day_spent : 0) + chargedMsat;
        const fire = row.daily !== null && row.day_fired !== day && spent >= row.daily;
        this.q('UPDATE ev_keys SET day = ?, day_spent = ?, day_fired = ? WHERE key_id = ?').run(
          day,
          spent,
          fire ? day : row.day_fired,
          row.key_id,
        );
        if (fire) {
          n += this.fire(
            key.accountId,
            row.key_id,
            row.parent_key_id,
            'spend.daily_limit',
            { day, spent: spent, limit: row.daily },
            now,
          );
        }
      }
      return n;
    });
  }

  async onBalance(
    accountId: string,
    balanceMsat: number,
    change: BalanceChange,
    now = Date.now(),
  ): Promise<number> {
    return this.tx(() => {
      let n = 0;
      const rearm = change === 'credit';
      for (const row of this.rows(accountId)) n += this.balanceStep(accountId, row, balanceMsat, rearm, now);
      return n;
    });
  }

  async sweepExpired(now = Date.now(), max = 100): Promise<number> {
    return this.tx(() => {
      const due = this.q(
        'SELECT key_id, account_id, parent_key_id, expires_at FROM ev_keys WHERE expired_fired = 0 AND expires_at IS NOT NULL AND expires_at <= ? LIMIT ?',
      ).all(now, max) as {
        key_id: string;
        account_id: string;
        parent_key_id: string | null;
        expires_at: number;
      }[];
      let n = 0;
      for (const r of due) {
        this.q('UPDATE ev_keys SET expired_fired = 1 WHERE key_id = ?').run(r.key_id);
        n += this.fire(
          r.account_id,
          r.key_id,
          r.parent_key_id,
          'key.expired',
          { expired_at: new Date(r.expires_at).toISOString() },
          now,
        );
      }
      return n;
    });
  }

  async claimDue(now: number, claimMs: number, max: number): Promise<Delivery[]> {
    return this.tx(() => {
      const rows = this.q(
        `SELECT o.id, o.msg_id, o.webhook_id, o.account_id, o.body, o.attempts, w.url, w.secret
             FROM ev_outbox o JOIN ev_webhooks w ON w.id = o.webhook_id
            WHERE o.next_at <= ? AND o.lease_until <= ? AND w.disabled = 0 ORDER BY o.next_at LIMIT ?`,
      ).all(now, now, max) as Record<string, unknown>[];
      const claim = this.q('UPDATE ev_outbox SET lease_until = ? WHERE id = ?');
      for (const r of rows) claim.run(now + claimMs, r.id);
      return rows.map((r) => ({
        id: String(r.id),
        accountId: r.account_id as string,
        webhookId: r.webhook_id as string,
        msgId: r.msg_id as string,
        url: r.url as string,
        secret: r.secret as string,
        body: r.body as string,
        attempts: r.attempts as number,
      }));
    });
  }

  async finishAttempt(d: Delivery, o: AttemptOutcome): Promise<void> {
    this.tx(() => {
      this.q(
        'INSERT INTO ev_delivery_log (webhook_id, msg_id, attempt, at, status, error) VALUES (?,?,?,?,?,?)',
      ).run(d.webhookId, d.msgId, d.attempts + 1, o.atMs, o.status, o.error);
      this.q(
        'DELETE FROM ev_delivery_log WHERE webhook_id = ? AND id <= (SELECT id FROM ev_delivery_log WHERE webhook_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)',
      ).run(d.webhookId, d.webhookId, DELIVERY_LOG_KEEP);
      if (o.disable) {
        this.q('UPDATE ev_webhooks SET disabled = 1 WHERE id = ?').run(d.webhookId);
        this.q('DELETE FROM ev_outbox WHERE webhook_id = ?').run(d.webhookId);
      } else if (o.retryAtMs === null) {
        this.q('DELETE FROM ev_outbox WHERE id = ?').run(Number(d.id));
      } else {
        this.q('UPDATE ev_outbox SET attempts = attempts + 1, next_at = ?, lease_until = 0 WHERE id = ?').run(
          o.retryAtMs,
          Number(d.id),
        );
      }
    });
  }

  async listDeliveries(accountId: string, webhookId: string, limit: number): Promise<DeliveryLogEntry[]> {
    const rows = this.q(
      `SELECT l.attempt, l.at, l.status, l.error FROM ev_delivery_log l JOIN ev_webhooks w ON w.id = l.webhook_id
          WHERE w.account_id = ? AND l.webhook_id = ? ORDER BY l.id DESC LIMIT ?`,
    ).all(accountId, webhookId, limit) as {
      attempt: number;
      at: number;
      status: number | null;
      error: string | null;
    }[];
    return rows.map((r) => ({ attempt: r.attempt, atMs: r.at, status: r.status, error: r.error }));
  }

  async listRecentDeliveries(limit: number, failedOnly: boolean): Promise<RecentDelivery[]> {
    const rows = this.q(
      `SELECT l.attempt, l.at, l.status, l.error, l.webhook_id, w.account_id, w.key_id, w.kind, w.url
           FROM ev_delivery_log l JOIN ev_webhooks w ON w.id = l.webhook_id
          ${failedOnly ? 'WHERE l.status IS NULL OR l.status < 200 OR l.status >= 300' : ''}
          ORDER BY l.id DESC LIMIT ?`,
    ).all(limit) as {
      attempt: number;
      at: number;
      status: number | null;
      error: string | null;
      webhook_id: string;
      account_id: string;
      key_id: string;
      kind: 'webhook' | 'alert';
      url: string;
    }[];
    return rows.map((r) => ({
      attempt: r.attempt,
      atMs: r.at,
      status: r.status,
      error: r.error,
      accountId: r.account_id,
      webhookId: r.webhook_id,
      keyId: r.key_id,
      kind: r.kind,
      origin: originOf(r.url),
    }));
  }

  async hasWatchedKeys(accountId: string): Promise<boolean> {
    return this.q('SELECT 1 FROM ev_keys WHERE account_id = ? LIMIT 1').get(accountId) !== undefined;
  }

  async close(): Promise<void> {}
}
