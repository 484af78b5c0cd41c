import { ConfigError } from '../core/config.js';
import { createLocalKey, type RequestContext } from '../core/context.js';
import { GatewayError } from '../core/errors.js';
import type { Admission, Credential } from '../core/ledger/types.js';
import type { StreamMeter } from '../core/metering/stream-meter.js';
import { pricedEndpointOf } from '../core/paid-routes.js';
import type { RateCard } from '../core/pricing/rate-card.js';
import type { ImageVariant, PricedEndpoint } from '../core/pricing/types.js';
import type { CashuUnit, WalletService } from '../core/wallet/types.js';

/**
 * Per-request state the paid-call stages hand to each other (auth → reserve → meter → settle →
 * change-token), kept in typed context locals rather than ad-hoc properties. Not a plugin.
 */

/** The ledger credential of the caller (auth). Holds secrets (API key): never log it. */
export const CREDENTIAL = createLocalKey<Credential>('paid.credential');

/**
 * The payment doors' offer for this call (auth → reserve), set when the call came without a credential and the
 * node offers a Lightning door, or with a Lightning door's credential (a short balance is offered a fresh
 * invoice): the 402's headers and details for a call whose bound is `amountMsat`. Resolves to null when no offer
 * can be made now (the mint gives no quote).
 */
export const DOOR_OFFER =
  createLocalKey<
    (
      amountMsat: number,
    ) => Promise<{ headers: Record<string, string>; details: Record<string, unknown> } | null>
  >('paid.doorOffer');

/** The call came with no credential: the reserve stage answers 402 with the doors' offer for its bound. */
export const UNPAID = createLocalKey<true>('paid.unpaid');

/** The admission result (reserve): key metadata and the rate-limit window for the X-RateLimit headers. */
export const ADMISSION = createLocalKey<Admission>('paid.admission');

/** What the reserve stage priced the call with; settle prices the usage the same way. */
export interface PricedCall {
  endpoint: PricedEndpoint;
  model: string;
  /** The BTC price of the reservation (model mode), so settlement never depends on a fresh price. */
  btcUsd: string | undefined;
  /** Unit endpoints: units reserved for (images asked for, milliseconds of audio, characters). */
  units?: number;
  variant?: ImageVariant;
  /** The cost is known at admission (flat and per-unit calls other than images): msats, for X-Node-Cost. */
  exactMsat?: number;
  /** Token endpoints: the prompt tokens the reservation counted (its bound): what an abandoned call whose usage
   *  never came is charged for its prompt (settle). */
  promptTokensBound?: number;
  /** A catch-all call: the RELAY_PATHS price of its path, charged as it is (before a pricing policy's adjustment). */
  relayMsat?: number;
  /** Chat web search declared (`web_search_options`, OpenRouter's web plugin, `:online`): billed per call, so a
   *  usage that counts no search is charged one (core/metering/request-bound.ts). */
  searchPerCall?: boolean;
}
export const PRICED_CALL = createLocalKey<PricedCall>('paid.priced');

/**
 * The `"pricing": "auto"` providers a token-metered call was reserved for (reserve → relay → settle): the rate card
 * of each (its node's advertised price × markup, core/pricing/node-rates.ts) as it was at admission, so the charge
 * matches what was reserved. The relay sends the call to no auto-priced provider missing here; `only`: the price
 * book does not price the model, so no other provider may serve it.
 */
export interface AutoPricedCall {
  cards: ReadonlyMap<string, RateCard>;
  only: boolean;
}
export const AUTO_PRICED = createLocalKey<AutoPricedCall>('paid.autoPriced');

/**
 * The id of the stored response this call created (owner stage, once recorded): the settle stage writes the
 * tokens it charged into the record, which bound the calls that continue it (`previous_response_id`).
 */
export const STORED_RESPONSE = createLocalKey<string>('paid.storedResponse');

/**
 * msats in one whole unit of the eCash token paying this call — X-Cashu or a token as bearer — (reserve): 1,000
 * for a `sat` token, 1 for an `msat` token, unset for an API key. The call is CHARGED in whole units of it
 * (reservation, charge and X-Node-Cost rounded up once, the rounding stated in x-node-cost as
 * `breakdown.unit_rounding`), so the token's identity keeps whole units only: the change-token stage returns all
 * of it, and a refund of the identity (POST /v1/balance/refund, paid in the token's unit) takes all of it. No
 * sub-unit remainder is left where nobody can withdraw it.
 */
export const CHARGE_STEP = createLocalKey<number>('paid.chargeStep');

/** The unit of the eCash token that is the call's credential, bearer or X-Cashu (auth, once decoded). */
export const TOKEN_UNIT = createLocalKey<CashuUnit>('paid.tokenUnit');

/** `msat` rounded up to whole units of `step` msats. */
export function inWholeUnits(msat: number, step: number | undefined): number {
  return step === undefined || step <= 1 ? msat : Math.ceil(msat / step) * step;
}

/**
 * The unit of the eCash token paying this call, X-Cashu or bearer: as the auth stage decoded it (TOKEN_UNIT), else
 * read from the X-Cashu header (`sat` when it cannot be read: the coarser rule).
 */
export function perCallUnit(ctx: RequestContext, wallet: WalletService | undefined): CashuUnit {
  const known = ctx.local(TOKEN_UNIT);
  if (known !== undefined) return known;
  const token = ctx.headers['x-cashu'];
  if (token === undefined || wallet === undefined) return 'sat';
  try {
    return wallet.decodeToken(token.trim()).unit;
  } catch {
    return 'sat';
  }
}

/** msats in one whole unit of `unit`. */
export function unitStep(unit: CashuUnit): number {
  return unit === 'msat' ? 1 : 1000;
}

/** Metering state (meter): a stream meter, or the copied chunks of a buffered JSON body. */
export interface MeterState {
  stream: StreamMeter | undefined;
  /** Non-stream JSON: the body's chunks (copies; dropped from the relay and re-sent spliced by settle). */
  body: Buffer[] | undefined;
  /** The upstream answered with an error status: nothing is charged. */
  failed: boolean;
}
export const METER = createLocalKey<MeterState>('paid.meter');

/** Settlement progress (settle): set before the ledger call, so the final hook never settles twice. */
export const SETTLED = createLocalKey<'settling' | 'settled' | 'released'>('paid.settled');

/** The `x-node-cost` block of a settled call (settle), spliced into the JSON body or sent as the SSE cost comment. */
export const COST_BLOCK = createLocalKey<Record<string, unknown>>('paid.costBlock');

/** Which metered API a route is (core/paid-routes.ts); anything else is a per-request-priced `other` call. */
export function pricedEndpoint(ctx: RequestContext): PricedEndpoint {
  return pricedEndpointOf(ctx.method, ctx.routeTemplate || ctx.path);
}

/** Rejects options a stage does not take (the factory validates once). */
export function noOptions(stage: string, options: Record<string, unknown> | undefined): void {
  if (options !== undefined && Object.keys(options).length > 0) {
    throw new ConfigError(`${stage}: unknown options ${Object.keys(options).join(', ')}`);
  }
}

/** A copy of `err` with extra response headers (GatewayError fields are read-only). */
export function withHeaders(err: GatewayError, headers: Record<string, string>): GatewayError {
  return new GatewayError(err.code, {
    message: err.message,
    ...(err.details ? { details: err.details } : {}),
    headers: { ...err.headers, ...headers },
  });
}
