import { Cluster, type Redis } from 'ioredis';
import type { StoreConnection } from './connection.js';
import { migrate } from './sqlite-migrations.js';

/**
 * Cross-process signals through the money store: a version number per signal, bumped by whoever changes the
 * thing it names, and watched by every process sharing the store (WORKERS, several gateways on one Redis).
 *
 * - `settings`: the operator changed the runtime settings (core/settings.ts); every process reloads them.
 * - `recall`: a process asked the holders of an account's credit leases to report or give them back
 *   (core/ledger/leasing.ts: a key disabled, a withdrawal, money short); holders answer at once instead of at
 *   their next recall poll.
 * - `recall-answered`: a holder answered a recall (its leases of the account reported, given back or closed);
 *   the recalling process reads the answers at once instead of waiting for its next read of the leases.
 * - `watches`: an account gained a webhook or alert settings (core/events/events.ts); every process forgets
 *   which accounts it had found watching nothing, so their next paid call looks at the store again.
 *
 * The version in the store is the truth; a notification only says "look now". Redis: the versions are one key
 * each under one hash tag (`<prefix>:{signals}:<name>`, so one MGET reads them on Redis Cluster too), a bump is
 * INCR then PUBLISH on `<prefix>:signals`, and every process SUBSCRIBEs on its own connection; on a message
 * it reads the versions and acts on those that moved. The versions are also polled (`pollMs`, 1 s by
 * default), so a message lost while a subscriber reconnected is caught within a second. On Redis Cluster
 * the classic PUBLISH reaches subscribers on every node, and the poll alone would still meet the settings'
 * 2-second bound. SQLite (WORKERS processes on one file): a table of versions, polled every `pollMs`
 * (250 ms by default).
 */

export type SignalName = 'settings' | 'recall' | 'recall-answered' | 'watches';
const NAMES: readonly SignalName[] = ['settings', 'recall', 'recall-answered', 'watches'];

type Listener = (version: number) => void;

export interface SignalOptions {
  /** How often the versions are read even without a notification (ms). */
  pollMs?: number;
  onError?: (err: unknown) => void;
}

export class StoreSignals {
  private readonly seen = new Map<SignalName, number>();
  private readonly listeners = new Map<SignalName, Listener[]>();
  private readonly timer: NodeJS.Timeout;
  private subscriber: Redis | Cluster | undefined;
  private checking: Promise<void> | null = null;
  private again = false;
  private closed = false;

  private constructor(
    private readonly store: StoreConnection,
    private readonly opts: SignalOptions,
  ) {
    const every = opts.pollMs ?? (store.kind === 'redis' ? 1000 : 250);
    this.timer = setInterval(() => void this.check(), every);
    this.timer.unref();
  }

  /** Reads the current versions (the baseline: what is already applied) and starts watching. */
  static async open(store: StoreConnection, opts: SignalOptions = {}): Promise<StoreSignals> {
    const s = new StoreSignals(store, opts);
    if (store.kind === 'sqlite') migrate(store.db);
    const v = await s.read();
    for (const n of NAMES) s.seen.set(n, v[n]);
    if (store.kind === 'redis') s.subscribe(store.redis, store.prefix);
    return s;
  }

  /** The last version of `name` this process acted on. */
  version(name: SignalName): number {
    return this.seen.get(name) ?? 0;
  }

  /** Runs `fn` with the new version whenever `name` moves (in this process too, after its own bump). */
  on(name: SignalName, fn: Listener): void {
    const list = this.listeners.get(name) ?? [];
    list.push(fn);
    this.listeners.set(name, list);
  }

  /** Bumps `name` in the store and tells every process; resolves with the new version once this process acted. */
  async bump(name: SignalName): Promise<number> {
    const store = this.store;
    let v: number;
    if (store.kind === 'redis') {
      v = await store.redis.incr(versionKey(store.prefix, name));
      await store.redis.publish(channel(store.prefix), `${name}:${v}`);
    } else {
      const row = store.db
        .prepare(
          'INSERT INTO store_signals (name, version) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET version = version + 1 RETURNING version',
        )
        .get(name) as { version: number };
      v = row.version;
    }
    await this.check();
    return v;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.subscriber?.disconnect();
  }

  private subscribe(redis: Redis | Cluster, prefix: string): void {
    // A subscribed connection can issue no other command: its own, queueing while it reconnects.
    // (A Cluster's duplicate takes its start-up nodes first, then the options.)
    const sub =
      redis instanceof Cluster
        ? redis.duplicate(undefined, { enableOfflineQueue: true })
        : redis.duplicate({ enableOfflineQueue: true, lazyConnect: false });
    sub.on('error', (err: unknown) => this.opts.onError?.(err));
    sub.on('message', () => void this.check());
    // Messages sent while it was away are lost: look at the versions again once it is back.
    sub.on('ready', () => void this.check());
    this.subscriber = sub;
    // Not awaited: the subscription is made once the connection is up (queued until then), and the poll keeps
    // every process current meanwhile, so a store still connecting never holds up or fails the start.
    sub.subscribe(channel(prefix)).catch((err: unknown) => this.opts.onError?.(err));
  }

  private async read(): Promise<Record<SignalName, number>> {
    const out: Record<SignalName, number> = { settings: 0, recall: 0, 'recall-answered': 0, watches: 0 };
    const store = this.store;
    if (store.kind === 'redis') {
      const vals = await store.redis.mget(...NAMES.map((n) => versionKey(store.prefix, n)));
      NAMES.forEach((n, i) => {
        out[n] = Number(vals[i] ?? 0);
      });
    } else {
      const rows = store.db.prepare('SELECT name, version FROM store_signals').all() as Array<{
        name: string;
        version: number;
      }>;
      for (const r of rows) if (r.name in out) out[r.name as SignalName] = r.version;
    }
    return out;
  }

  /** Reads the versions and runs the listeners of those that moved (one read at a time; a request during it runs once after). */
  private check(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.checking) {
      this.again = true;
      return this.checking;
    }
    this.checking = (async () => {
      do {
        this.again = false;
        try {
          const v = await this.read();
          for (const n of NAMES) {
            if (v[n] <= (this.seen.get(n) ?? 0)) continue;
            this.seen.set(n, v[n]);
            for (const fn of this.listeners.get(n) ?? []) {
              try {
                fn(v[n]);
              } catch (err) {
                this.opts.onError?.(err);
              }
            }
          }
        } catch (err) {
          this.opts.onError?.(err);
        }
      } while (this.again && !this.closed);
    })().finally(() => {
      this.checking = null;
    });
    return this.checking;
  }
}

const versionKey = (prefix: string, name: SignalName) => `${prefix}:{signals}:${name}`;
const channel = (prefix: string) => `${prefix}:signals`;
