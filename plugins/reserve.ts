import { auditUnknownKey } from '../core/audit/audit-log.js';
import { allowListPermits } from '../core/auth/ip-match.js';
import {
  BACKGROUND_RESERVATION_MS,
  backgroundReservationId,
  isBackgroundResponse,
} from '../core/batches/background-responses.js';
import {
  AUTH,
  type AuthInfo,
  adjustedPrice,
  PRICE_ADJUSTMENT,
  type PriceAdjustment,
  RESERVATION,
  type RequestContext,
  type ReservationInfo,
} from '../core/context.js';
import { GatewayError } from '../core/errors.js';
import { CATCH_ALL_TEMPLATE } from '../core/http/router.js';
import { ledgerRefusalToError } from '../core/ledger/errors.js';
import { keyIdOf, resolveCredential } from '../core/ledger/keys.js';
import { ownedId } from '../core/ledger/owner.js';
import type { Admission, AdmitRefusal, AdmitResult, Credential } from '../core/ledger/types.js';
import { limitAnonymous } from '../core/limits/request-limits.js';
import { type CallUnits, callUnits } from '../core/metering/call-units.js';
import { type InputRefusal, inputTokensBound } from '../core/metering/input-bound.js';
import {
  callerMaxTokens,
  type DeclaredTools,
  declaredTools,
  fileIdsOf,
  outputChoices,
  storedContext,
} from '../core/metering/request-bound.js';
import { storedFileTokens } from '../core/objects/stored-file.js';
import { ownedBy, storedTokens } from '../core/objects/types.js';
import type { Plugin, PluginFactory, PluginNeeds } from '../core/plugin.js';
import { capField } from '../core/pricing/completion-cap.js';
import { nodeAffordableTokens, nodeCallBound } from '../core/pricing/node-rates.js';
import type { RateCard } from '../core/pricing/rate-card.js';
import {
  type HostedTools,
  isTokenEndpoint,
  isUnitEndpoint,
  type PricedEndpoint,
  type ReservationInput,
  type ReservationResult,
  type TokenEndpoint,
  type UsdRates,
} from '../core/pricing/types.js';
import type { Provider } from '../core/providers/types.js';
import { matchRelayPath } from '../core/relay-paths.js';
import {
  ADMISSION,
  AUTO_PRICED,
  type AutoPricedCall,
  CHARGE_STEP,
  CREDENTIAL,
  DOOR_OFFER,
  inWholeUnits,
  noOptions,
  PRICED_CALL,
  perCallUnit,
  pricedEndpoint,
  UNPAID,
  unitStep,
  withHeaders,
} from './paid-state.js';

/**
 * The reserve stage: holds back an upper bound of the call's cost before the upstream call, in ONE ledger
 * round trip (`admit`: key checks, model allow-list, rate limits and the reservation together). FAILS
 * CLOSED: a store that cannot be reached answers 503 and no call goes upstream unpaid.
 *
 * - Unknown model → 404 `not_found` before admission (model-based pricing knows no price for it, or the
 *   catalogue is non-empty and does not list it).
 * - The bound: safe prompt-token upper bound (bytes, plus stored context) + `max_tokens` × choices (or the
 *   model's maximum when unset) + hosted tool calls, priced by `pricing.reservation` (docs/pricing.md "The
 *   bound"). A token-metered call is reserved in full or refused (402 with {balance, required, shortfall}).
 * - When the caller set no `max_tokens` (chat, completions, responses), the balance must cover the model's
 *   maximum: else 402 `payment_required` with `details.affordable_max_tokens` (no silent shortening). With
 *   CLAMP_MAX_TOKENS=true the forwarded request gets the `max_tokens` the reservation affords instead.
 * - The catch-all (RELAY_PATHS) reserves and charges the listed price of the path, literally.
 * - After admission, the key's allowed IPs are checked against the client IP (403 `ip_not_allowed`; the
 *   reservation is released at once).
 * - X-Cashu calls refused with 402 carry a NUT-18 payment request for the shortfall in `X-Cashu`.
 *
 * Why the factory is over 80 lines: its closure holds what the stage was given at start (the services at its top)
 * and nothing else; each hook and each step of a hook is a named function inside it, each under 80 lines.
 */

const IMAGE_PART_TYPES = new Set(['image_url', 'input_image', 'image']);

/** True when a chat/responses body carries an image part (messages[].content[] or input[](.content[])). */
export function hasImageParts(body: unknown): boolean {
  if (body === null || typeof body !== 'object') return false;
  const b = body as { messages?: unknown; input?: unknown };
  const isImage = (p: unknown) =>
    p !== null && typeof p === 'object' && IMAGE_PART_TYPES.has((p as { type?: unknown }).type as string);
  const anyPart = (items: unknown) =>
    Array.isArray(items) &&
    items.some((it) => {
      if (isImage(it)) return true;
      const content = (it as { content?: unknown } | null)?.content;
      return Array.isArray(content) && content.some(isImage);
    });
  return anyPart(b.messages) || anyPart(b.input);
}

/** Tool types that make the provider run web searches (billed per call): OpenAI Responses, Anthropic. */
const WEB_SEARCH_TOOL = /^web_search/;

/** The `service_tier` a body asks for, and 1 web search call when it declares a web search tool. */
export function tierAndSearch(body: unknown): { serviceTier?: string; webSearchCalls: number } {
  if (body === null || typeof body !== 'object') return { webSearchCalls: 0 };
  const b = body as { service_tier?: unknown; tools?: unknown };
  const search =
    Array.isArray(b.tools) &&
    b.tools.some((t) => WEB_SEARCH_TOOL.test(String((t as { type?: unknown } | null)?.type ?? '')));
  return {
    ...(typeof b.service_tier === 'string' ? { serviceTier: b.service_tier } : {}),
    webSearchCalls: search ? 1 : 0,
  };
}

/** The bytes `max_completion_tokens` adds to a retry's prompt bound (core/metering/prompt-bound.ts counts keys). */
const RETRY_FIELD_BYTES = 'max_completion_tokens'.length;

/** The most file ids of one call whose stored size is looked up (the owner stage refuses a call naming more). */
const MAX_STORED_FILE_READS = 64;

/** APIs whose answer is bounded by a max_tokens field (the 402 / clamp rule applies to them). */
function completes(endpoint: PricedEndpoint): boolean {
  return endpoint === 'chat' || endpoint === 'completions' || endpoint === 'responses';
}

/** The ledger's 402, saying how many completion tokens the balance affords (`details.affordable_max_tokens`). */
function affordableRefusal(err: GatewayError, afford: number): GatewayError {
  return new GatewayError('payment_required', {
    message:
      afford > 0
        ? `The balance affords at most ${afford} completion tokens for this call, less than the model's maximum: set max_tokens to ${afford} or less, or top up`
        : 'The balance does not cover the prompt of this call and a minimal answer: top up',
    details: { ...err.details, affordable_max_tokens: afford },
    ...(err.headers !== undefined ? { headers: err.headers } : {}),
  });
}

/**
 * The largest price before the adjustment and the charge step (`inWholeUnits(adjustedPrice(m))`) that stays
 * within `availableMsat`: what the pricing service may spend so that the reserved amount fits the balance.
 */
export function unadjustedBudget(
  availableMsat: number,
  adjustment: PriceAdjustment | undefined,
  step: number | undefined,
): number {
  const a = Math.max(0, Math.floor(availableMsat));
  // inWholeUnits(x) ≤ a ⟺ x ≤ the last whole step within a.
  const stepped = step === undefined || step <= 1 ? a : Math.floor(a / step) * step;
  if (adjustment === undefined) return stepped;
  // max(0, ceil(m × ppm / 10⁶) + add) ≤ s ⟺ m × ppm ≤ (s − add) × 10⁶ (an integer bound on an integer m).
  const room = stepped - (adjustment.addMsat ?? 0);
  if (room < 0) return -1;
  const ppm = adjustment.multiplierPpm ?? 1_000_000;
  if (ppm <= 0) return Number.MAX_SAFE_INTEGER;
  const m = (BigInt(room) * 1_000_000n) / BigInt(Math.ceil(ppm));
  return m > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(m);
}

/** The services reserve uses: plugins/index.ts hands it these alone (a required one missing stops the start). */
export const reserveNeeds = {
  required: ['ledger', 'pricing', 'catalog', 'config', 'providers', 'log'],
  optional: ['wallet', 'nodes', 'objects', 'limiter'],
} as const satisfies PluginNeeds;

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a stage factory: the count is its closure, whose named steps are each under 80 lines
export const reserve: PluginFactory<typeof reserveNeeds> = (options, services): Plugin => {
  noOptions('reserve', options);
  const { ledger, pricing, catalog, config, wallet, providers, nodes } = services;
  const anyAuto = providers.list.some((p) => p.spec.autoPricing !== undefined);

  /**
   * The `"pricing": "auto"` providers serving a token-metered `model` (their node's advertised price × markup,
   * core/pricing/node-rates.ts — in every pricing mode), with the rate card each has now; undefined when none
   * serves it. `only`: every provider serving it is auto-priced.
   */
  function autoPricedFor(model: string, serving: readonly Provider[]): AutoPricedCall | undefined {
    if (!anyAuto || nodes === undefined) return undefined;
    const cards = new Map<string, RateCard>();
    let autoServes = false;
    let othersServe = false;
    for (const p of serving) {
      if (p.spec.autoPricing === undefined) {
        othersServe = true;
        continue;
      }
      autoServes = true;
      const card = nodes.prices.autoCard(p, model);
      if (card !== undefined) cards.set(p.name, card);
    }
    return autoServes ? { cards, only: !othersServe } : undefined;
  }

  /**
   * Input tokens of a continued response (`previous_response_id`): its billed input + output (its own input already
   * holds the chain before it). A response the gateway did not record answers 404, as the owner stage would; one
   * recorded without its tokens is bounded by STORED_CONTEXT_MAX_TOKENS, else refused (`context_not_bounded`)
   * before anything is reserved. A `conversation` or stored `prompt` is bounded with the body (`inputBound`).
   */
  async function continuedTokens(previousResponseId: string | undefined): Promise<number> {
    if (previousResponseId === undefined || services.objects === undefined) return 0;
    const o = await services.objects.get(previousResponseId);
    if (o === null || o.kind !== 'response') {
      throw new GatewayError('not_found', { message: `No such response: ${previousResponseId}` });
    }
    const t = storedTokens(o);
    if (t !== undefined) return t.input_tokens + t.output_tokens;
    if (config.storedContextMaxTokens === undefined) {
      throw new GatewayError('context_not_bounded', {
        message:
          'The call refers to a stored response recorded without its tokens, whose tokens this node cannot bound (STORED_CONTEXT_MAX_TOKENS is unset)',
      });
    }
    return config.storedContextMaxTokens;
  }

  /**
   * The text files the call names by id that this gateway stored for the calling key, with their size
   * (core/objects/stored-file.ts): what bounds them without REFERENCE_MAX_TOKENS. Another key's file is not
   * looked at (the owner stage answers 404 for it), so a refusal's amount reveals nothing of it.
   */
  async function storedFilesOf(ctx: RequestContext): Promise<ReadonlyMap<string, number> | undefined> {
    const credential = ctx.local(CREDENTIAL);
    if (services.objects === undefined || credential === undefined || !ctx.rawBody.includes('file_id'))
      return undefined;
    // The calling key's id (the admission that names it comes after the bound).
    const resolved = resolveCredential(credential);
    if (resolved === null) return undefined;
    const keyId = keyIdOf(resolved.keyHash);
    const ids = [...new Set(fileIdsOf(ctx.body))].slice(0, MAX_STORED_FILE_READS);
    // Read together: one round trip on Redis (auto-pipelined), not one per file.
    const objects = services.objects;
    const owned = await Promise.all(ids.map((id) => ownedBy(objects, id, 'file', keyId)));
    const files = new Map<string, number>();
    ids.forEach((id, i) => {
      const tokens = storedFileTokens(owned[i]!);
      if (tokens !== undefined) files.set(id, tokens);
    });
    return files;
  }

  /** A call's refusal when its input cannot be bounded (core/metering/input-bound.ts). */
  const callRefusal: InputRefusal = (code, refersTo, references) =>
    new GatewayError(code, {
      message: `The call refers to ${refersTo}`,
      ...(code === 'reference_not_bounded' ? { details: { references } } : {}),
    });

  /**
   * The prompt bound of a token-metered call (docs/pricing.md "The bound"), by the rule batch input lines share
   * (core/metering/input-bound.ts): bytes, images, files by id or URL, unseen stored context, web search results.
   */
  function inputBound(
    body: unknown,
    rawBytes: number,
    model: string,
    endpoint: PricedEndpoint,
    hosted: HostedTools | undefined,
    unseen: string | undefined,
    storedFiles: ReadonlyMap<string, number> | undefined,
  ): number {
    const webSearchCalls = hosted?.tools.some((t) => t.tool === 'web_search') ? hosted.calls : 0;
    const entry = catalog.get(model);
    return inputTokensBound(
      {
        body,
        rawBytes,
        model,
        endpoint,
        imageRule: entry?.image_tokens,
        unseen,
        webSearchCalls,
        window: entry?.context_length,
        storedFiles,
      },
      config,
      callRefusal,
    );
  }

  /**
   * The price book's bound. With providers' own prices, a tier or tool only they price is no refusal yet: each
   * provider's bound decides (one that prices it with the book's rates refuses it there).
   */
  function bookBound(request: ReservationInput, providerPriced: boolean): ReservationResult | undefined {
    try {
      return pricing.reservation(request);
    } catch (err) {
      const code = err instanceof GatewayError ? err.code : undefined;
      if (providerPriced && (code === 'service_tier_not_priced' || code === 'tool_not_priced'))
        return undefined;
      throw err;
    }
  }

  function refusal(ctx: RequestContext, r: AdmitRefusal): GatewayError {
    // A rate-limit refusal carries X-RateLimit-* and Retry-After (core/ledger/errors.ts, limitError).
    const err = ledgerRefusalToError(r);
    if (r.code === 'payment_required' && ctx.local(AUTH)?.method === 'x_cashu' && wallet) {
      // X-Cashu itself carries the caller's token back (change-token stage: stateless pay-per-call); what
      // is missing is named in a NUT-18 request beside it.
      return withHeaders(err, {
        'X-Cashu-Payment-Request': wallet.createPaymentRequest({
          amountMsat: Math.max(1, r.shortfall),
          description: 'Amount missing to pay for this call',
        }),
      });
    }
    return err;
  }

  /**
   * The 402 of a call that came without a credential (the auth stage marked it UNPAID): every door's offer for
   * its bound, or today's 401 with the NUT-18 request when no invoice can be offered now (the mint gives no quote).
   */
  async function unpaidRefusal(ctx: RequestContext, maxMsat: number): Promise<GatewayError> {
    const offer = await ctx.local(DOOR_OFFER)?.(maxMsat);
    if (!offer) {
      return new GatewayError('missing_credentials', {
        ...(wallet
          ? {
              headers: {
                'X-Cashu': wallet.createPaymentRequest({
                  description: 'Pay per call with an eCash token (X-Cashu)',
                }),
              },
            }
          : {}),
      });
    }
    return new GatewayError('payment_required', {
      message: `This call needs payment: pay one of the offers (${(offer.details.payment_options as Array<{ door: string }>).map((o) => o.door).join(', ')}) for ${offer.details.amount_sats as number} sats, or send an API key`,
      // An unpaid call holds nothing: the whole bound is missing.
      details: { balance: 0, required: maxMsat, shortfall: Math.max(1, maxMsat), ...offer.details },
      headers: offer.headers,
    });
  }

  /** A Lightning door's balance is short: its 402 also offers a fresh invoice for the call's bound. */
  async function withFreshOffer(
    ctx: RequestContext,
    err: GatewayError,
    maxMsat: number,
  ): Promise<GatewayError> {
    const offer = await ctx.local(DOOR_OFFER)?.(maxMsat);
    if (!offer) return err;
    return new GatewayError(err.code, {
      message: err.message,
      details: { ...err.details, ...offer.details },
      headers: { ...err.headers, ...offer.headers },
    });
  }

  /** The call as the request states it: what is priced, the model (checked against the catalogue), a RELAY_PATHS
   *  path's listing. Unit-priced calls (images, audio, speech): model and units from the body, multipart included. */
  async function callShape(ctx: RequestContext): Promise<CallShape> {
    const endpoint = pricedEndpoint(ctx);
    const unit = isUnitEndpoint(endpoint)
      ? await callUnits(
          endpoint,
          { contentType: ctx.headers['content-type'], rawBody: ctx.rawBody, body: ctx.body },
          pricing.mode !== 'fixed',
        )
      : undefined;
    if (unit !== undefined) ctx.model = unit.model;
    const model = ctx.model ?? '';
    if (endpoint !== 'other') {
      if (model === '') throw new GatewayError('invalid_request', { message: 'model is required' });
      if (catalog.list().length > 0 && catalog.get(model) === undefined) {
        throw new GatewayError('not_found', { message: `Unknown model: ${model}` });
      }
      if (catalog.get(model)?.supports_vision === false && hasImageParts(ctx.body)) {
        throw new GatewayError('invalid_request', {
          message: `Model ${model} does not accept images (supports_vision is false in models.json)`,
        });
      }
    }
    // The catch-all relays only what RELAY_PATHS lists (the router refused the rest), at its literal price.
    const relay =
      ctx.routeTemplate === CATCH_ALL_TEMPLATE
        ? matchRelayPath(config.relayPaths, ctx.method, ctx.path)
        : undefined;
    if (ctx.routeTemplate === CATCH_ALL_TEMPLATE && relay === undefined) {
      throw new GatewayError('endpoint_not_enabled');
    }
    return { endpoint, model, unit, relay, tokenCall: relay === undefined && isTokenEndpoint(endpoint) };
  }

  /**
   * What bounds the call (docs/pricing.md "The bound"): the prompt bound with the stored context the provider reads
   * as input, the caller's max tokens, the tier asked for (its multiplier sizes the bound when it raises the price;
   * a tier the book does not price is refused), the choices, and the server-side tools it declares (each priced, or
   * refused; the bound holds the most calls the provider may make, written into the body).
   */
  async function callBound(ctx: RequestContext, shape: CallShape): Promise<CallBoundTerms> {
    const { endpoint, model, unit, tokenCall } = shape;
    const stored = tokenCall ? storedContext(ctx.body, endpoint as TokenEndpoint) : undefined;
    const contextTokens = await continuedTokens(stored?.previousResponseId);
    const tiered = tierAndSearch(ctx.body);
    const choices = tokenCall ? outputChoices(ctx.body, endpoint as TokenEndpoint) : 1;
    const tools: DeclaredTools | undefined = tokenCall
      ? declaredTools(ctx.body, endpoint as TokenEndpoint, model, config.hostedToolCallsMax)
      : undefined;
    const bound =
      endpoint === 'other' || unit !== undefined
        ? 0
        : inputBound(
            ctx.body,
            ctx.rawBody.length,
            model,
            endpoint,
            tools?.hosted,
            stored?.unseen,
            tokenCall ? await storedFilesOf(ctx) : undefined,
          ) + contextTokens;
    const maxTokens = unit !== undefined ? undefined : callerMaxTokens(ctx.body);
    const request: ReservationInput = {
      model,
      endpoint,
      promptTokensBound: bound,
      maxTokens,
      contextLength: catalog.get(model)?.context_length,
      units: unit?.units,
      variant: unit?.variant,
      serviceTier: tiered.serviceTier,
      choices,
      hostedTools: tools?.hosted,
    };
    return { bound, maxTokens, serviceTier: tiered.serviceTier, choices, tools, request };
  }

  /**
   * The bound priced by the price book or the providers' own prices. Providers with their own prices (model-based
   * pricing): the dearest that may serve the call, since failover can move it; settle charges the one that did. A
   * model only providers price (the price book has none) is priced from them alone. Throws not_found (model
   * pricing, unknown model) or price_unavailable — before any money moves. `auto`: the `"pricing": "auto"`
   * providers serving the call, made the only ones when the book does not price it.
   */
  function bookPrice(shape: CallShape, terms: CallBoundTerms, auto: AutoPricedCall | undefined): CallPrice {
    const { relay, model } = shape;
    if (auto?.only) return { auto };
    const providerPriced = pricing.mode === 'model' && providers.priced;
    const base = providerPriced ? catalog.usdRates(model) : undefined;
    try {
      let priced: ReservationResult | undefined = relay
        ? {
            maxMsat: relay.msat,
            minMsat: relay.msat,
            maxTokens: undefined,
            lowered: false,
            btcUsd: undefined,
          }
        : providerPriced && base === undefined
          ? undefined
          : bookBound(terms.request, providerPriced);
      let pricedRates: UsdRates | undefined;
      if (providerPriced && relay === undefined) {
        for (const p of providers.serving(model)) {
          const rates = p.ratesFor(model, base);
          if (rates === undefined) continue;
          const alt = pricing.reservation({ ...terms.request, rates });
          if (priced === undefined || alt.maxMsat > priced.maxMsat) {
            priced = alt;
            pricedRates = rates;
          }
        }
      }
      // Nobody prices it: the price book's refusal (not_found / model_not_priced), before any money moves.
      priced ??= pricing.reservation(terms.request);
      return { priced, pricedRates, auto };
    } catch (err) {
      // The price book does not price it, the auto-priced providers do: only they may serve the call.
      if (auto === undefined || auto.cards.size === 0) throw err;
      return { auto: { cards: auto.cards, only: true } };
    }
  }

  /** `"pricing": "auto"` providers: priced from their nodes' advertised prices, reserved for like any other (the
   *  dearest bound wins). */
  function autoPrice(
    shape: CallShape,
    terms: CallBoundTerms,
    price: CallPrice,
    auto: AutoPricedCall,
  ): CallPrice {
    const { model } = shape;
    const hostedTools = terms.tools?.hosted;
    if (auto.cards.size === 0 && price.priced === undefined) {
      throw new GatewayError('price_unavailable', {
        message: `No price for model ${model} yet: the nodes that serve it ("pricing": "auto") have not advertised one`,
      });
    }
    // Nodes advertise a web search price and no other tool's: another hosted tool cannot be bounded there.
    const unbounded = hostedTools?.tools.find((t) => t.tool !== 'web_search');
    if (unbounded !== undefined && hostedTools!.calls > 0) {
      throw new GatewayError('tool_not_priced', {
        message: `No price for ${unbounded.declaredAs} on model ${model}: the nodes serving it advertise none`,
      });
    }
    let { priced, pricedRates, autoCard } = price;
    for (const card of auto.cards.values()) {
      const b = nodeCallBound(card, {
        endpoint: shape.endpoint as TokenEndpoint,
        promptTokensBound: terms.bound,
        maxTokens: terms.maxTokens,
        contextLength: terms.request.contextLength,
        webSearchCalls: hostedTools === undefined ? 0 : hostedTools.calls,
        choices: terms.choices,
      });
      if (priced === undefined || b.maxMsat > priced.maxMsat) {
        priced = { ...b, lowered: b.maxTokens !== terms.maxTokens, btcUsd: priced?.btcUsd };
        autoCard = card;
        pricedRates = undefined;
      }
    }
    return { priced, pricedRates, autoCard, auto };
  }

  /** The call's price: the price book's or the providers', and the auto-priced nodes' (AUTO_PRICED). */
  function callPrice(
    ctx: RequestContext,
    shape: CallShape,
    terms: CallBoundTerms,
  ): CallPrice & {
    priced: ReservationResult;
  } {
    const auto =
      shape.relay === undefined && isTokenEndpoint(shape.endpoint)
        ? autoPricedFor(shape.model, providers.serving(shape.model))
        : undefined;
    let price = bookPrice(shape, terms, auto);
    if (price.auto !== undefined) {
      price = autoPrice(shape, terms, price, price.auto);
      ctx.setLocal(AUTO_PRICED, price.auto!);
    }
    const priced = price.priced;
    if (priced === undefined) throw new GatewayError('internal_error', { message: 'reserve: no price' });
    return { ...price, priced };
  }

  /**
   * The completion tokens `availableMsat` affords for THIS call: its prompt bound, its declared web search call and
   * its requested tier's multiplier, at the price the reservation was made at, after the adjustment and the charge
   * step. The one computation behind the 402's `affordable_max_tokens` and the CLAMP_MAX_TOKENS clamp, so a retry
   * with the number named is reserved in full.
   */
  function affordable(q: Quote, availableMsat: number, promptBound = q.terms.bound): number {
    const raw = unadjustedBudget(availableMsat, q.adjustment, q.step);
    const hostedTools = q.terms.tools?.hosted;
    return q.price.autoCard !== undefined
      ? Math.floor(
          nodeAffordableTokens(
            q.price.autoCard,
            promptBound,
            raw,
            hostedTools === undefined ? 0 : hostedTools.calls,
          ) / q.terms.choices,
        )
      : pricing.affordableMaxTokens(q.shape.model, promptBound, raw, q.shape.endpoint, q.price.pricedRates, {
          serviceTier: q.terms.serviceTier,
          choices: q.terms.choices,
          hostedTools,
        });
  }

  /**
   * What the 402 names: the tokens a retry that adds `"max_completion_tokens": N` (the longest of the fields, so
   * any of them fits) affords — the field's bytes count in that retry's prompt bound. Two passes: N's digits at
   * one digit, then at the first answer's digits (more bytes never afford more tokens).
   */
  function affordableOnRetry(q: Quote, availableMsat: number): number {
    const first = affordable(q, availableMsat, q.terms.bound + RETRY_FIELD_BYTES + 1);
    if (!Number.isFinite(first) || first < 10) return first;
    return affordable(q, availableMsat, q.terms.bound + RETRY_FIELD_BYTES + String(first).length);
  }

  /** The ledger's refusal as the client gets it: a short Lightning door's fresh invoice beside it, and the tokens
   *  the balance affords when the caller set no max tokens. */
  async function admitRefusal(ctx: RequestContext, q: Quote, r: AdmitRefusal): Promise<GatewayError> {
    // An unknown key is no usable credential: limited per client IP like a missing one.
    if (r.code === 'invalid_api_key') {
      auditUnknownKey(ctx);
      await limitAnonymous(ctx, services);
    }
    let err = refusal(ctx, r);
    // A Lightning door's balance is short: the next invoice is offered beside the refusal.
    if (r.code === 'payment_required' && ctx.local(DOOR_OFFER) !== undefined) {
      err = await withFreshOffer(ctx, err, q.maxMsat);
    }
    if (r.code === 'payment_required' && q.wholeMaximum) {
      const afford = affordableOnRetry(q, r.balance);
      return affordableRefusal(err, Number.isFinite(afford) ? Math.max(0, Math.floor(afford)) : 0);
    }
    return err;
  }

  /** What the later stages read of the admitted call: the admission, the priced call, the caller, the reservation. */
  function recordAdmission(
    ctx: RequestContext,
    q: Quote,
    r: Admission,
    method: AuthInfo['method'],
  ): ReservationInfo {
    const { endpoint, model, unit, relay } = q.shape;
    const priced = q.price.priced;
    ctx.setLocal(ADMISSION, r);
    ctx.setLocal(PRICED_CALL, {
      endpoint,
      model,
      btcUsd: priced.btcUsd,
      ...(q.terms.bound > 0 ? { promptTokensBound: q.terms.bound } : {}),
      ...(unit !== undefined ? { units: unit.units } : {}),
      ...(unit?.variant !== undefined ? { variant: unit.variant } : {}),
      // Known now when nothing is metered afterwards (flat calls, audio, speech): X-Node-Cost can go in
      // the head even when the body streams. Images are charged for what comes back.
      ...((pricing.mode === 'fixed' && q.price.auto === undefined) ||
      endpoint === 'other' ||
      endpoint === 'free' ||
      endpoint === 'audio' ||
      endpoint === 'speech'
        ? { exactMsat: q.chargeOf(priced.maxMsat) }
        : {}),
      ...(relay !== undefined ? { relayMsat: relay.msat } : {}),
      ...(q.terms.tools?.searchPerCall ? { searchPerCall: true } : {}),
    });
    ctx.setLocal(AUTH, { accountId: r.accountId, keyId: r.key.keyId, method, isChild: r.key.isChild });
    const reservation: ReservationInfo = {
      id: q.requestId,
      amountMsats: r.reservedMsat,
      maxTokens: priced.maxTokens,
    };
    ctx.setLocal(RESERVATION, reservation);
    return reservation;
  }

  /**
   * A call that sets no cap, on a model whose context length is unknown: nothing but the gateway bounds what the
   * provider may write, so the cap the bound priced is written into the body (./completion-cap.ts).
   */
  function tellCap(ctx: RequestContext, q: Quote): void {
    const { priced } = q.price;
    if (
      q.terms.maxTokens === undefined &&
      priced.lowered &&
      priced.maxTokens !== undefined &&
      isTokenEndpoint(q.shape.endpoint) &&
      ctx.body !== null &&
      typeof ctx.body === 'object'
    ) {
      (ctx.body as Record<string, unknown>)[capField(q.shape.endpoint)] = priced.maxTokens;
      ctx.markBodyModified();
    }
  }

  /** CLAMP_MAX_TOKENS=true: the balance cannot cover the model's maximum and the caller set no limit: the
   *  forwarded request gets what it affords. */
  function clampMaxTokens(ctx: RequestContext, q: Quote, r: Admission, reservation: ReservationInfo): void {
    const { endpoint, unit } = q.shape;
    if (
      config.clampMaxTokens &&
      q.terms.maxTokens === undefined &&
      endpoint !== 'other' &&
      endpoint !== 'embeddings' &&
      unit === undefined &&
      r.reservedMsat < q.price.priced.maxMsat &&
      ctx.body !== null &&
      typeof ctx.body === 'object'
    ) {
      const afford = affordable(q, r.reservedMsat);
      if (Number.isFinite(afford) && afford >= 0) {
        (ctx.body as Record<string, unknown>)[capField(endpoint as TokenEndpoint)] = afford;
        ctx.markBodyModified();
        reservation.maxTokens = afford;
      }
    }
  }

  /** The call's price and how it is admitted: the adjustment, the charge step, the reservation's id and bounds. */
  function quoteOf(
    ctx: RequestContext,
    shape: CallShape,
    terms: CallBoundTerms,
    auth: AuthInfo | undefined,
  ): Quote {
    const price = callPrice(ctx, shape, terms);
    // A pricing policy's adjustment (plugin kit) applies to the bound and, in settle, to the charge.
    const adjustment = ctx.local(PRICE_ADJUSTMENT);
    // A call paid with an eCash token (X-Cashu or bearer) is charged in whole units of it (CHARGE_STEP):
    // bound and charge rounded up, so its identity never keeps a sub-unit rest that no refund can pay.
    const step = auth?.method === 'api_key' ? undefined : unitStep(perCallUnit(ctx, services.wallet));
    if (step !== undefined) ctx.setLocal(CHARGE_STEP, step);
    const chargeOf = (msat: number) => inWholeUnits(adjustedPrice(msat, adjustment), step);
    // Owned by this process (core/ledger/owner.ts): released by any live process if this one dies. A background
    // response's is owned by none and lives as long as a batch's: the watcher settles it once the provider
    // ends the response (core/batches/background-responses.ts).
    const background = isBackgroundResponse(shape.endpoint, ctx.body);
    // Money honesty (docs/pricing.md): with no max_tokens from the caller, the balance must cover the
    // model's maximum, else 402 naming what it affords; CLAMP_MAX_TOKENS=true forwards that lower
    // max_tokens instead. (Fixed pricing: the price does not depend on tokens, nothing to name.)
    const wholeMaximum =
      terms.maxTokens === undefined &&
      shape.unit === undefined &&
      completes(shape.endpoint) &&
      (pricing.mode !== 'fixed' || price.auto !== undefined) &&
      !config.clampMaxTokens;
    return {
      shape,
      terms,
      price,
      adjustment,
      step,
      chargeOf,
      background,
      requestId: background ? backgroundReservationId() : ownedId('r'),
      maxMsat: chargeOf(price.priced.maxMsat),
      wholeMaximum,
    };
  }

  /** One ledger round trip: key checks, model allow-list, rate limits and the reservation together. */
  function admit(
    ctx: RequestContext,
    q: Quote,
    credential: Credential,
    auth: AuthInfo,
  ): Promise<AdmitResult> {
    return ledger.admit({
      credential,
      requestId: q.requestId,
      model: q.shape.model,
      clientIp: ctx.clientIp,
      maxMsat: q.maxMsat,
      // The bound is a bound (docs/pricing.md "The bound"): a token-metered call whose cap the caller set is
      // reserved in full or refused, never admitted on part of it (the provider may bill all of it). Only
      // CLAMP_MAX_TOKENS, which lowers the forwarded cap to what is reserved, admits less than the maximum.
      minMsat:
        q.wholeMaximum || (q.terms.maxTokens !== undefined && q.shape.tokenCall)
          ? q.maxMsat
          : Math.min(q.chargeOf(q.price.priced.minMsat), q.maxMsat),
      expiresInMs: q.background ? BACKGROUND_RESERVATION_MS : config.reservationExpiryMs,
      limits: config.limits,
      // Pay-per-call tokens are spent once; their change is computed while the call runs (change-token). A
      // background response outlives the call: never from a credit lease.
      ...(auth.method === 'x_cashu' || q.background ? { exactPath: true } : {}),
    });
  }

  return {
    name: 'reserve',
    after: ['auth'],
    async onRequest(ctx) {
      const unpaid = ctx.local(UNPAID) === true;
      const credential = ctx.local(CREDENTIAL);
      const auth = ctx.local(AUTH);
      if (!unpaid && (!credential || !auth)) {
        throw new GatewayError('internal_error', { message: 'reserve: the auth stage must run before it' });
      }
      const shape = await callShape(ctx);
      const terms = await callBound(ctx, shape);
      const q = quoteOf(ctx, shape, terms, auth);
      // No credential: nothing to admit; the 402 offers every door for this call's bound (before any money moves).
      if (unpaid || !credential || !auth) throw await unpaidRefusal(ctx, q.maxMsat);
      const r = await admit(ctx, q, credential, auth);
      if (!r.ok) throw await admitRefusal(ctx, q, r);
      const reservation = recordAdmission(ctx, q, r, auth.method);
      if (!allowListPermits(r.key.allowedIps, ctx.clientIp)) {
        // Released by the settle stage's final hook as well; released here so the refusal costs nothing now.
        await ledger.release({ accountId: r.accountId, requestId: q.requestId });
        ctx.setLocal(RESERVATION, undefined);
        throw new GatewayError('ip_not_allowed');
      }
      // The hosted-tool calls the bound holds, written into the body so the provider keeps to them.
      if (terms.tools?.limit !== undefined && ctx.body !== null && typeof ctx.body === 'object') {
        terms.tools.limit(ctx.body as Record<string, unknown>);
        ctx.markBodyModified();
      }
      tellCap(ctx, q);
      clampMaxTokens(ctx, q, r, reservation);
      return undefined;
    },
  };
};

/** The call as the request states it (reserve's first step). */
interface CallShape {
  endpoint: PricedEndpoint;
  model: string;
  /** Unit endpoints: the units and variant read from the body. */
  unit: CallUnits | undefined;
  /** A RELAY_PATHS call: its listed price. */
  relay: ReturnType<typeof matchRelayPath>;
  /** Token-metered (not a RELAY_PATHS call). */
  tokenCall: boolean;
}

/** What bounds a call's cost (reserve's second step). */
interface CallBoundTerms {
  /** Prompt tokens bound, stored context included. */
  bound: number;
  maxTokens: number | undefined;
  serviceTier: string | undefined;
  choices: number;
  tools: DeclaredTools | undefined;
  /** The pricing service's input. */
  request: ReservationInput;
}

/** The bound priced: by the book or providers (`pricedRates`: the dearest provider's), or an auto-priced node's. */
interface CallPrice {
  priced?: ReservationResult | undefined;
  pricedRates?: UsdRates | undefined;
  auto?: AutoPricedCall | undefined;
  /** The auto-priced node's card whose bound is the reservation's. */
  autoCard?: RateCard | undefined;
}

/** A call priced and ready for admission. */
interface Quote {
  shape: CallShape;
  terms: CallBoundTerms;
  price: CallPrice & { priced: ReservationResult };
  adjustment: PriceAdjustment | undefined;
  step: number | undefined;
  /** A price after the adjustment and the charge step: what is reserved and charged. */
  chargeOf: (msat: number) => number;
  background: boolean;
  requestId: string;
  maxMsat: number;
  /** The caller set no max tokens: the balance must cover the model's maximum (else 402 naming what it affords). */
  wholeMaximum: boolean;
}
