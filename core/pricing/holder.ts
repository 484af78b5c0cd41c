import type {
  CostInput,
  CostResult,
  EstimateInput,
  EstimateResult,
  ModelPrice,
  PricedEndpoint,
  Pricing,
  PricingMode,
  PricingService,
  ReservationInput,
  ReservationResult,
  UsdRates,
} from './types.js';

/**
 * The pricing service every stage and route holds: a fixed object whose current terms can be swapped at run
 * time (PATCH /admin/api/settings) in one assignment, so a call never sees half-old, half-new terms and no
 * one copies properties onto a live service object. A call priced at admission keeps the BTC price of its
 * reservation (settle passes it back), whatever is swapped in between.
 */
export class PricingHolder implements PricingService {
  private current: Pricing;

  constructor(initial: Pricing) {
    this.current = initial;
  }

  /** Replaces the terms; the next call prices with `next`. */
  swap(next: Pricing): void {
    this.current = next;
  }

  get mode(): PricingMode {
    return this.current.mode;
  }

  cost(input: CostInput): CostResult {
    return this.current.cost(input);
  }

  reservation(input: ReservationInput): ReservationResult {
    return this.current.reservation(input);
  }

  affordableMaxTokens(
    model: string,
    promptTokensBound: number,
    availableMsat: number,
    endpoint?: PricedEndpoint,
    rates?: UsdRates,
    extra?: Parameters<Pricing['affordableMaxTokens']>[5],
  ): number {
    return this.current.affordableMaxTokens(model, promptTokensBound, availableMsat, endpoint, rates, extra);
  }

  estimate(input: EstimateInput): EstimateResult {
    return this.current.estimate(input);
  }

  modelPrice(model: string, rates?: UsdRates): ModelPrice {
    return this.current.modelPrice(model, rates);
  }
}
