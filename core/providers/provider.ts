import type { UsdRates } from '../pricing/types.js';
import { dimensionPrices } from '../upstream/model-catalog.js';
import { UpstreamClient } from '../upstream/upstream-client.js';
import type {
  BreakerOptions,
  BreakerSnapshot,
  CircuitBreaker,
  Provider as ProviderApi,
  ProviderSpec,
  ProviderStatus,
} from './types.js';

/**
 * One model provider (an entry of the providers file, see providers.ts) with its pool and circuit breaker. What
 * the plugin contract, the routing policies (routing-policy.ts) and the stages see of it (`Provider`,
 * `ProviderSpec`, `CircuitBreaker`) is in ./types.ts.
 */

/** The provider is another Cashu-priced node paid from the operator's wallet (per call or by a prepaid key). */
export function isPaidNode(spec: ProviderSpec): boolean {
  return spec.payment === 'cashu' || spec.payment === 'cashu-balance';
}

export class Breaker implements CircuitBreaker {
  private consecutive = 0;
  private openedAt: number | null = null;
  private probing = false;

  constructor(private readonly opts: BreakerOptions) {}

  /** Would a call be let through now (without claiming the half-open probe)? */
  allows(now?: number): boolean {
    if (this.openedAt === null) return true;
    if ((now ?? Date.now()) - this.openedAt < this.opts.cooldownMs) return false;
    return !this.probing;
  }

  /**
   * A call wants to go to this provider: true when it may. Closed: always. Open: never during the cool-down;
   * after it, the first caller claims the one half-open probe (true) and everyone else is refused (false) until
   * the probe's outcome is reported (`success`, `failure`, or `abandon`).
   */
  acquire(now?: number): boolean {
    if (this.openedAt === null) return true; // the common case: closed, no clock read
    if ((now ?? Date.now()) - this.openedAt < this.opts.cooldownMs || this.probing) return false;
    this.probing = true;
    return true;
  }

  success(): void {
    this.consecutive = 0;
    this.openedAt = null;
    this.probing = false;
  }

  failure(now = Date.now()): void {
    this.consecutive++;
    if (this.probing || this.consecutive >= this.opts.failures) this.openedAt = now;
    this.probing = false;
  }

  /** A call it let through ended with no verdict on the provider (the client went away): free the probe. */
  abandon(): void {
    this.probing = false;
  }

  status(now = Date.now()): ProviderStatus {
    if (this.openedAt !== null) return now - this.openedAt < this.opts.cooldownMs ? 'down' : 'degraded';
    return this.consecutive > 0 ? 'degraded' : 'active';
  }

  /** The breaker's state for an operator (the admin console): read only, changes nothing. */
  snapshot(now = Date.now()): BreakerSnapshot {
    const state =
      this.openedAt === null ? 'closed' : now - this.openedAt < this.opts.cooldownMs ? 'open' : 'half_open';
    return {
      state,
      consecutiveFailures: this.consecutive,
      openedAtMs: this.openedAt,
      retryAtMs: state === 'open' && this.openedAt !== null ? this.openedAt + this.opts.cooldownMs : null,
    };
  }
}

export class Provider implements ProviderApi {
  readonly client: UpstreamClient;
  readonly breaker: Breaker;
  /** EWMA of the time to the response head, ms; null until measured. */
  ttfbMs: number | null = null;
  private readonly modelSet: Set<string> | null;

  constructor(
    readonly spec: ProviderSpec,
    breaker: BreakerOptions,
    client?: UpstreamClient,
  ) {
    this.client =
      client ??
      new UpstreamClient({
        baseUrl: spec.baseUrl,
        apiKey: spec.apiKey,
        connections: spec.maxConnections,
        timeoutMs: spec.timeoutMs,
        headers: spec.headers,
        api: spec.api,
      });
    this.breaker = new Breaker(breaker);
    this.modelSet = spec.models === '*' ? null : new Set(spec.models);
  }

  get name(): string {
    return this.spec.name;
  }

  serves(model: string | undefined): boolean {
    return this.modelSet === null || (model !== undefined && this.modelSet.has(model));
  }

  /** The models it names, or null for "all". */
  get namedModels(): string[] | null {
    return this.modelSet === null ? null : [...this.modelSet];
  }

  private readonly ratesCache = new Map<string, { base: UsdRates | undefined; rates: UsdRates }>();

  /**
   * The USD rates this provider charges for `model`: its declared `pricing` over the price book's rates (`base`);
   * undefined when it declares none for the model (the price book applies). The same object per (model, base),
   * so the pricing service's per-rates cache holds.
   */
  ratesFor(model: string, base: UsdRates | undefined): UsdRates | undefined {
    const p = this.spec.pricing[model];
    if (!p) return undefined;
    const hit = this.ratesCache.get(model);
    if (hit && hit.base === base) return hit.rates;
    const own = dimensionPrices(p);
    const rates: UsdRates = {
      ...base,
      ...(p.prompt !== undefined ? { promptUsdPerToken: p.prompt } : {}),
      ...(p.completion !== undefined ? { completionUsdPerToken: p.completion } : {}),
      requestUsd: p.request ?? base?.requestUsd ?? '0',
      // The provider's own image price replaces the price book's, sizes included (they would override it).
      ...(p.image !== undefined ? { imageUsd: p.image, imageSizes: undefined } : {}),
      ...(own !== undefined ? { dimensions: { ...base?.dimensions, ...own } } : {}),
      ...(p.service_tiers !== undefined ? { serviceTiers: p.service_tiers } : {}),
    };
    this.ratesCache.set(model, { base, rates });
    return rates;
  }

  recordTtfb(ms: number): void {
    this.ttfbMs = this.ttfbMs === null ? ms : this.ttfbMs * 0.8 + ms * 0.2;
  }

  /** Prompt + completion USD per token for `cheapest`; Infinity when this provider declares no price. */
  priceScore(model: string | undefined): number {
    const p = model === undefined ? undefined : this.spec.pricing[model];
    if (!p) return Number.POSITIVE_INFINITY;
    return Number(p.prompt ?? 0) + Number(p.completion ?? 0) + Number(p.request ?? 0) / 1000;
  }
}
