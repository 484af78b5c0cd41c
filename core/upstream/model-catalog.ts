import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import { ConfigError } from '../config.js';
import type { Logger } from '../log.js';
import { parseImageTokenRule } from '../metering/image-bound.js';
import { EXTRA_DIMENSION_KEYS } from '../pricing/dimensions.js';
import { parseDecimal } from '../pricing/rational.js';
import type { ExtraDimensionKey, UsdRates } from '../pricing/types.js';
import type { CatalogModel, ModelCatalog as ModelCatalogApi, ModelPricing } from './types.js';

/**
 * The model list: the provider's `GET ${UPSTREAM_BASE_URL}/models` (cached, refreshed periodically; a failed
 * refresh keeps the last good list) merged with the operator's optional `models.json` (MODELS_PATH), whose
 * entries override the provider's by id, field by field.
 *
 * Prices follow the OpenRouter convention used by models.json (docs/pricing.md, "The price book"): decimal
 * STRINGS of USD per token (`prompt`, `completion`), USD per request (`request`) and per image (`image`).
 * Strings keep the operator's exact decimals; the pricing service does the arithmetic.
 */

export type { UsdRates } from '../pricing/types.js';

export interface ModelCatalogOptions {
  /** Fetches the provider's model list (UpstreamClient.getJson). */
  fetchModels?: () => Promise<unknown>;
  modelsPath?: string | undefined;
  /** Refresh period of the provider list; default 10 minutes. */
  refreshMs?: number;
  /**
   * After a failed fetch, the list is fetched again after this delay, doubling on each failure up to
   * `retryMaxMs` (default the smaller of 60 s and `refreshMs`), until it answers: a gateway whose upstream
   * started after it lists the upstream's models within seconds, not at the next periodic refresh. Default 1 s.
   */
  retryMs?: number;
  retryMaxMs?: number;
  /** `owned_by` for models that do not say. */
  ownedBy?: string;
  log?: Logger;
}

/**
 * Thrown by `fetchModels` when some providers answered and others did not: the list of those that answered is
 * used now, and the fetch is retried (with backoff) until every provider answers.
 */
export class PartialModelList extends Error {
  constructor(
    readonly doc: unknown,
    readonly failed: readonly string[],
  ) {
    super(`no model list from ${failed.join(', ')}`);
  }
}

/** More than this many models from a provider are ignored (bounded memory). */
const MAX_MODELS = 10_000;
const DECIMAL = /^\d+(\.\d+)?([eE]-?\d+)?$/;

export class ModelCatalog implements ModelCatalogApi {
  private upstreamModels = new Map<string, CatalogModel>();
  private fileModels = new Map<string, Partial<CatalogModel> & { id: string }>();
  private merged = new Map<string, CatalogModel>();
  private readonly ratesCache = new WeakMap<ModelPricing, UsdRates>();
  private timer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Failed fetches in a row (0: the last one answered). */
  private failures = 0;
  private stopped = false;
  private watching: string | undefined;
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
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (this.watching !== undefined) unwatchFile(this.watching);
    this.watching = undefined;
  }

  /**
   * Re-reads models.json (on SIGHUP, or when `watch` sees it change). A file that no longer parses keeps the
   * last good price book (logged); returns whether the new file was taken.
   */
  reloadFile(): boolean {
    const path = this.opts.modelsPath;
    if (path === undefined) return false;
    try {
      this.loadFile(path);
      this.opts.log?.info({ models: this.fileModels.size }, 'models.json reloaded');
      return true;
    } catch (err) {
      this.opts.log?.error(
        { reason: err instanceof Error ? err.message : String(err) },
        'models.json not reloaded; keeping the last good one',
      );
      return false;
    }
  }

  /** Reloads models.json when its modification time or size changes (polled: survives editors' renames). */
  watch(intervalMs = 1000): void {
    const path = this.opts.modelsPath;
    if (path === undefined || this.watching !== undefined) return;
    this.watching = path;
    watchFile(path, { interval: intervalMs, persistent: false }, (cur, prev) => {
      if (cur.mtimeMs !== prev.mtimeMs || cur.size !== prev.size) this.reloadFile();
    });
  }

  /**
   * Re-fetches the provider list; returns false (keeping the old list, or taking the part that answered) when
   * that fails, and schedules a retry with backoff (`retryMs`) until a fetch answers.
   */
  async refresh(): Promise<boolean> {
    if (this.opts.fetchModels === undefined) return false;
    try {
      const doc = await this.opts.fetchModels();
      this.take(doc);
      if (this.failures > 0) {
        this.opts.log?.info({ attempts: this.failures + 1 }, 'upstream model list fetched');
      }
      this.failures = 0;
      if (this.retryTimer) clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
      return true;
    } catch (err) {
      if (err instanceof PartialModelList) this.take(err.doc);
      const delay = this.scheduleRetry();
      // The first failure of a streak is a warning; the retries that follow it are debug lines.
      this.opts.log?.[this.failures === 1 ? 'warn' : 'debug'](
        { reason: err instanceof Error ? err.message : String(err), retryInMs: delay },
        'could not fetch the upstream model list; keeping the last known list and retrying',
      );
      return false;
    }
  }

  private take(doc: unknown): void {
    this.upstreamModels = parseProviderList(doc, this.opts.ownedBy ?? 'upstream', this.startedAt);
    this.lastRefresh = Date.now();
    this.rebuild();
  }

  /** Counts the failure and arms the one retry timer (unless one is armed already); returns its delay. */
  private scheduleRetry(): number | undefined {
    this.failures++;
    if (this.stopped) return undefined;
    const first = this.opts.retryMs ?? 1000;
    const max = this.opts.retryMaxMs ?? Math.min(60_000, this.opts.refreshMs ?? 10 * 60_000);
    const delay = Math.min(max, first * 2 ** Math.min(this.failures - 1, 30));
    if (this.retryTimer === undefined && delay > 0) {
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        void this.refresh();
      }, delay);
      this.retryTimer.unref();
    }
    return delay;
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
      if (e.supports_vision !== undefined) {
        if (typeof e.supports_vision !== 'boolean')
          throw new ConfigError(`${where}.supports_vision must be true or false`);
        entry.supports_vision = e.supports_vision;
      }
      if (e.image_tokens !== undefined) {
        const rule = parseImageTokenRule(e.image_tokens);
        if (typeof rule === 'string') throw new ConfigError(`${where}.${rule}`);
        entry.image_tokens = rule;
      }
      if (e.permission !== undefined) {
        if (!Array.isArray(e.permission)) throw new ConfigError(`${where}.permission must be an array`);
        entry.permission = e.permission;
      }
      if (e.pricing !== undefined) {
        const p = parsePricing(e.pricing);
        if (typeof p === 'string') throw new ConfigError(`${where}.pricing.${p}`);
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
    let rates = this.ratesCache.get(p);
    if (rates === undefined) {
      rates = {
        promptUsdPerToken: p.prompt,
        completionUsdPerToken: p.completion,
        requestUsd: p.request,
        imageUsd: p.image,
        imageSizes: p.image_sizes,
        audioMinuteUsd: p.audio_minute,
        speech1kCharsUsd: p.speech_1k_chars,
        dimensions: dimensionPrices(p),
        serviceTiers: p.service_tiers,
        ...(p.image_output_max_tokens !== undefined
          ? { imageOutputMaxTokens: Number(p.image_output_max_tokens) }
          : {}),
      };
      // One object per price book: the pricing service caches its exact terms per rates object.
      this.ratesCache.set(p, rates);
    }
    return rates;
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
    // Each model's rates object is made now, once per price book: the pricing service keys its rate cards
    // (prices over one denominator, ./pricing/rate-card.ts) by it, so a call does no decimal parsing.
    for (const id of merged.keys()) this.usdRates(id);
  }
}

function asDecimal(v: unknown): string | undefined {
  const d =
    typeof v === 'number' && Number.isFinite(v) && v >= 0
      ? String(v)
      : typeof v === 'string' && DECIMAL.test(v.trim())
        ? v.trim()
        : undefined;
  if (d === undefined) return undefined;
  // What the pricing service will parse (core/pricing/rational.ts: at most 60 digits, exponent in range):
  // refused here, at load, not by every call of the model.
  try {
    parseDecimal(d);
  } catch {
    return undefined;
  }
  return d;
}

const PRICE_FIELDS = [
  'prompt',
  'completion',
  'image',
  'audio_minute',
  'speech_1k_chars',
  ...EXTRA_DIMENSION_KEYS,
] as const;
const EXTRA = new Set<string>(EXTRA_DIMENSION_KEYS);

/** The extra dimensions' prices of a price book (UsdRates.dimensions), or undefined when it has none. */
export function dimensionPrices(
  p: Partial<Record<ExtraDimensionKey, string>>,
): Partial<Record<ExtraDimensionKey, string>> | undefined {
  let out: Partial<Record<ExtraDimensionKey, string>> | undefined;
  for (const k of EXTRA_DIMENSION_KEYS) {
    if (p[k] === undefined) continue;
    out ??= {};
    out[k] = p[k];
  }
  return out;
}

/**
 * Parses a price book; returns the problem (`"<field> must be …"`) when one is malformed. Unknown fields
 * are ignored (provider lists carry more). At least one price must be present. `fromProvider`: a provider's
 * list (OpenRouter) writes "0" for a dimension it does not price apart (`internal_reasoning: "0"` means
 * "billed as completion"), so there a "0" extra dimension is read as absent (its base rate), never as free;
 * in models.json a "0" is the operator's decision and is kept.
 */
export function parsePricing(v: unknown, fromProvider = false): ModelPricing | string {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'must be an object';
  const o = v as Record<string, unknown>;
  const request = o.request === undefined || o.request === null ? '0' : asDecimal(o.request);
  if (request === undefined) return 'request must be a decimal string (USD per request)';
  const p: ModelPricing = { request };
  for (const f of PRICE_FIELDS) {
    if (o[f] === undefined || o[f] === null) continue;
    const d = asDecimal(o[f]);
    if (d === undefined) return `${f} must be a decimal string (USD)`;
    if (fromProvider && EXTRA.has(f) && Number(d) === 0) continue;
    p[f] = d;
  }
  if (o.service_tiers !== undefined && o.service_tiers !== null) {
    if (typeof o.service_tiers !== 'object' || Array.isArray(o.service_tiers)) {
      return 'service_tiers must map tier names to multipliers ({"flex": "0.5"})';
    }
    const tiers: Record<string, string> = {};
    for (const [tier, m] of Object.entries(o.service_tiers as Record<string, unknown>)) {
      const d = asDecimal(m);
      // A 0 multiplier would make every call of that tier free.
      if (d === undefined || Number(d) <= 0) {
        return `service_tiers.${tier} must be a decimal string > 0 (a multiplier, e.g. "0.5")`;
      }
      tiers[tier] = d;
    }
    p.service_tiers = tiers;
  }
  for (const f of ['source', 'updated_at'] as const) {
    if (o[f] === undefined || o[f] === null) continue;
    if (typeof o[f] !== 'string' || (o[f] as string).length > 500) return `${f} must be a string`;
    p[f] = o[f] as string;
  }
  if (o.image_sizes !== undefined && o.image_sizes !== null) {
    if (typeof o.image_sizes !== 'object' || Array.isArray(o.image_sizes)) {
      return 'image_sizes must be an object of sizes, each an object of qualities';
    }
    const sizes: Record<string, Record<string, string>> = {};
    for (const [size, qualities] of Object.entries(o.image_sizes as Record<string, unknown>)) {
      if (typeof qualities !== 'object' || qualities === null || Array.isArray(qualities)) {
        return `image_sizes.${size} must be an object of qualities ({"standard": "0.04"})`;
      }
      const q: Record<string, string> = {};
      for (const [quality, price] of Object.entries(qualities as Record<string, unknown>)) {
        const d = asDecimal(price);
        if (d === undefined) return `image_sizes.${size}.${quality} must be a decimal string (USD)`;
        q[quality] = d;
      }
      sizes[size] = q;
    }
    p.image_sizes = sizes;
  }
  if (o.image_output_max_tokens !== undefined && o.image_output_max_tokens !== null) {
    const d = asDecimal(o.image_output_max_tokens);
    if (d === undefined || !/^[1-9][0-9]{0,8}$/.test(d)) {
      return 'image_output_max_tokens must be a positive integer (image output tokens per image_generation call)';
    }
    p.image_output_max_tokens = d;
  }
  if (o.batch !== undefined && o.batch !== null) {
    const d = asDecimal(o.batch);
    if (d === undefined || Number(d) <= 0) return 'batch must be a decimal string > 0 (a multiplier)';
    p.batch = d;
  }
  const any =
    PRICE_FIELDS.some((f) => p[f] !== undefined) || p.image_sizes !== undefined || o.request !== undefined;
  if (!any) return `has no price (${PRICE_FIELDS.join(', ')}, request, image_sizes)`;
  return p;
}

/** Accepts OpenAI (`{data:[{id, created, owned_by}]}`) and OpenRouter (adds name, pricing, context_length), and the
 *  window other OpenAI-compatible servers list under their own names. */
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
    // OpenRouter `context_length`, Groq `context_window`, vLLM `max_model_len`, Mistral `max_context_length`: a
    // known window bounds a call without max_tokens (core/pricing/completion-cap.ts).
    const ctxLen = e.context_length ?? e.context_window ?? e.max_model_len ?? e.max_context_length;
    if (Number.isInteger(ctxLen) && (ctxLen as number) > 0) m.context_length = ctxLen as number;
    const pricing = e.pricing === undefined ? undefined : parsePricing(e.pricing, true);
    if (pricing !== undefined && typeof pricing !== 'string') m.pricing = pricing;
    if (typeof e.supports_vision === 'boolean') m.supports_vision = e.supports_vision;
    if (Array.isArray(e.permission)) m.permission = e.permission;
    out.set(m.id, m);
  }
  return out;
}
