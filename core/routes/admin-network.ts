import type { Counter } from 'prom-client';
import { upstreamChangeRetriesTotal, upstreamLostMsatsTotal, upstreamPaidMsatsTotal } from '../metrics.js';
import type { NodeNetwork } from '../network/node-network.js';
import type { Providers } from '../providers/types.js';
import { noCalls, providerCounts } from './admin-providers.js';

/**
 * GET /admin/api/network (schema AdminNetwork, the console's Network view): the node's Nostr identity (public
 * key only — the secret never leaves core/network/), the listing it announces, each relay's last publication
 * result, and the nodes this one pays as providers (`"payment"` in the providers file).
 *
 * What a paid node cost is read, read only, from the counters core/providers/node-payment.ts and the relay
 * keep for `/metrics` (so the two never disagree): this process's figures since it started.
 */
export async function networkView(n: NodeNetwork, providers: Providers) {
  const listing = n.listing();
  const relays = n.relays();
  const published = relays
    .map((r) => r.last_success_at)
    .filter((t): t is string => t !== null)
    .sort();
  return {
    npub: n.identity.npub,
    pubkey: n.identity.pubkey,
    key_source: n.identity.source,
    // NODE_NPUB while /v1/info shows it instead of the key's npub (a display value: no key this node signs with).
    display_npub: n.npub !== n.identity.npub ? n.npub : null,
    node_id: listing.nodeId,
    name: listing.name,
    about: listing.about,
    public_urls: listing.urls,
    mints: listing.mints,
    listing: n.event(),
    last_published_at: published.at(-1) ?? null,
    relays,
    paid_nodes: await paidNodes(providers),
  };
}

/** A counter's values summed by provider, and by its `by` label inside each provider when given. */
async function sums(c: Counter<string>, by?: string): Promise<Map<string, Map<string, number>>> {
  const out = new Map<string, Map<string, number>>();
  for (const v of (await c.get()).values) {
    const provider = String(v.labels.provider);
    const key = by === undefined ? '' : String(v.labels[by]);
    const row = out.get(provider) ?? new Map<string, number>();
    row.set(key, (row.get(key) ?? 0) + v.value);
    out.set(provider, row);
  }
  return out;
}

function total(row: Map<string, number> | undefined): number {
  let sum = 0;
  for (const v of row?.values() ?? []) sum += v;
  return sum;
}

/**
 * Every provider paid with eCash, in the providers file's order. Its base URL is shown as its origin only
 * (a path or query may carry a credential), like the Providers view's host.
 */
async function paidNodes(providers: Providers) {
  const nodes = providers.list.filter((p) => p.spec.payment !== undefined);
  if (nodes.length === 0) return [];
  const [{ calls }, paid, lost, retries] = await Promise.all([
    providerCounts(),
    sums(upstreamPaidMsatsTotal),
    sums(upstreamLostMsatsTotal, 'reason'),
    sums(upstreamChangeRetriesTotal),
  ]);
  return nodes.map((p) => {
    const losses = lost.get(p.name);
    return {
      name: p.name,
      origin: new URL(p.spec.baseUrl).origin,
      payment: String(p.spec.payment),
      status: p.breaker.status(),
      calls: calls.get(p.name) ?? noCalls(),
      paid_msats: total(paid.get(p.name)),
      lost_msats: total(losses),
      lost_by_reason: Object.fromEntries(losses ?? []),
      change_retries: total(retries.get(p.name)),
    };
  });
}
