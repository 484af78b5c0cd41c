import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { parseProviderList } from '../../core/upstream/model-catalog.js';

/**
 * `npm run models:sync`: writes models.json from the upstream's model list (OpenAI `{data:[{id,…}]}` or
 * OpenRouter, which adds name, context_length and pricing), keeping what the operator set: an entry already in
 * the file keeps its own fields (prices above all) and only gains fields it lacks; entries the upstream no
 * longer lists are kept (the operator put them there). The file is written atomically (temp file + rename).
 */

type Entry = Record<string, unknown> & { id: string };

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
  const res = await f(`${opts.baseUrl.replace(/\/+$/, '')}/models`, {
    headers: opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {},
    signal: AbortSignal.timeout(20_000),
  });
  if (!res.ok) throw new Error(`GET ${opts.baseUrl}/models answered ${res.status}`);
  const upstream = parseProviderList(await res.json(), 'upstream', Math.floor(Date.now() / 1000));
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
