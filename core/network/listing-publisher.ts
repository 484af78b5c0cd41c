import { Counter, Gauge } from 'prom-client';
import type { Logger } from '../log.js';
import { registry } from '../metrics.js';
import { type ListingInput, type NostrEvent, signListing } from './listing.js';
import type { NodeIdentity } from './nostr-identity.js';
import { publishEvent, relayLabel } from './relays.js';

/**
 * Keeps the node's listing current at the relays (docs/network.md): publishes at start, again when what the
 * listing stands for changes (URLs, mints, models or their prices: `fingerprint()`), and every
 * `refreshMs`. Each relay has its own backoff after a failure (5 s doubling to 15 min, ±20 % jitter) and its
 * own last result, shown by `status()` (the console) and the metrics below.
 */

const publishTotal = new Counter({
  name: 'gateway_nostr_publish_total',
  help: 'Listing publications per relay and result (ok: the relay accepted the event)',
  labelNames: ['relay', 'result'],
  registers: [registry],
});
const lastOkSeconds = new Gauge({
  name: 'gateway_nostr_listing_published_timestamp_seconds',
  help: 'When a relay last accepted the listing (unix seconds)',
  labelNames: ['relay'],
  registers: [registry],
});

export interface RelayStatus {
  relay: string;
  ok: boolean | null;
  last_attempt_at: string | null;
  last_success_at: string | null;
  /** The relay's refusal or the connection error; never contains the key. */
  last_error: string | null;
  next_attempt_at: string | null;
  event_id: string | null;
}

export interface ListingSource {
  /** The listing as it is now. */
  listing(): ListingInput;
  /** Changes whenever the listing or the models and prices behind it change. */
  fingerprint(): string;
}

export interface ListingPublisherOptions {
  identity: NodeIdentity;
  relays: string[];
  source: ListingSource;
  log: Logger;
  refreshMs: number;
  /** How often the fingerprint is compared (cheap, no I/O). */
  checkMs: number;
  /** One relay's connect + OK deadline. */
  timeoutMs?: number;
  now?: () => number;
}

const BACKOFF_BASE_MS = 5_000;
const BACKOFF_MAX_MS = 15 * 60_000;

interface RelayState {
  status: RelayStatus;
  delayMs: number;
  nextAt: number;
  /** The event this relay has accepted (none yet: null). */
  acceptedId: string | null;
}

export class ListingPublisher {
  private readonly relays = new Map<string, RelayState>();
  private current: NostrEvent | undefined;
  private fingerprint = '';
  private lastCreatedAt = 0;
  private lastSignedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closed = false;
  private readonly now: () => number;

  constructor(private readonly opts: ListingPublisherOptions) {
    this.now = opts.now ?? Date.now;
    for (const relay of opts.relays) {
      this.relays.set(relay, {
        status: {
          relay: relayLabel(relay),
          ok: null,
          last_attempt_at: null,
          last_success_at: null,
          last_error: null,
          next_attempt_at: null,
          event_id: null,
        },
        delayMs: 0,
        nextAt: 0,
        acceptedId: null,
      });
    }
  }

  /** The signed event currently announced (signs one first when none is); a read never re-signs. */
  event(): NostrEvent {
    if (this.current === undefined) this.sign();
    return this.current!;
  }

  status(): RelayStatus[] {
    return [...this.relays.values()].map((r) => ({ ...r.status }));
  }

  start(): void {
    if (this.relays.size === 0) return;
    void this.tick();
    this.timer = setInterval(() => void this.tick(), this.opts.checkMs);
    this.timer.unref();
  }

  /** One pass: re-sign when stale or changed, then send to every relay that is due and lacks it. */
  tick(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.running) return this.running;
    this.running = this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /**
   * The operator's "Publish now" (POST /admin/api/network/publish): one pass, after any pass in flight, that
   * sends the current listing to every relay at once — one waiting out its backoff too, and one that holds the
   * listing already (it answers OK again: it still has it). A failure extends that relay's backoff like any other.
   */
  async publishNow(): Promise<void> {
    await this.running;
    for (const r of this.relays.values()) {
      r.nextAt = 0;
      r.acceptedId = null;
    }
    return this.tick();
  }

  private async pass(): Promise<void> {
    const fp = this.opts.source.fingerprint();
    if (
      this.current === undefined ||
      fp !== this.fingerprint ||
      this.now() - this.lastSignedAt >= this.opts.refreshMs
    ) {
      this.sign();
    }
    const ev = this.current!;
    const due = [...this.relays.entries()].filter(
      ([, r]) => r.acceptedId !== ev.id && this.now() >= r.nextAt,
    );
    await Promise.all(due.map(([url, r]) => this.send(url, r, ev)));
  }

  private sign(): void {
    const createdAt = Math.max(Math.floor(this.now() / 1000), this.lastCreatedAt + 1);
    this.current = signListing(this.opts.identity, this.opts.source.listing(), createdAt);
    this.fingerprint = this.opts.source.fingerprint();
    this.lastCreatedAt = createdAt;
    this.lastSignedAt = this.now();
    // Every relay is due again for the new event, backoff permitting.
    for (const r of this.relays.values()) r.acceptedId = null;
  }

  private async send(url: string, r: RelayState, ev: NostrEvent): Promise<void> {
    const at = this.now();
    r.status.last_attempt_at = new Date(at).toISOString();
    try {
      await publishEvent(url, ev, this.opts.timeoutMs ?? 5_000);
      r.acceptedId = ev.id;
      r.delayMs = 0;
      r.nextAt = 0;
      Object.assign(r.status, {
        ok: true,
        last_success_at: new Date(this.now()).toISOString(),
        last_error: null,
        next_attempt_at: null,
        event_id: ev.id,
      });
      publishTotal.inc({ relay: r.status.relay, result: 'ok' });
      lastOkSeconds.set({ relay: r.status.relay }, Math.floor(this.now() / 1000));
      this.opts.log.info({ relay: r.status.relay, event: ev.id }, 'nostr listing published');
    } catch (err) {
      r.delayMs = r.delayMs === 0 ? BACKOFF_BASE_MS : Math.min(BACKOFF_MAX_MS, r.delayMs * 2);
      const jitter = r.delayMs * 0.2 * (2 * Math.random() - 1);
      r.nextAt = this.now() + Math.max(0, Math.round(r.delayMs + jitter));
      const reason = err instanceof Error ? err.message : String(err);
      Object.assign(r.status, {
        ok: false,
        last_error: reason.slice(0, 200),
        next_attempt_at: new Date(r.nextAt).toISOString(),
      });
      publishTotal.inc({ relay: r.status.relay, result: 'error' });
      this.opts.log.warn(
        { relay: r.status.relay, reason: r.status.last_error, retryInMs: r.nextAt - this.now() },
        'nostr listing not published',
      );
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    // A publish in flight has its own deadline (timeoutMs); wait for it no longer than that.
    await this.running;
  }
}
