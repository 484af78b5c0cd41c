/**
 * The payment doors' types (payment-doors.ts is the implementation): what the plugin contract
 * (core/service-types.ts `Services.doors`), the auth stage and the routes name without importing the
 * implementation, which refunds through the account layer.
 */

export type DoorName = 'cashu' | 'l402' | 'mpp';

export interface DoorsConfig {
  doors: readonly DoorName[];
  /** The smallest invoice a Lightning door offers, sats. */
  minSats: number;
  /** How long an L402 token pays calls, seconds. */
  l402ExpiryS: number;
  /** The MPP challenges' realm. */
  realm: string;
  /** How old an MPP close's claim with no payout under way is before another close takes it over (ms;
   *  default `CLOSE_TAKEOVER_MS`). */
  closeTakeoverMs?: number;
}

/** What pays a call that came through a Lightning door. */
export interface DoorCaller {
  door: 'l402' | 'mpp';
  /** The ledger identity (a token hash) of the invoice's balance. */
  tokenHash: string;
  paymentHash: string;
  /** MPP `charge`: the id of the challenge the credential echoes (its receipt names it). */
  challengeId?: string;
  /** MPP `session`: the session id (the deposit invoice's payment hash); the receipt's reference. */
  sessionId?: string;
  /**
   * MPP session `topUp` and `close`: the door's own answer. The request is answered with it and never relayed
   * (draft-lightning-session-00: a top-up starts no call; a close refunds the rest).
   */
  answer?: DoorAnswer;
}

/** An answer a door gives instead of the call: status, JSON body, headers. */
export interface DoorAnswer {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

/** An unpaid call's offers: the headers and the JSON body's `details`. */
export interface DoorOffer {
  headers: Record<string, string>;
  details: Record<string, unknown>;
}

/** The payment doors an unpaid call is offered: Cashu, L402, MPP (`Services.doors`; payment-doors.ts). */
export interface PaymentDoors {
  readonly config: DoorsConfig;
  offers(door: DoorName): boolean;
  /** True when an unpaid call is offered a Lightning invoice (L402 or MPP). */
  readonly lightning: boolean;
  /**
   * The offers for a call whose bound is `amountMsat`. @throws GatewayError `mint_unavailable` when the mint gives
   * no quote.
   */
  offer(amountMsat: number, model: string | undefined): Promise<DoorOffer>;
  /**
   * The caller an `Authorization: L402 …` or `Payment …` credential names (null for another scheme), its invoice
   * credited first when this is its first use. `allowExpired`: an expired token may still read and refund its
   * balance.
   */
  identify(
    authorization: string,
    o?: { model?: string | undefined; allowExpired?: boolean },
  ): Promise<DoorCaller | null>;
  /** The `Payment-Receipt` of a call an MPP credential paid. */
  receipt(caller: DoorCaller): string;
}
