import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { parseProviderList } from '../../core/upstream/model-catalog.js';

/**
 * `npm run models:sync`: writes models.json from the upstream's model list (OpenAI `{data:[{id,…}]}` or
 * OpenRouter, which adds name, context_length and pricing), keeping what the operator set: an entry already in
 * the file keeps its own fields (prices above all) and only gains fields it lacks; entries the upstream no
 * longer lists are kept (the operator put them there). The file is written atomically (temp file + rename).
 */

type Entry = Record<string, unknown> & { id: string };

/** What went wrong, worded for the operator: the URL tried and the setting to change (no stack needed). */
export class ModelsSyncError extends Error {
  override name = 'ModelsSyncError';
}

export interface SyncResult {
  added: string[];
  kept: number;
  total: number;
}

export async function syncModels(opts: {
  baseUrl: string;
  apiKey?: string | undefined;
  path: string;
  fetchImpl?: typeof fetch;
}): Promise<SyncResult> {
  const f = opts.fetchImpl ?? fetch;
  const url = `${opts.baseUrl.replace(/\/+$/, '')}/models`;
  let res: Response;
  let body: unknown;
  try {
    res = await f(url, {
      headers: opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {},
      signal: AbortSignal.timeout(20_000),
    });
    body = res.ok ? await res.json() : undefined;
  } catch (err) {
    const e = err as { cause?: { code?: string; message?: string }; message?: string; name?: string };
    const why =
      e.cause?.code ?? e.cause?.message ?? (e.name === 'TimeoutError' ? 'no answer in 20 s' : e.message);
    throw new ModelsSyncError(
      `could not read the model list at ${url} (${why}). Set UPSTREAM_BASE_URL to the provider's ` +
        'OpenAI-compatible base URL (e.g. https://api.openai.com/v1), and UPSTREAM_API_KEY if it needs a key, ' +
        'in the environment or in the .env file the gateway reads',
    );
  }
  if (!res.ok) {
    const hint =
      res.status === 401 || res.status === 403
        ? 'Set UPSTREAM_API_KEY to a key this provider accepts'
        : 'Check UPSTREAM_BASE_URL: it should be the base URL that /models and /chat/completions hang off';
    throw new ModelsSyncError(`GET ${url} answered ${res.status}. ${hint}`);
  }
  const upstream = parseProviderList(body, 'upstream', Math.floor(Date.now() / 1000));
  const existing: Entry[] = existsSync(opts.path)
    ? ((JSON.parse(readFileSync(opts.path, 'utf8')) as { models?: Entry[] }).models ?? [])
    : [];
  const byId = new Map(existing.map((e) => [e.id, e]));
  const added: string[] = [];
  for (const m of upstream.values()) {
    const fromUpstream: Entry = { id: m.id, name: m.name };
    if (m.context_length !== undefined) fromUpstream.context_length = m.context_length;
    if (m.pricing !== undefined) fromUpstream.pricing = m.pricing;
    if (m.supports_vision !== undefined) fromUpstream.supports_vision = m.supports_vision;
    const mine = byId.get(m.id);
    if (mine === undefined) {
      byId.set(m.id, fromUpstream);
      added.push(m.id);
    } else {
      // The operator's fields win; the upstream only fills what is missing.
      byId.set(m.id, { ...fromUpstream, ...mine });
    }
  }
  const models = [...byId.values()].sort((a, b) => a.id.localeCompare(b.id));
  const tmp = `${opts.path}.tmp-${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify({ models }, null, 2)}\n`);
  renameSync(tmp, opts.path);
  return { added, kept: existing.length, total: models.length };
}
