import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { StoreConnection } from '../store/connection.js';
import type { ModelCatalog } from '../upstream/types.js';
import { packageVersion } from '../version.js';
import { defaultNodeId, type ListingInput, type NostrEvent } from './listing.js';
import { ListingPublisher, type RelayStatus } from './listing-publisher.js';
import { loadNodeIdentity, type NodeIdentity } from './nostr-identity.js';

/**
 * The node on the Nostr network (docs/network.md): its identity, its listing, and the publisher that keeps
 * the listing at `NOSTR_RELAYS`. Built by the composition root; `/v1/info`, the console and the
 * `nostr:listing` script read it.
 */
export class NodeNetwork {
  private constructor(
    readonly identity: NodeIdentity,
    private readonly config: Config,
    private readonly catalog: ModelCatalog,
    private readonly publisher: ListingPublisher,
  ) {}

  static async open(
    config: Config,
    store: StoreConnection | undefined,
    catalog: ModelCatalog,
    log: Logger,
  ): Promise<NodeNetwork> {
    const identity = await loadNodeIdentity(store, config.network.nsec);
    let network: NodeNetwork | undefined;
    const publisher = new ListingPublisher({
      identity,
      relays: config.network.relays,
      log,
      refreshMs: config.network.refreshMs,
      checkMs: config.network.checkMs,
      source: { listing: () => network!.listing(), fingerprint: () => network!.fingerprint() },
    });
    network = new NodeNetwork(identity, config, catalog, publisher);
    return network;
  }

  /**
   * `/v1/info.npub`: the key's, unless NODE_NPUB is set without NOSTR_NSEC — then that display value
   * (it names no key this node can sign with).
   */
  get npub(): string {
    if (this.identity.source !== 'config' && this.config.node.npub !== '') return this.config.node.npub;
    return this.identity.npub;
  }

  listing(): ListingInput {
    return listingFor(this.config, this.identity);
  }

  /** What the listing stands for: itself, every model and its prices, the pricing terms (a change republishes). */
  fingerprint(): string {
    const models = this.catalog.list().map((m) => [m.id, m.pricing ?? null]);
    return JSON.stringify([this.listing(), models, this.config.pricing]);
  }

  /** The signed listing as it would be published now. */
  event(): NostrEvent {
    return this.publisher.event();
  }

  relays(): RelayStatus[] {
    return this.publisher.status();
  }

  /** Publishes at start, on change and every NOSTR_REFRESH_HOURS; nothing without NOSTR_RELAYS. */
  start(): void {
    this.publisher.start();
  }

  /** The listing sent to every relay now, backoff or not (the console's "Publish now"). */
  publishNow(): Promise<void> {
    return this.publisher.publishNow();
  }

  close(): Promise<void> {
    return this.publisher.close();
  }
}

/** The listing of a node with this configuration and key (also `npm run nostr:listing`). */
export function listingFor(config: Config, identity: NodeIdentity): ListingInput {
  return {
    nodeId: config.network.nodeId ?? defaultNodeId(identity.pubkey),
    urls: config.network.publicUrls,
    mints: config.cashu.mints,
    version: packageVersion(),
    name: config.node.name,
    about: config.node.description,
  };
}
