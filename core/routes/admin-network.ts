import type { NodeNetwork } from '../network/node-network.js';

/**
 * GET /admin/api/network (schema AdminNetwork): the node's Nostr identity (public key only — the secret never
 * leaves core/network/), the listing it announces, and each relay's last publication result.
 */
export function networkView(n: NodeNetwork) {
  const listing = n.listing();
  return {
    npub: n.identity.npub,
    pubkey: n.identity.pubkey,
    key_source: n.identity.source,
    node_id: listing.nodeId,
    public_urls: listing.urls,
    listing: n.event(),
    relays: n.relays(),
  };
}
