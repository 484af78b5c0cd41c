/**
 * Webhooks, alerts and the delivery outbox (docs/webhooks.md): the store contract. Two stores implement it
 * (SQLite tables next to the ledger's, Redis keys under the ledger prefix hash-tagged per account), and one
 * conformance suite (test/events/webhook-store.test.ts) keeps them equal.
 *
 * Ownership: a webhook and an alert setting belong to one key (`keyId`) of an account. An event about key K
 * goes to K's webhooks, to the webhooks of K's parent (a parent sees its children's events), and to the
 * `webhook_url` of K's own alert settings (stored as a webhook of kind 'alert', id `alert_<keyId>`).
 *
 * Exactly once: `onSpend`, `onBalance` and `sweepExpired` decide a crossing and enqueue its deliveries in ONE
 * atomic step (a SQLite transaction / a Lua script), so concurrent callers fire an event at most once.
 */

import { randomBytes } from 'node:crypto';
import type { KeyMeta, Ledger } from '../ledger/types.js';

export const EVENT_TYPES = ['balance.low', 'key.expired', 'spend.daily_limit', 'batch.completed'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface Webhook {
  id: string;
  accountId: string;
  keyId: string;
  kind: 'webhook' | 'alert';
  url: string;
  events: EventType[];
  /** Never returned by the HTTP layer, never logged. */
  secret: string;
  createdAtMs: number;
  disabled: boolean;
}

export interface AlertSettings {
  lowBalanceThresholdMsat: number | null;
  dailySpendLimitMsat: number | null;
  webhookUrl: string | null;
}

/** The key an event is about, as the ledger knows it. */
export interface EventKey {
  accountId: string;
  keyId: string;
  parentKeyId: string | null;
  /** When the key stops working, ms (null = never); recorded for the key.expired sweep. */
  expiresAtMs: number | null;
}

/** How the balance changed: only a credit re-arms balance.low. */
export type BalanceChange = 'credit' | 'debit';

/** When the key stops working: the earlier of its expiry and (child keys) its validity end; null = never. */
export function keyExpiryMs(key: Pick<KeyMeta, 'expiresAtMs' | 'validityDateMs'>): number | null {
  const { expiresAtMs, validityDateMs } = key;
  if (expiresAtMs === null) return validityDateMs;
  if (validityDateMs === null) return expiresAtMs;
  return Math.min(expiresAtMs, validityDateMs);
}

export function eventKeyOf(key: KeyMeta): EventKey {
  return {
    accountId: key.accountId,
    keyId: key.keyId,
    parentKeyId: key.parentKeyId,
    expiresAtMs: keyExpiryMs(key),
  };
}

export interface DeliveryLogEntry {
  attempt: number;
  atMs: number;
  /** The receiver's HTTP status, or null (no answer). */
  status: number | null;
  error: string | null;
}

/** A claimed outbox entry: one event to one webhook. */
export interface Delivery {
  id: string;
  accountId: string;
  webhookId: string;
  /** The event id: the `webhook-id` header, the same on every retry. */
  msgId: string;
  url: string;
  secret: string;
  body: string;
  /** Attempts made before this one. */
  attempts: number;
}

export interface AttemptOutcome {
  atMs: number;
  status: number | null;
  error: string | null;
  /** When to try again; null = finished (delivered, or given up). */
  retryAtMs: number | null;
  /** 410 Gone: disable the webhook (its pending deliveries are dropped). */
  disable: boolean;
}

/** A delivery attempt as the operator's console lists them (node-wide, newest first). */
export interface RecentDelivery extends DeliveryLogEntry {
  accountId: string;
  webhookId: string;
  /** The key the webhook belongs to; null when the webhook was deleted since. */
  keyId: string | null;
  kind: 'webhook' | 'alert' | null;
  /** The receiver's origin (scheme, host, port) — never its path or query, which may carry a secret. */
  origin: string | null;
}

export interface WebhookStore {
  createWebhook(
    key: EventKey,
    w: { url: string; events: EventType[]; secret: string; now?: number },
  ): Promise<Webhook>;
  /** The key's own webhooks (not the alert target), oldest first. */
  listWebhooks(accountId: string, keyId: string): Promise<Webhook[]>;
  getWebhook(accountId: string, id: string): Promise<Webhook | null>;
  deleteWebhook(accountId: string, keyId: string, id: string): Promise<boolean>;
  getAlerts(accountId: string, keyId: string): Promise<AlertSettings | null>;
  /** Stores the settings; `secret` signs deliveries to webhookUrl (kept when null and the URL is unchanged). */
  setAlerts(key: EventKey, settings: AlertSettings, secret: string | null, now?: number): Promise<void>;
  /**
   * A call charged `chargedMsat` to `key` and left the account at `balanceMsat`: counts the UTC day's spend
   * (the key's, and its parent's for a child), fires spend.daily_limit once per day, and balance.low on a
   * downward crossing. Returns how many deliveries were enqueued.
   */
  onSpend(
    key: Pick<EventKey, 'accountId' | 'keyId' | 'parentKeyId'>,
    chargedMsat: number,
    balanceMsat: number,
    now?: number,
  ): Promise<number>;
  /**
   * The account's balance changed to `balanceMsat` by a credit (top-up, deposit, credit-back) or a debit
   * (withdrawal, child-key fee): fires balance.low on a downward crossing; only a credit re-arms it (at or
   * above the threshold). `onSpend` never re-arms: a spend's reported balance may be stale (credit leases).
   */
  onBalance(accountId: string, balanceMsat: number, change: BalanceChange, now?: number): Promise<number>;
  /**
   * Watches these keys (no alert settings of their own): records their expiry for the key.expired sweep, so a
   * child's expiry reaches its parent's webhooks. Keeps a watched key's settings and state.
   */
  watchKeys(keys: EventKey[]): Promise<void>;
  /**
   * An event that needs no decision (`batch.completed`): enqueues it to every subscribed target of the key, once
   * per `eventId` (a repeat with the same id adds no second delivery). Returns how many deliveries were enqueued.
   */
  onEvent(
    key: Pick<EventKey, 'accountId' | 'keyId' | 'parentKeyId'>,
    type: EventType,
    eventId: string,
    data: Record<string, unknown>,
    now?: number,
  ): Promise<number>;
  /** Fires key.expired for every watched key whose expiry has passed (once per key). */
  sweepExpired(now?: number, max?: number): Promise<number>;
  /** Claims up to `max` due deliveries for `claimMs` (other processes skip them meanwhile). */
  claimDue(now: number, claimMs: number, max: number): Promise<Delivery[]>;
  finishAttempt(d: Delivery, outcome: AttemptOutcome): Promise<void>;
  /** The webhook's delivery log, newest first. */
  listDeliveries(accountId: string, webhookId: string, limit: number): Promise<DeliveryLogEntry[]>;
  /**
   * The node's latest delivery attempts, newest first (SQLite: every webhook's kept log; Redis: the last 1,000
   * attempts, recorded after each one). `failedOnly`: no answer, or a status outside 2xx.
   */
  listRecentDeliveries(limit: number, failedOnly: boolean): Promise<RecentDelivery[]>;
  /** True when the account has a watched key (a webhook or alert settings): the hot-path hook skips others. */
  hasWatchedKeys(accountId: string): Promise<boolean>;
  close(): Promise<void>;
}

export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export function eventBody(
  id: string,
  type: EventType,
  createdAtMs: number,
  data: Record<string, unknown>,
): string {
  return JSON.stringify({ id, type, created_at: new Date(createdAtMs).toISOString(), data });
}

/** A random id with a readable prefix (`wh_…` webhooks, `evt_…` events). */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

/** The record `createWebhook` stores (both stores): a new id, its events once each, enabled. */
export function newWebhook(
  key: EventKey,
  w: { url: string; events: EventType[]; secret: string; now?: number },
): Webhook {
  return {
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
}

/**
 * Webhooks and alerts as services expose them (core/plugin.ts `Services.events`; events.ts implements it): the
 * store, the ledger hook that observes balance changes, and the outbox worker.
 */
export interface WebhookEvents {
  readonly store: WebhookStore;
  /** Marks an account as having watched keys (after a webhook or alert change on this process). */
  touched(accountId: string): void;
  spent(key: KeyMeta, chargedMsat: number, balanceMsat: number): void;
  /** A batch was settled: `batch.completed` to the key's webhooks (once per event id). */
  batchCompleted(
    key: { accountId: string; keyId: string; parentKeyId: string | null },
    eventId: string,
    data: Record<string, unknown>,
  ): Promise<void>;
  balance(accountId: string, balanceMsat: number, change: BalanceChange): void;
  /** The ledger with the event hook (the same object's methods, the money steps observed). */
  watchLedger(ledger: Ledger): Ledger;
  start(): void;
  /** One outbox pass. */
  poll(): Promise<number>;
  close(): Promise<void>;
}
