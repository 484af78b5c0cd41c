import { createHash, randomBytes } from 'node:crypto';
import { GatewayError } from '../errors.js';
import type { Ledger } from '../ledger/types.js';
import type { Logger } from '../log.js';
import type { RedisStore, StoreConnection } from '../store/connection.js';
import { migrate } from '../store/sqlite-migrations.js';
import { decodeBolt11 } from '../wallet/bolt11.js';
import { crashPoint } from '../wallet/context.js';
import { QuoteNotPaidError } from '../wallet/mint-quote.js';
import { walletScripts } from '../wallet/store/redis-store.js';
import type { WalletService } from '../wallet/types.js';
import { creditOrPark } from './credit-token.js';
import type {
  DepositRecord,
  DepositStatus,
  DepositView,
  LightningDeposits as LightningDepositsApi,
} from './types.js';

/**
 * Lightning deposits the server finishes (docs/wallet.md, "Lightning deposits over HTTP"): a persisted record
 * per deposit, keyed by the hash of an unguessable capability `id` (the mint's quote id is never handed out
 * as the capability), and `finish()`, which checks the quote, mints it (wallet journal: once across processes
 * and crashes) and credits the ledger (idempotent by the deposit's hash: `createKeyFromDeposit` returns the
 * same key on a repeat, `credit` credits once). The watcher runs `finish()` over every open record with
 * per-record backoff, so a deposit completes whether or not the client ever asks again, and a mint that is
 * down only delays it.
 *
 * NUT-17: where the primary mint offers `bolt11_mint_quote` subscriptions, each open record's quote is watched
 * over the mint's WebSocket (subscribed when this process creates the record or first sees it due), and a push
 * saying PAID finishes the record at once; polling (`pollMs`, per-record backoff) stays as the fallback for
 * mints without NUT-17, a dropped socket, and records of other processes.
 *
 * A top-up record keeps the target API key so the watcher can credit without the client: the store already
 * holds the wallet's seed and proofs, so it is treated as secret at rest; the key is never logged or answered.
 */

export interface DepositStore {
  init(): Promise<void>;
  /** Writes the record unless the stored one is already final (issued / expired): states never go back. */
  put(r: DepositRecord): Promise<void>;
  get(idHash: string): Promise<DepositRecord | null>;
  /** Records still pending or paid whose next attempt is due. */
  listDue(now: number, limit: number): Promise<DepositRecord[]>;
}

const OPEN = new Set<DepositStatus>(['pending', 'paid']);

/** A door invoice whose quote has no expiry is checked by the watcher after this long (a day). */
const DOOR_CHECK_WITHOUT_EXPIRY_MS = 86_400_000;

class SqliteDepositStore implements DepositStore {
  constructor(private readonly db: Extract<StoreConnection, { kind: 'sqlite' }>['db']) {}
  async init(): Promise<void> {
    migrate(this.db);
  }
  async put(r: DepositRecord): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO lightning_deposits (id_hash, status, next_at, data) VALUES (?, ?, ?, ?)
         ON CONFLICT(id_hash) DO UPDATE SET status = excluded.status, next_at = excluded.next_at,
         data = excluded.data WHERE lightning_deposits.status NOT IN ('issued', 'expired')`,
      )
      .run(r.idHash, r.status, r.nextAttemptAt, JSON.stringify(r));
  }
  async get(idHash: string): Promise<DepositRecord | null> {
    const row = this.db.prepare('SELECT data FROM lightning_deposits WHERE id_hash = ?').get(idHash) as
      | { data: string }
      | undefined;
    return row ? (JSON.parse(row.data) as DepositRecord) : null;
  }
  async listDue(now: number, limit: number): Promise<DepositRecord[]> {
    const rows = this.db
      .prepare(
        `SELECT data FROM lightning_deposits WHERE status IN ('pending', 'paid') AND next_at <= ?
         ORDER BY next_at LIMIT ?`,
      )
      .all(now, limit) as Array<{ data: string }>;
    return rows.map((r) => JSON.parse(r.data) as DepositRecord);
  }
}

class RedisDepositStore implements DepositStore {
  private readonly redis: RedisStore['redis'];
  private readonly prefix: string;
  private readonly run: ReturnType<typeof walletScripts>;
  constructor(conn: RedisStore) {
    this.redis = conn.redis;
    this.prefix = conn.prefix;
    this.run = walletScripts(conn);
  }
  // In the wallet's hash slot ({wallet}), so the two-key script also runs on Redis Cluster.
  private key(idHash: string): string {
    return `${this.prefix}:{wallet}:lnd:${idHash}`;
  }
  private get openKey(): string {
    return `${this.prefix}:{wallet}:lnd:open`;
  }
  async init(): Promise<void> {}
  async put(r: DepositRecord): Promise<void> {
    // One script: the write is refused when the stored record is final, and the open index follows it.
    // The index is a sorted set by next attempt; a stale entry is harmless (listDue re-reads the record).
    await this.run(
      'put-deposit',
      [this.key(r.idHash), this.openKey],
      [JSON.stringify(r), r.status, String(r.nextAttemptAt), r.idHash],
    );
  }
  async get(idHash: string): Promise<DepositRecord | null> {
    const v = await this.redis.get(this.key(idHash));
    return v ? (JSON.parse(v) as DepositRecord) : null;
  }
  async listDue(now: number, limit: number): Promise<DepositRecord[]> {
    const ids = await this.redis.zrangebyscore(this.openKey, 0, now, 'LIMIT', 0, limit);
    const out: DepositRecord[] = [];
    for (const id of ids) {
      const r = await this.get(id);
      if (r && OPEN.has(r.status)) out.push(r);
      else await this.redis.zrem(this.openKey, id);
    }
    return out;
  }
}

export function openDepositStore(conn: StoreConnection): DepositStore {
  return conn.kind === 'redis' ? new RedisDepositStore(conn) : new SqliteDepositStore(conn.db);
}

export function depositIdHash(id: string): string {
  return createHash('sha256').update(`lightning-deposit|${id}`).digest('hex');
}

/** The record of a door invoice, by its payment hash (public: the record is reachable only through the doors). */
export function doorIdHash(paymentHash: string): string {
  return depositIdHash(`door|${paymentHash}`);
}

export interface LightningDepositsOptions {
  conn: StoreConnection;
  ledger: Ledger;
  wallet: WalletService;
  log: Logger;
  /** First retry delay after a failed attempt; doubles per attempt up to maxBackoffMs. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** How long an unpaid quote waits between checks when nothing failed. */
  pollMs?: number;
  now?: () => number;
}

export class LightningDeposits implements LightningDepositsApi {
  private readonly store: DepositStore;
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly pollMs: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  /** NUT-17 subscriptions by quote id (canceller, or null while subscribing). */
  private readonly watched = new Map<string, (() => void) | null>();
  /** Set once the mint said it offers no subscription: no further attempts. */
  private pushUnsupported = false;
  private stopped = false;
  /** Records being finished because of a push (one at a time per record). */
  private readonly pushing = new Map<string, Promise<unknown>>();
  /** Door invoices being finished for a caller in this process (two first uses at once share one). */
  private readonly doorFinishing = new Map<
    string,
    Promise<{ record: DepositRecord; failed: boolean } | null>
  >();

  constructor(private readonly opts: LightningDepositsOptions) {
    this.store = openDepositStore(opts.conn);
    this.backoffMs = opts.backoffMs ?? 1000;
    this.maxBackoffMs = opts.maxBackoffMs ?? 60_000;
    this.pollMs = opts.pollMs ?? 2000;
    this.now = opts.now ?? Date.now;
  }

  init(): Promise<void> {
    return this.store.init();
  }

  /** A new deposit: asks the primary mint for a quote and persists the record. Returns the capability id. */
  async create(input: {
    kind: 'create' | 'topup';
    amountSats: number;
    name?: string | null;
    topupApiKey?: string;
  }): Promise<{ id: string; record: DepositRecord }> {
    const q = await this.opts.wallet.createLightningQuote(input.amountSats);
    const id = `lnd_${randomBytes(24).toString('base64url')}`;
    const now = this.now();
    const record: DepositRecord = {
      idHash: depositIdHash(id),
      kind: input.kind,
      quote: q.quote,
      request: q.request,
      amountSats: input.amountSats,
      expiresAt: q.expiresAt,
      createdAt: now,
      status: 'pending',
      attempts: 0,
      nextAttemptAt: now + this.pollMs,
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.topupApiKey !== undefined ? { topupApiKey: input.topupApiKey } : {}),
    };
    await this.store.put(record);
    this.watch(record);
    return { id, record };
  }

  /**
   * An invoice offered through a payment door (core/doors/): a quote at the primary mint and its record, keyed
   * by the invoice's payment hash and credited to `identity` once paid. Nobody polls it while it waits (an unpaid
   * call's offer is mostly never paid): the holder's first use finishes it (`finishDoor`), and the watcher checks
   * it once when the quote expires — crediting it then if it was paid and never presented.
   */
  async openDoor(input: {
    amountSats: number;
    identity: (paymentHash: string) => string;
  }): Promise<{ record: DepositRecord; paymentHash: string }> {
    const q = await this.opts.wallet.createLightningQuote(input.amountSats);
    const paymentHash = decodeBolt11(q.request)?.paymentHash;
    if (paymentHash === undefined) {
      throw new GatewayError('mint_unavailable', {
        message: 'The mint answered a quote without a valid invoice',
      });
    }
    const now = this.now();
    const record: DepositRecord = {
      idHash: doorIdHash(paymentHash),
      kind: 'door',
      quote: q.quote,
      request: q.request,
      amountSats: input.amountSats,
      expiresAt: q.expiresAt,
      createdAt: now,
      status: 'pending',
      attempts: 0,
      nextAttemptAt: q.expiresAt ?? now + DOOR_CHECK_WITHOUT_EXPIRY_MS,
      doorIdentity: input.identity(paymentHash),
    };
    await this.store.put(record);
    return { record, paymentHash };
  }

  /**
   * Names another identity to credit a door invoice to, while it is not credited yet (an MPP session's top-up: the
   * invoice of a fresh challenge, credited to the session's balance instead of its own). Returns the record as
   * it now is (its `doorIdentity` says where the credit goes or went), or null when no such invoice was offered.
   * A finish already under way keeps the identity it read: the caller checks the issued record's identity.
   */
  async retargetDoor(paymentHash: string, identity: string): Promise<DepositRecord | null> {
    const rec = await this.store.get(doorIdHash(paymentHash));
    if (rec === null || rec.kind !== 'door') return null;
    if (rec.doorIdentity === identity || !OPEN.has(rec.status)) return rec;
    const next: DepositRecord = { ...rec, doorIdentity: identity };
    await this.store.put(next); // never over a final (issued / expired) record
    return (await this.store.get(doorIdHash(paymentHash))) ?? next;
  }

  /**
   * Finishes the door invoice with this payment hash now (the holder presented its preimage): null when no such
   * invoice was offered here; `failed`: the attempt failed (mint unreachable), not that the invoice is unpaid. Two
   * first uses at once in this process share one finish; across processes every step is idempotent (the mint
   * claim, the credit by the minted proofs' hash). `checkMint: false` only reads the record.
   */
  finishDoor(
    paymentHash: string,
    o: { checkMint?: boolean } = {},
  ): Promise<{ record: DepositRecord; failed: boolean } | null> {
    const idHash = doorIdHash(paymentHash);
    if (o.checkMint === false) {
      return this.store
        .get(idHash)
        .then((rec) => (rec === null || rec.kind !== 'door' ? null : { record: rec, failed: false }));
    }
    const running = this.doorFinishing.get(idHash);
    if (running) return running;
    const run = this.store
      .get(idHash)
      .then(async (rec) => {
        if (rec === null || rec.kind !== 'door') return null;
        const record = await this.finish(rec);
        return { record, failed: record.attempts > rec.attempts };
      })
      .finally(() => this.doorFinishing.delete(idHash));
    this.doorFinishing.set(idHash, run);
    return run;
  }

  /** Subscribes to the record's quote over NUT-17 (once; never throws: polling is the fallback). */
  private watch(rec: DepositRecord): void {
    const subscribe = this.opts.wallet.watchLightningQuotes;
    if (
      !subscribe ||
      this.pushUnsupported ||
      this.stopped ||
      this.watched.has(rec.quote) ||
      !OPEN.has(rec.status)
    )
      return;
    this.watched.set(rec.quote, null);
    const forget = () => {
      const cancel = this.watched.get(rec.quote);
      this.watched.delete(rec.quote);
      cancel?.();
    };
    subscribe
      .call(
        this.opts.wallet,
        [rec.quote],
        (_quote, state) => {
          if (state === 'UNPAID' || this.pushing.has(rec.idHash)) return;
          const run = this.store
            .get(rec.idHash)
            .then((cur) => (cur && OPEN.has(cur.status) ? this.finish(cur) : cur))
            .then((after) => {
              if (!after || !OPEN.has(after.status)) forget();
            })
            .catch(() => undefined)
            .finally(() => this.pushing.delete(rec.idHash));
          this.pushing.set(rec.idHash, run);
        },
        () => {
          // Socket dropped: the record is polled meanwhile and watched again when it next comes due.
          this.watched.delete(rec.quote);
        },
      )
      .then((cancel) => {
        if (cancel === null) {
          this.pushUnsupported = true;
          this.watched.delete(rec.quote);
        } else if (this.stopped || !this.watched.has(rec.quote)) {
          cancel();
        } else {
          this.watched.set(rec.quote, cancel);
        }
      })
      .catch(() => {
        this.watched.delete(rec.quote);
      });
  }

  /** The deposit the capability `id` names (null when unknown), finished first if it is due. */
  async status(id: string, kind?: DepositRecord['kind']): Promise<DepositView | null> {
    const rec = await this.store.get(depositIdHash(id));
    if (!rec || (kind !== undefined && rec.kind !== kind)) return null;
    const done = await this.finish(rec);
    const view: DepositView = {
      status: done.status,
      amountSats: done.amountSats,
      expiresAt: done.expiresAt,
      request: done.request,
      ...(done.creditedMsat !== undefined ? { creditedMsat: done.creditedMsat } : {}),
    };
    if (done.status === 'issued' && done.kind === 'create') {
      // Records issued before `receiptHash` was kept: the mint's idempotent answer gives the hash once more.
      const hash =
        done.receiptHash ??
        (await this.opts.wallet.mintLightningQuote(done.quote, done.amountSats)).tokenHash;
      view.apiKey = await this.depositKey(done, hash, done.creditedMsat ?? done.amountSats * 1000);
    }
    return view;
  }

  /**
   * The one way a `create` deposit becomes a key: the ledger's createKeyFromDeposit, idempotent by the minted
   * proofs' hash (a repeat returns the same key, credited once).
   */
  private async depositKey(rec: DepositRecord, tokenHash: string, amountMsat: number): Promise<string> {
    const r = await this.opts.ledger.createKeyFromDeposit({ tokenHash, amountMsat, name: rec.name ?? null });
    if (!r.ok) throw new Error(`ledger refused the deposit key: ${r.code}`);
    return r.apiKey;
  }

  /**
   * Moves one record as far as it can go now: expired, or minted and credited (issued). Every step is
   * idempotent, so two processes finishing the same record credit it once. Failures back off.
   */
  async finish(rec: DepositRecord): Promise<DepositRecord> {
    if (!OPEN.has(rec.status)) return rec;
    const { wallet, ledger, log } = this.opts;
    const now = this.now();
    // Once the mint said PAID the record says so, also when a later step fails (or another process holds
    // the mint claim): a reader then sees `paid`, not `pending`.
    let paid = rec.status === 'paid';
    try {
      const q = await wallet.checkLightningQuote(rec.quote, rec.amountSats);
      if (q.state === 'UNPAID') {
        const next: DepositRecord =
          rec.expiresAt !== null && rec.expiresAt <= now
            ? { ...rec, status: 'expired' }
            : // A door invoice is checked again by the watcher only when it expires (its holder asks meanwhile).
              {
                ...rec,
                nextAttemptAt:
                  rec.kind === 'door'
                    ? (rec.expiresAt ?? now + DOOR_CHECK_WITHOUT_EXPIRY_MS)
                    : now + this.pollMs,
              };
        await this.store.put(next);
        return next;
      }
      if (!paid) await this.store.put({ ...rec, status: 'paid' });
      paid = true;
      const receipt = await wallet.mintLightningQuote(rec.quote, rec.amountSats);
      // Test-only kill points (a process dying with the proofs stored, before/after the ledger write).
      crashPoint('deposit-before-credit');
      if (rec.kind === 'create') {
        await this.depositKey(rec, receipt.tokenHash, receipt.amountMsat);
      } else if (rec.kind === 'door') {
        // The invoice's own identity (a token-hash account made on the first credit), credited once by the
        // minted proofs' hash: the same credit step as a bearer token's.
        await creditOrPark(
          ledger,
          { tokenHash: rec.doorIdentity ?? '' },
          receipt.tokenHash,
          receipt.amountMsat,
          'deposit',
        );
      } else {
        // The one credit step (core/account/credit-token.ts): a key that vanished meanwhile gets the value
        // parked on the deposit's own identity (refundable), never lost.
        await creditOrPark(
          ledger,
          { apiKey: rec.topupApiKey ?? '' },
          receipt.tokenHash,
          receipt.amountMsat,
          'topup',
        );
      }
      crashPoint('deposit-before-issued');
      const issued: DepositRecord = {
        ...rec,
        status: 'issued',
        creditedMsat: receipt.amountMsat,
        receiptHash: receipt.tokenHash,
      };
      await this.store.put(issued);
      return issued;
    } catch (err) {
      const attempts = rec.attempts + 1;
      const delay = Math.min(this.backoffMs * 2 ** (attempts - 1), this.maxBackoffMs);
      const code =
        err instanceof QuoteNotPaidError ? 'not_paid' : ((err as { code?: string }).code ?? 'error');
      log.warn({ code, attempts, retryInMs: delay }, 'lightning deposit not finished yet');
      const next: DepositRecord = {
        ...rec,
        status: paid ? 'paid' : rec.status,
        attempts,
        nextAttemptAt: now + delay,
      };
      await this.store.put(next).catch(() => undefined);
      return next;
    }
  }

  /** One pass over the due records; returns how many became issued or expired. */
  async watchOnce(limit = 100): Promise<number> {
    let n = 0;
    for (const rec of await this.store.listDue(this.now(), limit)) {
      const after = await this.finish(rec);
      if (!OPEN.has(after.status)) {
        n++;
        const cancel = this.watched.get(rec.quote);
        this.watched.delete(rec.quote);
        cancel?.();
      } else {
        this.watch(after);
      }
    }
    return n;
  }

  /** Runs watchOnce every `everyMs` (never two passes at once) until stop(). */
  start(everyMs = 1000): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.watchOnce()
        .catch((err: unknown) => {
          this.opts.log.warn(
            { code: (err as { code?: string }).code ?? 'error' },
            'lightning watcher pass failed',
          );
          return 0;
        })
        .finally(() => {
          this.running = null;
        });
    }, everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const cancel of this.watched.values()) cancel?.();
    this.watched.clear();
    await this.running;
    await Promise.allSettled([...this.pushing.values()]);
  }
}
