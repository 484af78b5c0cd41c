import { GatewayError } from '../errors.js';
import type { Logger } from '../log.js';
import { DIMENSIONS, type DimensionKey } from '../pricing/dimensions.js';
import { nodeRateCard } from '../pricing/node-rates.js';
import type { RateCard } from '../pricing/rate-card.js';
import type { NodeRateCards, Provider } from './types.js';

/**
 * The prices other nodes advertise (their `GET /v1/models`: `pricing.prompt_msats` / `completion_msats` per 1,000
 * tokens, `request_msats`, `dimension_msats`, and `context_length`), for the providers that are such nodes
 * (`"payment": "cashu"` or `"cashu-balance"`). One table per node, shared by what reads it:
 *
 * - the per-call token of a `cashu` node is sized to them (node-payment.ts);
 * - a provider with `"pricing": "auto"` charges them × its markup (core/pricing/node-rates.ts): the reserve and
 *   settle stages read its rate cards synchronously (`autoCard`).
 *
 * A table is reused for PRICE_TTL_MS, then read again: by the next call that needs it (`get`), by a synchronous
 * reader in the background, or by the refresh timer (`start`, auto-priced nodes). A node that answered 402 is
 * read again at once (`stale`). A failed read keeps the last table (a reader of a node never read gets nothing:
 * the call does not go there).
 */

/** How long a node's prices are reused. */
export const PRICE_TTL_MS = 60_000;

/** A node's price of one model, from its `/v1/models`. */
export interface NodePrice {
  promptMsatPer1k: number;
  completionMsatPer1k: number;
  requestMsat: number;
  contextLength: number | undefined;
  /** `dimension_msats` (per 1,000 tokens; `web_search` per call), when the node lists them. */
  dimensionMsats?: Partial<Record<DimensionKey, number>>;
}

interface Table {
  at: number;
  models: Map<string, NodePrice>;
  /** Auto-priced providers: the rate card of each priced model (× the provider's markup). */
  cards: Map<string, RateCard>;
}

const DIMENSION_KEYS = new Set<string>(DIMENSIONS.map((d) => d.key));

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;
}

/** The priced models of a `/v1/models` answer's `data` (a model without all three prices is left out). */
export function parseNodePrices(items: unknown): Map<string, NodePrice> {
  const models = new Map<string, NodePrice>();
  for (const item of Array.isArray(items) ? items : []) {
    const m = item as { id?: unknown; context_length?: unknown; pricing?: Record<string, unknown> };
    const pr = m.pricing;
    if (typeof m.id !== 'string' || pr === undefined || pr === null || typeof pr !== 'object') continue;
    const prompt = num(pr.prompt_msats);
    const completion = num(pr.completion_msats);
    const request = num(pr.request_msats);
    // A null price (no fresh BTC price at the node) leaves the model unpriced: not paid or resold blind.
    if (prompt === undefined || completion === undefined || request === undefined) continue;
    const price: NodePrice = {
      promptMsatPer1k: prompt,
      completionMsatPer1k: completion,
      requestMsat: request,
      contextLength: num(m.context_length),
    };
    const dims = pr.dimension_msats;
    if (dims !== null && typeof dims === 'object' && !Array.isArray(dims)) {
      const out: Partial<Record<DimensionKey, number>> = {};
      for (const [k, v] of Object.entries(dims)) {
        const n = num(v);
        if (DIMENSION_KEYS.has(k) && n !== undefined) out[k as DimensionKey] = n;
      }
      if (Object.keys(out).length > 0) price.dimensionMsats = out;
    }
    models.set(m.id, price);
  }
  return models;
}

export interface NodePricesDeps {
  log: Logger;
  /** Prices fetch (tests may pass their own); default global fetch. */
  fetch?: typeof fetch;
}

export class NodePrices implements NodeRateCards {
  private readonly tables = new Map<string, Table>();
  private readonly reading = new Map<string, Promise<Table>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: NodePricesDeps) {}

  /** The node's priced models, read again when older than PRICE_TTL_MS. @throws GatewayError `upstream_error`. */
  async get(p: Provider): Promise<Map<string, NodePrice>> {
    const t = this.tables.get(p.name);
    if (t !== undefined && Date.now() - t.at <= PRICE_TTL_MS) return t.models;
    return (await this.read(p)).models;
  }

  /** The node's price of `model`. @throws GatewayError `upstream_error` (not listed, or the node did not answer). */
  async price(p: Provider, model: string | undefined): Promise<NodePrice> {
    const price = model === undefined ? undefined : (await this.get(p)).get(model);
    if (price === undefined) {
      throw new GatewayError('upstream_error', {
        message: `The node ${p.name} lists no price for the model ${model ?? ''}`,
        details: { provider: p.name },
      });
    }
    return price;
  }

  /** The node's prices changed (it answered 402): the next reader reads them again; the table stays meanwhile. */
  stale(p: Provider): void {
    const t = this.tables.get(p.name);
    if (t !== undefined) t.at = 0;
  }

  /**
   * An auto-priced provider's rate card for `model` (its node's price × markup), synchronously; undefined when the
   * node was never read or lists no price for it. A table past PRICE_TTL_MS is read again in the background.
   */
  autoCard(p: Provider, model: string): RateCard | undefined {
    const t = this.tables.get(p.name);
    if (t === undefined || Date.now() - t.at > PRICE_TTL_MS) this.refresh(p);
    return t?.cards.get(model);
  }

  /** Reads the node's prices in the background (failures logged; the last table stays). */
  refresh(p: Provider): void {
    this.read(p).catch((err: unknown) => {
      this.deps.log.warn(
        { provider: p.name, err: (err as Error).message },
        'could not read the prices of a node (the last ones stay in use)',
      );
    });
  }

  /** Reads the auto-priced providers' prices every PRICE_TTL_MS (unref'd). */
  start(providers: readonly Provider[]): void {
    const auto = providers.filter((p) => p.spec.autoPricing !== undefined);
    if (auto.length === 0 || this.timer !== undefined) return;
    this.timer = setInterval(() => {
      for (const p of auto) this.refresh(p);
    }, PRICE_TTL_MS);
    this.timer.unref();
  }

  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One read per node at a time. */
  private read(p: Provider): Promise<Table> {
    let r = this.reading.get(p.name);
    if (r === undefined) {
      r = this.fetchTable(p).finally(() => this.reading.delete(p.name));
      this.reading.set(p.name, r);
    }
    return r;
  }

  private async fetchTable(p: Provider): Promise<Table> {
    const f = this.deps.fetch ?? fetch;
    let items: unknown;
    try {
      const res = await f(`${p.spec.baseUrl}/models`, {
        headers: { accept: 'application/json', ...p.spec.headers },
        signal: AbortSignal.timeout(Math.min(p.spec.timeoutMs, 10_000)),
      });
      if (!res.ok) throw new Error(`status ${res.status}`);
      items = ((await res.json()) as { data?: unknown }).data;
    } catch (err) {
      throw new GatewayError('upstream_error', {
        message: `The node ${p.name} did not list its prices (${(err as Error).message})`,
        details: { provider: p.name },
      });
    }
    const models = parseNodePrices(items);
    const cards = new Map<string, RateCard>();
    const markup = p.spec.autoPricing?.markup;
    if (markup !== undefined) {
      for (const [id, price] of models) {
        try {
          cards.set(id, nodeRateCard(price, markup));
        } catch (err) {
          // A price the exact arithmetic cannot read: that model stays unpriced here (never charged at zero).
          this.deps.log.warn(
            { provider: p.name, model: id, err: (err as Error).message },
            'unusable node price',
          );
        }
      }
    }
    const table = { at: Date.now(), models, cards };
    this.tables.set(p.name, table);
    return table;
  }
}
