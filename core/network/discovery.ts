import { LISTING_KIND, type ParsedListing, parseListing } from './listing.js';
import { queryEvents, relayLabel } from './relays.js';

/**
 * Finding other nodes (docs/network.md): listings (kind 38421) from the relays, newest per author and `d`
 * tag, signatures checked; each node's `/v1/info` and `/v1/models` fetched from its first URL that answers;
 * a node is usable when it accepts one of our trusted mints.
 */

export interface DiscoveredModel {
  id: string;
  /** msats charged per 1,000 prompt / completion tokens and per request, as the node lists them. */
  prompt_msats: number | null;
  completion_msats: number | null;
  request_msats: number | null;
}

export interface DiscoveredNode {
  listing: ParsedListing;
  /** The URL that answered (absent when none did). */
  url: string | undefined;
  /** The mints the node's /v1/info names (its listing's when it does not answer). */
  mints: string[];
  models: DiscoveredModel[];
  latencyMs: number | null;
  /** Answered and accepts one of our mints. */
  usable: boolean;
  /** Why not usable. */
  reason: string | undefined;
}

export interface DiscoverOptions {
  relays: string[];
  /** Our trusted mints; empty = every node that answers is usable. */
  trustedMints: string[];
  timeoutMs: number;
  fetch?: typeof fetch;
  now?: () => number;
}

const sameMint = (a: string, b: string) => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');

/** Newest valid listing per (author, node id), from every relay that answers. */
export async function fetchListings(
  relays: string[],
  timeoutMs: number,
): Promise<{ listings: ParsedListing[]; relayErrors: Array<{ relay: string; error: string }> }> {
  const relayErrors: Array<{ relay: string; error: string }> = [];
  const answers = await Promise.all(
    relays.map((r) =>
      queryEvents(r, { kinds: [LISTING_KIND], limit: 1000 }, timeoutMs).catch((err: unknown) => {
        relayErrors.push({ relay: relayLabel(r), error: err instanceof Error ? err.message : String(err) });
        return [];
      }),
    ),
  );
  const newest = new Map<string, ParsedListing>();
  for (const ev of answers.flat()) {
    const l = parseListing(ev);
    if (l === undefined) continue;
    const k = `${l.pubkey}:${l.nodeId}`;
    const seen = newest.get(k);
    if (seen === undefined || l.createdAt > seen.createdAt) newest.set(k, l);
  }
  return { listings: [...newest.values()], relayErrors };
}

async function getJson(
  f: typeof fetch,
  url: string,
  timeoutMs: number,
): Promise<{ body: unknown; ms: number }> {
  const t0 = performance.now();
  const res = await f(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  const body = (await res.json()) as unknown;
  return { body, ms: performance.now() - t0 };
}

function modelsOf(body: unknown): DiscoveredModel[] {
  const data = (body as { data?: unknown })?.data;
  if (!Array.isArray(data)) return [];
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return data.flatMap((m) => {
    const id = (m as { id?: unknown })?.id;
    if (typeof id !== 'string') return [];
    const p = ((m as { pricing?: unknown }).pricing ?? {}) as Record<string, unknown>;
    return [
      {
        id,
        prompt_msats: num(p.prompt_msats),
        completion_msats: num(p.completion_msats),
        request_msats: num(p.request_msats),
      },
    ];
  });
}

/** Health-checks one listed node: the first of its URLs whose /v1/info and /v1/models answer. */
export async function checkNode(
  listing: ParsedListing,
  trustedMints: string[],
  timeoutMs: number,
  f: typeof fetch = fetch,
): Promise<DiscoveredNode> {
  let lastError = 'no URL in the listing';
  for (const raw of listing.urls) {
    const base = raw.replace(/\/+$/, '');
    try {
      const info = await getJson(f, `${base}/v1/info`, timeoutMs);
      const models = await getJson(f, `${base}/v1/models`, timeoutMs);
      const infoMints = (info.body as { mints?: unknown })?.mints;
      const mints = Array.isArray(infoMints)
        ? infoMints.filter((m): m is string => typeof m === 'string')
        : listing.mints;
      const accepts =
        trustedMints.length === 0 || mints.some((m) => trustedMints.some((t) => sameMint(m, t)));
      return {
        listing,
        url: base,
        mints,
        models: modelsOf(models.body),
        latencyMs: Math.round((info.ms + models.ms) / 2),
        usable: accepts,
        reason: accepts ? undefined : 'accepts none of our trusted mints',
      };
    } catch (err) {
      lastError = `${base}: ${err instanceof Error ? err.message : String(err)}`;
    }
  }
  return {
    listing,
    url: undefined,
    mints: listing.mints,
    models: [],
    latencyMs: null,
    usable: false,
    reason: lastError,
  };
}

export async function discoverNodes(
  opts: DiscoverOptions,
): Promise<{ nodes: DiscoveredNode[]; relayErrors: Array<{ relay: string; error: string }> }> {
  const { listings, relayErrors } = await fetchListings(opts.relays, opts.timeoutMs);
  const nodes = await Promise.all(
    listings.map((l) => checkNode(l, opts.trustedMints, opts.timeoutMs, opts.fetch)),
  );
  nodes.sort(
    (a, b) =>
      Number(b.usable) - Number(a.usable) ||
      (a.latencyMs ?? Number.POSITIVE_INFINITY) - (b.latencyMs ?? Number.POSITIVE_INFINITY),
  );
  return { nodes, relayErrors };
}

/**
 * A providers-file entry (docs/providers.md) for a usable node: paid per call with eCash from the operator's
 * wallet (`"payment": "cashu"`), since a usable node accepts one of our mints.
 */
export function providerEntry(n: DiscoveredNode): Record<string, unknown> {
  const name = `node-${n.listing.nodeId}`.replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 63);
  return {
    name,
    base_url: `${n.url}/v1`,
    payment: 'cashu',
    models: n.models.map((m) => m.id),
  };
}
