import { createHash } from 'node:crypto';
import type { Money } from '../account/credit-token.js';
import { newPayoutHoldId, refundToInvoice } from '../account/lightning-refund.js';
import { payoutInProgressError } from '../account/payout-guard.js';
import type { DepositRecord, LightningDeposits } from '../account/types.js';
import { GatewayError } from '../errors.js';
import { payoutInProgress } from '../ledger/errors.js';
import type { Ledger, OpenPayout } from '../ledger/types.js';
import type { Logger } from '../log.js';
import { lazyLru } from '../lru.js';
import type { StoreConnection } from '../store/connection.js';
import { decodeBolt11 } from '../wallet/bolt11.js';
import type { WalletService } from '../wallet/types.js';
import { claimOnce, loadDoorSecret, readMark, replaceMark, setMark } from './door-secrets.js';
import {
  issueMacaroon,
  type L402Caveats,
  l402Challenge,
  parseL402Credential,
  verifyMacaroon,
} from './l402.js';
import { challengeHeader, issueChallenge, type MppCredential, readCredential, receiptHeader } from './mpp.js';
import type {
  DoorCaller,
  DoorName,
  DoorOffer,
  DoorsConfig,
  PaymentDoors as PaymentDoorsApi,
} from './types.js';

/**
 * The payment doors (docs/paying.md): every way an unpaid call can be paid, offered together in one 402, and the
 * Lightning doors' credentials turned into the ledger identity that pays.
 *
 * - `cashu`: NUT-24 `X-Cashu` (the auth stage redeems the token; here only its NUT-18 request is offered).
 * - `l402`: `WWW-Authenticate: L402 macaroon="…", invoice="…"`; `Authorization: L402 <macaroon>:<preimage>`.
 * - `mpp`: `WWW-Authenticate: Payment …` (Lightning `charge`); `Authorization: Payment <credential>`.
 *
 * Both Lightning doors sell the same thing: an invoice of the primary mint (a NUT-04 mint quote) whose value,
 * once the mint says it is paid, is minted into the operator's wallet and credited ONCE to a token-hash identity
 * derived from the invoice's payment hash — through the Lightning deposit path (core/account/lightning-deposits.ts,
 * `kind: 'door'`): journalled mint, credit idempotent by the minted proofs' hash, recovered after a crash. Calls
 * are then charged from that balance like a bearer token's; the rest stays for the next call with the same
 * credential, and can be read and refunded (`GET /v1/wallet/balance`, `POST /v1/wallet/refund`).
 */

/** The `service` caveat of this gateway's macaroons. */
export const L402_SERVICE = 'prepaid-model-gateway';

/** An MPP session close's answer body (draft-lightning-session-00). */
interface CloseResult extends Record<string, unknown> {
  status: 'closed';
  refundSats: number;
  refundStatus: 'succeeded' | 'failed' | 'skipped' | 'pending';
}

/**
 * The session mark (`mpp-session:<id>`): its return invoice while the session is open, `closed:<return invoice>`
 * once a close began (a close run again after its closer died still needs the invoice; a BOLT11 invoice has no
 * ':'), `closed` alone when an earlier release closed it (it kept no invoice).
 */
const CLOSED = 'closed';

function sessionMark(mark: string): { closed: boolean; returnInvoice: string | null } {
  if (mark === CLOSED) return { closed: true, returnInvoice: null };
  if (mark.startsWith(`${CLOSED}:`)) return { closed: true, returnInvoice: mark.slice(CLOSED.length + 1) };
  return { closed: false, returnInvoice: mark };
}

/**
 * A close's answer as stored in its mark: with its payout hold's id, its first claim's time and the amount its melt
 * pays (to look at a `pending` one again).
 */
interface StoredClose extends CloseResult {
  holdId?: string;
  first?: number;
  amountMsat?: number;
}

/**
 * A close whose claim is this old, and whose payout is neither open nor paid, is taken over by the next close: its
 * process died (or lost its store) between the claim and the answer. Its steps before the hold take milliseconds.
 * The default of MPP_CLOSE_TAKEOVER_MS (`DoorsConfig.closeTakeoverMs`). Taking over a close that is in fact still
 * at work pays nothing twice (one undecided payout per account, and only the claim's holder stores the answer):
 * the window only spares such a close a needless second run.
 */
export const CLOSE_TAKEOVER_MS = 30_000;

const CLOSING = 'closing:';

/**
 * A close's claim: when the session's first close claimed it, when this claim was made, its payout hold's id, and
 * once quoted the amount its melt pays (msats; written just before the melt).
 */
interface Closing {
  first: number;
  since: number;
  holdId: string;
  amountMsat?: number;
}

function closingMark(c: Closing): string {
  const base = `${CLOSING}${c.first}:${c.since}:${c.holdId}`;
  return c.amountMsat === undefined ? base : `${base}:${c.amountMsat}`;
}

function parseClosing(mark: string): Closing | null {
  // '' is the claim of a close made before claims carried their times and hold id: as old as can be, no hold.
  if (mark === '') return { first: 0, since: 0, holdId: '' };
  const m = /^closing:(\d+):(\d+):([^:]*)(?::(\d+))?$/.exec(mark);
  if (m === null) return null;
  const c: Closing = { first: Number(m[1]), since: Number(m[2]), holdId: m[3]! };
  if (m[4] !== undefined) c.amountMsat = Number(m[4]);
  return c;
}

function closedWith(refundSats: number, refundStatus: CloseResult['refundStatus']): CloseResult {
  return { status: 'closed', refundSats, refundStatus };
}

/** 409 while another close of the session is at work. */
function closingNow(sinceMs: number | null): GatewayError {
  return payoutInProgress(undefined, 'closing', {
    sinceMs,
    message: 'This MPP session is being closed: ask again shortly for its answer',
  });
}

/** The ledger identity of a door invoice: its payment hash, under a prefix of its own. */
export function doorIdentity(paymentHash: string): string {
  return createHash('sha256').update(`lightning-door|${paymentHash}`).digest('hex');
}

const sha256Hex = (hex: string) => createHash('sha256').update(Buffer.from(hex, 'hex')).digest('hex');

/** A 64-character lowercase hex string (a payment hash, a session id, a preimage as the session draft sends it). */
const hex64 = (v: unknown): v is string => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v);

/** Whether `preimage` (lowercase hex) is the preimage of `paymentHash`. */
const isPreimageOf = (preimage: unknown, paymentHash: string): preimage is string =>
  hex64(preimage) && sha256Hex(preimage) === paymentHash;

/** A refused MPP or L402 credential: 401 `invalid_payment_credential` with its reason. */
const badCredential = (message: string) => new GatewayError('invalid_payment_credential', { message });

/** A BOLT11 invoice's network, from its human-readable prefix (`lnbcrt` before `lnbc`, `lntbs` before `lntb`). */
const network = (invoice: string) => /^ln(bcrt|bc|tbs|tb)/i.exec(invoice)?.[1]?.toLowerCase() ?? '';

/** Payment hashes credited in this process (a hit skips the store and the mint). */
const CREDITED_CACHE_SIZE = 100_000;

/** How long past its challenge's expiry a consumed `charge` credential stays marked (expired ones are refused). */
const CONSUMED_MARGIN_S = 3600;

export class PaymentDoors implements PaymentDoorsApi {
  private readonly credited = lazyLru<string, true>(CREDITED_CACHE_SIZE);
  /**
   * L402 credentials that paid here, by their exact `Authorization` text (macaroon and preimage), with the
   * macaroon's caveats and the caller they name: the same bytes under the same root key verify the same way, and
   * a verification costs about 0.5 ms of CPU (measured, lightning-tools); the preimage's hash and the identity's
   * hash cost two SHA-256 more per call. The caveats (expiry, models) are still checked at every call; only a
   * credential whose invoice was credited is kept (a 402's macaroon verifies without any payment).
   */
  private readonly l402Paid = lazyLru<string, { caveats: L402Caveats; caller: DoorCaller }>(
    CREDITED_CACHE_SIZE,
  );

  private constructor(
    readonly config: DoorsConfig,
    private readonly rootKey: string,
    private readonly mppSecret: string,
    private readonly wallet: WalletService,
    private readonly deposits: LightningDeposits,
    private readonly store: StoreConnection,
    private readonly log: Logger,
    private readonly now: () => number,
    private readonly ledger: Ledger | undefined,
  ) {}

  /**
   * `ledger`: the balances an MPP session's close refunds from (without it a close pays nothing: `refundStatus`
   * `failed`, the balance stays refundable with the bearer credential).
   */
  static async open(opts: {
    config: DoorsConfig;
    store: StoreConnection;
    wallet: WalletService;
    deposits: LightningDeposits;
    log: Logger;
    now?: () => number;
    ledger?: Ledger;
  }): Promise<PaymentDoors> {
    const [rootKey, mppSecret] = await Promise.all([
      loadDoorSecret(opts.store, 'l402_root_key'),
      loadDoorSecret(opts.store, 'mpp_challenge_key'),
    ]);
    return new PaymentDoors(
      opts.config,
      rootKey,
      mppSecret,
      opts.wallet,
      opts.deposits,
      opts.store,
      opts.log,
      opts.now ?? Date.now,
      opts.ledger,
    );
  }

  offers(door: DoorName): boolean {
    return this.config.doors.includes(door);
  }

  /** True when an unpaid call is offered a Lightning invoice (L402 or MPP). */
  get lightning(): boolean {
    return this.offers('l402') || this.offers('mpp');
  }

  /**
   * The offers for a call whose bound is `amountMsat`: one invoice of max(bound, minSats) sats shared by the L402
   * and MPP challenges (one payment hash, one identity), and the NUT-18 request beside them. @throws GatewayError
   * `mint_unavailable` when the mint gives no quote.
   */
  async offer(amountMsat: number, model: string | undefined): Promise<DoorOffer> {
    const sats = Math.max(Math.ceil(amountMsat / 1000), this.config.minSats);
    // A challenge names a single-use invoice: never cached (draft-lightning-charge-00).
    const headers: Record<string, string> = { 'Cache-Control': 'no-store' };
    const options: Array<Record<string, unknown>> = [];
    if (this.offers('cashu')) {
      const request = this.wallet.createPaymentRequest({
        amountMsat: sats * 1000,
        description: 'Pay per call with an eCash token (X-Cashu)',
      });
      headers['X-Cashu'] = request;
      options.push({ door: 'cashu', header: 'X-Cashu', payment_request: request });
    }
    if (this.lightning) {
      const { record, paymentHash } = await this.deposits.openDoor({
        amountSats: sats,
        identity: doorIdentity,
      });
      const challenges: string[] = [];
      // `Payment` first: fetchWithMpp reads the joined WWW-Authenticate only when it starts with it; L402 clients
      // find their parameters anywhere in it. The `session` challenge comes before the `charge` one: fetchWithMpp
      // reads every parameter of the header and keeps the last of each name, so the charge's must come last.
      if (this.offers('mpp')) {
        const expiresAt = record.expiresAt ?? this.now() + this.config.l402ExpiryS * 1000;
        const session = issueChallenge(this.mppSecret, {
          realm: this.config.realm,
          intent: 'session',
          expiresAt,
          request: {
            amount: String(sats),
            currency: 'sat',
            description: 'Prepaid model gateway session',
            unitType: 'request',
            depositInvoice: record.request,
            depositAmount: String(sats),
            paymentHash,
          },
        });
        challenges.push(challengeHeader(session));
        const challenge = issueChallenge(this.mppSecret, {
          realm: this.config.realm,
          expiresAt: record.expiresAt ?? this.now() + this.config.l402ExpiryS * 1000,
          request: {
            amount: String(sats),
            currency: 'sat',
            description: 'Prepaid model gateway balance',
            methodDetails: { invoice: record.request, paymentHash },
          },
        });
        challenges.push(challengeHeader(challenge));
        options.push({
          door: 'mpp',
          header: 'WWW-Authenticate',
          scheme: 'Payment',
          intents: ['session', 'charge'],
          invoice: record.request,
        });
      }
      if (this.offers('l402')) {
        const macaroon = await issueMacaroon(this.rootKey, {
          paymentHash,
          service: L402_SERVICE,
          expires: Math.floor(this.now() / 1000) + this.config.l402ExpiryS,
          ...(model ? { models: [model] } : {}),
        });
        challenges.push(l402Challenge(macaroon, record.request));
        options.push({
          door: 'l402',
          header: 'WWW-Authenticate',
          scheme: 'L402',
          invoice: record.request,
          macaroon,
        });
      }
      headers['WWW-Authenticate'] = challenges.join(', ');
    }
    return { headers, details: { amount_sats: sats, amount_msats: sats * 1000, payment_options: options } };
  }

  /**
   * The caller an `Authorization: L402 …` or `Payment …` credential names (null for another scheme), its invoice
   * credited first when this is its first use. `allowExpired`: an expired token may still read and refund its
   * balance (an expiry never locks money). @throws GatewayError `invalid_payment_credential`,
   * `payment_credential_expired`, `invoice_not_paid`, `model_not_allowed`, `token_pending`, `mint_unavailable`.
   */
  async identify(
    authorization: string,
    o: { model?: string | undefined; allowExpired?: boolean } = {},
  ): Promise<DoorCaller | null> {
    const paid = this.l402Paid.get(authorization);
    if (paid !== undefined) {
      this.checkCaveats(paid.caveats, o);
      return paid.caller;
    }
    const l402 = parseL402Credential(authorization);
    if (l402 !== null) {
      if (!this.offers('l402'))
        throw new GatewayError('invalid_payment_credential', { message: 'L402 is not offered here' });
      const caveats = await verifyMacaroon(this.rootKey, l402.macaroon);
      if (caveats.service !== L402_SERVICE) {
        throw new GatewayError('invalid_payment_credential', {
          message: 'The L402 macaroon is for another service',
        });
      }
      this.checkCaveats(caveats, o);
      const caller = Object.freeze(await this.credit('l402', caveats.paymentHash, l402.preimage, false));
      // Kept only once it paid: a 402's macaroon verifies without any payment, so caching before would let
      // unpaid challenges fill the cache.
      this.l402Paid.set(authorization, { caveats, caller });
      return caller;
    }
    const cred = readCredential(this.mppSecret, this.config.realm, authorization);
    if (cred === null) return null;
    if (!this.offers('mpp'))
      throw new GatewayError('invalid_payment_credential', { message: 'MPP is not offered here' });
    if (cred.challenge.intent === 'session') return this.session(cred, o.allowExpired === true);
    const preimage = cred.payload.preimage;
    if (typeof preimage !== 'string') {
      throw new GatewayError('invalid_payment_credential', {
        message: 'The Payment credential has no preimage',
      });
    }
    const mpp = { ...cred, preimage };
    const methodDetails = cred.request.methodDetails as { paymentHash?: unknown } | undefined;
    const paymentHash = methodDetails?.paymentHash;
    if (!hex64(paymentHash)) {
      throw new GatewayError('invalid_payment_credential', {
        message: 'The Payment challenge names no invoice',
      });
    }
    // `charge` is consume-once (draft-lightning-charge-00): a call is paid by a credential only before its
    // challenge expires, and only once — the first call to claim it wins, atomically across processes; a replay
    // (or a concurrent twin) is refused. The invoice's value is credited to its balance first, so whatever the
    // call leaves (the invoice is max(bound, L402_MIN_SATS)) is read and refunded with the same header
    // (`allowExpired`: balance and refund, which never consume it).
    const expired = !(mpp.expiresAt > this.now());
    if (expired && !o.allowExpired) throw new GatewayError('payment_credential_expired');
    const caller = await this.credit('mpp', paymentHash, mpp.preimage, expired);
    if (!o.allowExpired) {
      const ttlS = (mpp.expiresAt - this.now()) / 1000 + CONSUMED_MARGIN_S;
      if (!(await claimOnce(this.store, `mpp-charge:${paymentHash}`, ttlS))) {
        throw new GatewayError('invalid_payment_credential', {
          message:
            'This Payment credential was already used (a charge pays one call): its rest is refundable with it at /v1/wallet/refund; pay a fresh challenge',
        });
      }
    }
    return { ...caller, challengeId: mpp.challenge.id };
  }

  /**
   * An MPP `session` credential (draft-lightning-session-00), mapped onto the same accounts: the session's balance
   * is the deposit invoice's (`doorIdentity(sessionId)`), credited once through the deposit path like a charge's.
   *
   * - `open` (`preimage`, `returnInvoice`): the deposit challenge unexpired, sha256(preimage) its paymentHash, the
   *   return invoice a BOLT11 of the deposit's network with no amount; the invoice is credited, then the session
   *   is opened ONCE (its record, the return invoice, claimed atomically): a replayed open is refused. The open
   *   request is itself the session's first call.
   * - `bearer` (`sessionId`, `preimage`): sha256(preimage) = sessionId, the session opened here; each call is
   *   charged from the balance. The challenge it echoes must be one of ours (any session challenge: a session has
   *   no expiry here).
   * - `topUp` (`sessionId`, `topUpPreimage`): the echoed challenge is a fresh, unexpired session challenge of
   *   ours; sha256(topUpPreimage) its paymentHash. Its invoice is claimed ONCE for this session (a retry of the
   *   same top-up is answered again, another session's is refused), its credit pointed at the session's balance,
   *   then credited through the deposit path. Answer: 200 `{"status":"ok"}` and a receipt; no call is made.
   * - `close` (`sessionId`, `preimage`): the session is marked closed ONCE (bearer calls refused from then on),
   *   and the rest of its balance paid to the return invoice (`refundToInvoice`: a payout hold, NUT-05 amountless
   *   melt). Answer: 200 `{"status":"closed", refundSats, refundStatus}` and a receipt carrying both; a repeated
   *   close answers the same. `refundStatus`: `succeeded`, `skipped` (under a sat left), `failed` (nothing paid,
   *   the balance stays: refund it with the bearer credential at `POST /v1/wallet/refund`), or `pending` (the
   *   payment is in flight at the mint; the balance stays held until the mint decides, as for any refund).
   *
   * `allowExpired` (balance, refund): a bearer credential of an opened session reads and refunds, also once it
   * is closed; an open credential there credits the deposit but opens nothing; topUp and close are refused there.
   */
  private async session(cred: MppCredential, allowExpired: boolean): Promise<DoorCaller> {
    const p = cred.payload;
    const refuse = badCredential;
    if (p.action === 'open') {
      const paymentHash = cred.request.paymentHash;
      const deposit = cred.request.depositInvoice;
      if (!hex64(paymentHash) || typeof deposit !== 'string')
        throw refuse('The session challenge names no deposit invoice');
      if (typeof p.preimage !== 'string') throw refuse('The session open has no preimage');
      if (!allowExpired && !(cred.expiresAt > this.now()))
        throw new GatewayError('payment_credential_expired');
      const returnInvoice = p.returnInvoice;
      const decoded = typeof returnInvoice === 'string' ? decodeBolt11(returnInvoice) : undefined;
      if (
        typeof returnInvoice !== 'string' ||
        decoded === undefined ||
        (decoded.amountMsat !== null && decoded.amountMsat !== 0n) ||
        network(returnInvoice) !== network(deposit)
      ) {
        throw new GatewayError('invalid_request', {
          message: 'returnInvoice must be a BOLT11 invoice with no amount, on the deposit invoice network',
        });
      }
      const caller = await this.credit('mpp', paymentHash, p.preimage, false);
      if (
        !allowExpired &&
        !(await claimOnce(this.store, `mpp-session:${paymentHash}`, null, returnInvoice))
      ) {
        throw refuse('This MPP session is already open: send bearer credentials');
      }
      return { ...caller, sessionId: paymentHash };
    }
    if (p.action === 'bearer') {
      const sessionId = p.sessionId;
      if (!hex64(sessionId) || typeof p.preimage !== 'string')
        throw refuse('The session bearer lacks its fields');
      if (!isPreimageOf(p.preimage, sessionId)) throw refuse("The preimage is not the session's");
      const mark = await readMark(this.store, `mpp-session:${sessionId}`);
      if (mark === null) throw refuse('No MPP session of this id is open here');
      if (sessionMark(mark).closed && !allowExpired)
        throw refuse('This MPP session is closed: its rest was refunded to the return invoice');
      return { door: 'mpp', tokenHash: doorIdentity(sessionId), paymentHash: sessionId, sessionId };
    }
    if (p.action === 'topUp' || p.action === 'close') {
      if (allowExpired) {
        throw new GatewayError('invalid_request', {
          message: `An MPP session ${p.action} is sent to a paid route (a model call's URL), not a wallet endpoint`,
        });
      }
      const sessionId = p.sessionId;
      if (!hex64(sessionId)) throw refuse('The session credential names no session');
      return p.action === 'topUp' ? this.topUp(cred, sessionId) : this.close(sessionId, p.preimage);
    }
    throw refuse('Unknown MPP session action');
  }

  /** MPP session `topUp`: a fresh challenge's invoice, paid, credited to the session's balance (see `session`). */
  private async topUp(cred: MppCredential, sessionId: string): Promise<DoorCaller> {
    const refuse = badCredential;
    const paymentHash = cred.request.paymentHash;
    if (!hex64(paymentHash) || typeof cred.request.depositInvoice !== 'string')
      throw refuse('The top-up challenge names no deposit invoice');
    if (paymentHash === sessionId)
      throw refuse("A session's own deposit cannot top it up: pay a fresh challenge");
    if (!isPreimageOf(cred.payload.topUpPreimage, paymentHash))
      throw refuse("The top-up preimage is not the challenge invoice's");
    const mark = await readMark(this.store, `mpp-session:${sessionId}`);
    if (mark === null) throw refuse('No MPP session of this id is open here');
    if (sessionMark(mark).closed) throw refuse('This MPP session is closed');
    const claim = `mpp-topup:${paymentHash}`;
    // Claimed once, for this session, while its challenge is unexpired; the same top-up again (a retry after a
    // lost answer) goes on, also later: every step below is idempotent.
    if (!(cred.expiresAt > this.now())) {
      if ((await readMark(this.store, claim)) !== sessionId)
        throw new GatewayError('payment_credential_expired');
    } else if (
      !(await claimOnce(this.store, claim, null, sessionId)) &&
      (await readMark(this.store, claim)) !== sessionId
    ) {
      throw refuse('This top-up invoice was already used');
    }
    const target = doorIdentity(sessionId);
    const rec = await this.deposits.retargetDoor(paymentHash, target);
    if (rec === null) throw refuse('No invoice of this credential was offered here');
    const done = await this.finishRecord('mpp', paymentHash, false);
    if (done.doorIdentity !== target) {
      throw refuse(
        'This invoice was credited as a balance of its own before the top-up: pay with its own credential, or refund it',
      );
    }
    this.log.info({ door: 'mpp' }, 'MPP session topped up');
    return {
      door: 'mpp',
      tokenHash: target,
      paymentHash: sessionId,
      sessionId,
      answer: {
        status: 200,
        body: { status: 'ok' },
        headers: { 'Payment-Receipt': receiptHeader(undefined, sessionId, this.now()) },
      },
    };
  }

  /**
   * MPP session `close`: marked closed once, the rest paid to the return invoice (see `session`).
   *
   * The close's mark (`mpp-close:<sessionId>`) is claimed ONCE with `closing:<first>:<since>:<holdId>` (the first
   * close's time, this claim's, the id its payout hold will have), then replaced by the answer (JSON, with that
   * hold id) — a compare-and-set: only the holder of the claim answers. A repeated close answers the stored
   * answer; one that finds a claim asks what became of its payout (`closeInProgress`) and so is never stuck
   * behind a closer that died: paid → that answer; undecided → 409 `payout_in_progress`; none or failed, and the
   * claim older than MPP_CLOSE_TAKEOVER_MS (30 s) → this close takes the claim over and runs again (the ledger allows one
   * undecided payout per account, so two runs never pay twice). A stored `pending` answer is looked at again.
   */
  private async close(sessionId: string, preimage: unknown): Promise<DoorCaller> {
    if (!isPreimageOf(preimage, sessionId)) throw badCredential("The preimage is not the session's");
    const caller = {
      door: 'mpp' as const,
      tokenHash: doorIdentity(sessionId),
      paymentHash: sessionId,
      sessionId,
    };
    const answer = (result: CloseResult): DoorCaller => ({
      ...caller,
      answer: {
        status: 200,
        body: { status: result.status, refundSats: result.refundSats, refundStatus: result.refundStatus },
        headers: {
          'Payment-Receipt': receiptHeader(undefined, sessionId, this.now(), {
            refundSats: result.refundSats,
            refundStatus: result.refundStatus,
          }),
        },
      },
    });
    const mark = await readMark(this.store, `mpp-session:${sessionId}`);
    if (mark === null) throw badCredential('No MPP session of this id is open here');
    const session = sessionMark(mark);
    const name = `mpp-close:${sessionId}`;
    const now = this.now();
    let claim: Closing = { first: now, since: now, holdId: newPayoutHoldId() };
    if (!(await claimOnce(this.store, name, null, closingMark(claim)))) {
      const next = await this.closeInProgress(name, caller.tokenHash);
      if ('answer' in next) return answer(next.answer);
      claim = next.claim;
    }
    // From here no bearer call starts (one already admitted keeps its reservation, settled as usual). The return
    // invoice stays in the mark: a close that takes this one over pays it.
    if (!session.closed) await setMark(this.store, `mpp-session:${sessionId}`, `${CLOSED}:${mark}`);
    // The melt's amount goes into the claim before the melt: a close that finds the claim after a crash answers it.
    let held = claim;
    const beforeMelt = async (amountMsat: number): Promise<void> => {
      const quoted = { ...held, amountMsat };
      if (await replaceMark(this.store, name, closingMark(held), closingMark(quoted))) held = quoted;
    };
    const result = await this.refundRest(caller.tokenHash, session.returnInvoice, claim.holdId, beforeMelt);
    // Stored only while the claim is still this close's (a close that took it over answers for itself).
    const stored: StoredClose = { ...result, holdId: held.holdId, first: held.first };
    if (held.amountMsat !== undefined) stored.amountMsat = held.amountMsat;
    await replaceMark(this.store, name, closingMark(held), JSON.stringify(stored));
    this.log.info({ door: 'mpp', refundStatus: result.refundStatus }, 'MPP session closed');
    return answer(result);
  }

  /**
   * A close that found the close's mark taken: the answer to give, or the claim it took over (it runs the close
   * again). @throws `payout_in_progress` (409) while the close's payout is undecided or its closer may still be at
   * work.
   */
  private async closeInProgress(
    name: string,
    tokenHash: string,
  ): Promise<{ answer: CloseResult } | { claim: Closing }> {
    const seen = await readMark(this.store, name);
    if (seen === null) throw closingNow(null);
    const closing = parseClosing(seen);
    const stored = closing === null ? (JSON.parse(seen) as StoredClose) : null;
    if (stored !== null && (stored.refundStatus !== 'pending' || stored.holdId === undefined)) {
      return { answer: stored };
    }
    const holdId = closing?.holdId ?? stored?.holdId ?? '';
    const first = closing?.first ?? stored?.first ?? 0;
    const quoted = closing?.amountMsat ?? stored?.amountMsat;
    const outcome = await this.payoutOutcome(tokenHash, holdId, first);
    if (outcome.state === 'open') {
      if (stored !== null) return { answer: stored }; // still pending at the mint
      throw await payoutInProgressError(this.wallet, outcome.payout);
    }
    if (outcome.state === 'paid') {
      // The melt's amount when it was written before the melt; else what left the balance (amount and fee).
      const paid: StoredClose = {
        ...closedWith(Math.floor((quoted ?? outcome.amountMsat) / 1000), 'succeeded'),
        holdId,
        first,
      };
      await replaceMark(this.store, name, seen, JSON.stringify(paid));
      return { answer: paid };
    }
    // No payout, or one that paid nothing: once its closer can no longer be at work, this close runs it again.
    const takeoverMs = this.config.closeTakeoverMs ?? CLOSE_TAKEOVER_MS;
    if (closing !== null && this.now() - closing.since < takeoverMs) throw closingNow(closing.since);
    const claim: Closing = { first, since: this.now(), holdId: newPayoutHoldId() };
    if (!(await replaceMark(this.store, name, seen, closingMark(claim)))) throw closingNow(null);
    this.log.warn({ door: 'mpp' }, 'MPP session close: taken over from a close that did not finish');
    return { claim };
  }

  /**
   * What became of a close's payout, from the ledger alone. Its hold open (the melt undecided, or decided and not
   * settled yet): `open`. Else the account's refunds since the session's first close: a paid payout's hold is
   * committed as a `refund` transaction (by the payout, or by a recovery pass once the mint decided), an unpaid one
   * aborted (no transaction). A closed session's balance moves only by its close's payouts and by refunds its
   * holder asks at /v1/wallet/refund: `amountMsat` is what left the balance (the amount paid and the mint's fee).
   * A claim of an earlier release (no time, no hold id) is never taken for paid.
   */
  private async payoutOutcome(
    tokenHash: string,
    holdId: string,
    firstMs: number,
  ): Promise<
    { state: 'open'; payout: OpenPayout } | { state: 'paid'; amountMsat: number } | { state: 'none' }
  > {
    if (!this.ledger) return { state: 'none' };
    const info = await this.ledger.getKeyInfo({ tokenHash });
    const payout = info?.account.payout;
    if (payout !== undefined && (payout.holdId === holdId || holdId === '')) return { state: 'open', payout };
    if (firstMs === 0) return { state: 'none' };
    const page = await this.ledger.listTransactions({ tokenHash }, { limit: 20 });
    const refunded = (page?.transactions ?? [])
      .filter((t) => t.type === 'refund' && t.timestampMs >= firstMs)
      .reduce((sum, t) => sum - t.amountMsat, 0);
    return refunded > 0 ? { state: 'paid', amountMsat: refunded } : { state: 'none' };
  }

  /**
   * A closing session's rest paid to its return invoice under hold `holdId`: a single attempt, its outcome named.
   * @throws `payout_in_progress` (409) when another payout of the account is undecided: nothing is decided for the
   * close, and a later close runs it again.
   */
  private async refundRest(
    tokenHash: string,
    invoice: string | null,
    holdId: string,
    beforeMelt: (amountMsat: number) => Promise<void>,
  ): Promise<CloseResult> {
    if (!this.ledger) return closedWith(0, 'failed');
    const info = await this.ledger.getKeyInfo({ tokenHash });
    const available = info ? info.account.balanceMsat - info.account.reservedMsat : 0;
    if (info?.account.payout) throw await payoutInProgressError(this.wallet, info.account.payout);
    if (available < 1000) return closedWith(0, 'skipped');
    // Closed by an earlier release, which kept no return invoice: the rest stays refundable with the bearer.
    if (invoice === null) return closedWith(Math.floor(available / 1000), 'failed');
    const money: Money = { ledger: this.ledger, wallet: this.wallet };
    try {
      const paid = await refundToInvoice(money, { credential: { tokenHash }, invoice, holdId, beforeMelt });
      return closedWith(Math.floor(paid.amountMsat / 1000), 'succeeded');
    } catch (err) {
      const code = err instanceof GatewayError ? err.code : 'internal_error';
      if (code === 'payout_in_progress') throw err;
      // Pending at the mint: the payout hold keeps the balance until the mint decides (the recovery pass settles it).
      if (code === 'service_unavailable') return closedWith(Math.floor(available / 1000), 'pending');
      if (code === 'refund_below_fee_reserve') return closedWith(0, 'skipped');
      this.log.warn(
        { door: 'mpp', code, reason: err instanceof Error ? err.message : String(err) },
        'MPP session close: the refund to the return invoice failed',
      );
      return closedWith(Math.floor(available / 1000), 'failed');
    }
  }

  /** An L402 macaroon's expiry and model caveats against this use of it. */
  private checkCaveats(
    caveats: L402Caveats,
    o: { model?: string | undefined; allowExpired?: boolean },
  ): void {
    if (!o.allowExpired && caveats.expires * 1000 <= this.now())
      throw new GatewayError('payment_credential_expired');
    if (o.model !== undefined && caveats.models !== undefined && !caveats.models.includes(o.model)) {
      throw new GatewayError('model_not_allowed', {
        message: `This L402 token may not pay for model ${o.model}`,
      });
    }
  }

  /** The `Payment-Receipt` of a call an MPP credential paid. */
  receipt(caller: DoorCaller): string {
    if (caller.sessionId !== undefined) return receiptHeader(undefined, caller.sessionId, this.now());
    return receiptHeader(caller.challengeId ?? '', caller.paymentHash, this.now());
  }

  private async credit(
    door: DoorCaller['door'],
    paymentHash: string,
    preimage: string,
    refuseUncredited: boolean,
  ): Promise<DoorCaller> {
    if (!/^[0-9a-fA-F]{64}$/.test(preimage) || sha256Hex(preimage) !== paymentHash) {
      throw new GatewayError('invalid_payment_credential', {
        message: "The preimage does not match the invoice's payment hash",
      });
    }
    const caller: DoorCaller = { door, tokenHash: doorIdentity(paymentHash), paymentHash };
    if (this.credited.has(paymentHash)) return caller;
    await this.finishRecord(door, paymentHash, refuseUncredited);
    this.credited.set(paymentHash, true);
    return caller;
  }

  /**
   * The door invoice `paymentHash` finished now: its record once issued (credited). @throws GatewayError
   * `invalid_payment_credential` (never offered here), `payment_credential_expired`, `token_pending`,
   * `mint_unavailable`, `invoice_not_paid`.
   */
  private async finishRecord(
    door: DoorCaller['door'],
    paymentHash: string,
    refuseUncredited: boolean,
  ): Promise<DepositRecord> {
    const done = await this.deposits.finishDoor(paymentHash, { checkMint: !refuseUncredited });
    if (done === null) {
      throw new GatewayError('invalid_payment_credential', {
        message: 'No invoice of this credential was offered here',
      });
    }
    const { record, failed } = done;
    if (record.status === 'issued') return record;
    if (refuseUncredited || record.status === 'expired') {
      throw new GatewayError('payment_credential_expired', {
        message: 'The invoice of this credential expired before it was credited: pay a fresh challenge',
      });
    }
    if (record.status === 'paid') {
      // Paid, not minted yet: another process is minting it, or the mint failed mid-way (retried in the background).
      throw new GatewayError('token_pending', { message: 'The payment is being credited; retry shortly' });
    }
    if (failed) throw new GatewayError('mint_unavailable');
    this.log.debug({ door }, 'door credential for an unpaid invoice');
    throw new GatewayError('invoice_not_paid');
  }
}
