import { readFileSync } from 'node:fs';
import { ConfigError } from '../config.js';
import type { Logger } from '../log.js';

/**
 * The model list: the provider's `GET ${UPSTREAM_BASE_URL}/models` (cached, refreshed periodically; a failed
 * refresh keeps the last good list) merged with the operator's optional `models.json` (MODELS_PATH), whose
 * entries override the provider's by id, field by field.
 *
 * Prices follow the OpenRouter convention used by models.json (spec §2.6): decimal STRINGS of USD per
 * token (`prompt`, `completion`), USD per request (`request`) and per image (`image`). Strings keep the
 * operator's exact decimals; the pricing service does the arithmetic.
 */

export interface ModelPricing {
  prompt: string;
  completion: string;
  request: string;
  image?: string;
}

export interface CatalogModel {
  id: string;
  name: string;
  /** Unix seconds. */
  created: number;
  owned_by: string;
  context_length?: number;
  pricing?: ModelPricing;
  supports_vision?: boolean;
}

export interface UsdRates {
  promptUsdPerToken: string;
  completionUsdPerToken: string;
  requestUsd: string;
}

export interface ModelCatalogOptions {
  /** Fetches the provider's model list (UpstreamClient.getJson). */
  fetchModels?: () => Promise<unknown>;
  modelsPath?: string | undefined;
  /** Refresh period of the provider list; default 10 minutes. */
  refreshMs?: number;
  /** `owned_by` for models that do not say. */
  ownedBy?: string;
  log?: Logger;
}

/** More than this many models from a provider are ignored (bounded memory). */
const MAX_MODELS = 10_000;
const DECIMAL = /^\d+(\.\d+)?([eE]-?\d+)?$/;

export class ModelCatalog {
  private upstreamModels = new Map<string, CatalogModel>();
  private fileModels = new Map<string, Partial<CatalogModel> & { id: string }>();
  private merged = new Map<string, CatalogModel>();
  private timer: NodeJS.Timeout | undefined;
  private readonly startedAt = Math.floor(Date.now() / 1000);
  /** When the provider list was last fetched successfully (ms epoch), if ever. */
  lastRefresh: number | undefined;

  constructor(private readonly opts: ModelCatalogOptions = {}) {
    if (opts.modelsPath !== undefined) this.loadFile(opts.modelsPath);
    this.rebuild();
  }

  /** Fetches the provider list once (failures tolerated) and schedules periodic refreshes. */
  async start(): Promise<void> {
    await this.refresh();
    const every = this.opts.refreshMs ?? 10 * 60_000;
    if (this.opts.fetchModels !== undefined && every > 0) {
      this.timer = setInterval(() => void this.refresh(), every);
      this.timer.unref();
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Re-fetches the provider list; returns false (keeping the old list) when that fails. */
  async refresh(): Promise<boolean> {
    if (this.opts.fetchModels === undefined) return false;
    try {
      const doc = await this.opts.fetchModels();
      this.upstreamModels = parseProviderList(doc, this.opts.ownedBy ?? 'upstream', this.startedAt);
      this.lastRefresh = Date.now();
      this.rebuild();
      return true;
    } catch (err) {
      this.opts.log?.warn(
        { reason: err instanceof Error ? err.message : String(err) },
        'could not fetch the upstream model list; keeping the last known list',
      );
      return false;
    }
  }

  /** Reads and validates models.json; a broken file stops the start with a message naming it. */
  loadFile(path: string): void {
    let doc: unknown;
    try {
      doc = JSON.parse(readFileSync(path, 'utf8'));
    } catch (err) {
      throw new ConfigError(`MODELS_PATH ${path} is not a readable JSON file: ${(err as Error).message}`);
    }
    const models = (doc as { models?: unknown })?.models;
    if (!Array.isArray(models))
      throw new ConfigError(`MODELS_PATH ${path}: expected an object with a "models" array`);
    const out = new Map<string, Partial<CatalogModel> & { id: string }>();
    models.forEach((m: unknown, i: number) => {
      const e = m as Record<string, unknown>;
      const where = `MODELS_PATH ${path}: models[${i}]`;
      if (typeof e?.id !== 'string' || e.id === '')
        throw new ConfigError(`${where}.id must be a non-empty string`);
      const entry: Partial<CatalogModel> & { id: string } = { id: e.id };
      if (e.name !== undefined) {
        if (typeof e.name !== 'string') throw new ConfigError(`${where}.name must be a string`);
        entry.name = e.name;
      }
      if (e.context_length !== undefined) {
        if (!Number.isInteger(e.context_length) || (e.context_length as number) <= 0) {
          throw new ConfigError(`${where}.context_length must be a positive integer`);
        }
        entry.context_length = e.context_length as number;
      }
      if (e.supports_vision !== undefined) entry.supports_vision = e.supports_vision === true;
      if (e.pricing !== undefined) {
        const p = parsePricing(e.pricing);
        if (p === undefined) {
          throw new ConfigError(
            `${where}.pricing must have decimal strings prompt, completion, request (USD per token / per request)`,
          );
        }
        entry.pricing = p;
      }
      out.set(e.id, entry);
    });
    this.fileModels = out;
    this.rebuild();
  }

  list(): CatalogModel[] {
    return [...this.merged.values()];
  }

  get(id: string): CatalogModel | undefined {
    return this.merged.get(id);
  }

  /** USD rates of a model as decimal strings, when its prices are known. */
  usdRates(id: string): UsdRates | undefined {
    const p = this.merged.get(id)?.pricing;
    if (p === undefined) return undefined;
    return { promptUsdPerToken: p.prompt, completionUsdPerToken: p.completion, requestUsd: p.request };
  }

  private rebuild(): void {
    const merged = new Map<string, CatalogModel>();
    for (const [id, m] of this.upstreamModels) merged.set(id, m);
    for (const [id, f] of this.fileModels) {
      const base = merged.get(id) ?? {
        id,
        name: id,
        created: this.startedAt,
        owned_by: this.opts.ownedBy ?? 'upstream',
      };
      merged.set(id, { ...base, ...f, name: f.name ?? base.name });
    }
    this.merged = merged;
  }
}

function asDecimal(v: unknown): string | undefined {
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return String(v);
  if (typeof v === 'string' && DECIMAL.test(v.trim())) return v.trim();
  return undefined;
}

function parsePricing(v: unknown): ModelPricing | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  const prompt = asDecimal(o.prompt);
  const completion = asDecimal(o.completion);
  const request = o.request === undefined ? '0' : asDecimal(o.request);
  if (prompt === undefined || completion === undefined || request === undefined) return undefined;
  const p: ModelPricing = { prompt, completion, request };
  const image = asDecimal(o.image);
  if (image !== undefined) p.image = image;
  return p;
}

/** Accepts OpenAI (`{data:[{id, created, owned_by}]}`) and OpenRouter (adds name, pricing, context_length). */
export function parseProviderList(doc: unknown, ownedBy: string, now: number): Map<string, CatalogModel> {
  const data = (doc as { data?: unknown })?.data;
  if (!Array.isArray(data)) throw new Error('the upstream model list has no "data" array');
  const out = new Map<string, CatalogModel>();
  for (const item of data.slice(0, MAX_MODELS)) {
    const e = item as Record<string, unknown>;
    if (typeof e?.id !== 'string' || e.id === '') continue;
    const m: CatalogModel = {
      id: e.id,
      name: typeof e.name === 'string' ? e.name : e.id,
      created: Number.isInteger(e.created) ? (e.created as number) : now,
      owned_by: typeof e.owned_by === 'string' ? e.owned_by : ownedBy,
    };
    const ctxLen = e.context_length ?? e.context_window;
    if (Number.isInteger(ctxLen) && (ctxLen as number) > 0) m.context_length = ctxLen as number;
    const pricing = parsePricing(e.pricing);
    if (pricing !== undefined) m.pricing = pricing;
    if (e.supports_vision === true) m.supports_vision = true;
    out.set(m.id, m);
  }
  return out;
}
