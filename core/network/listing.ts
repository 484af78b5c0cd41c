import { finalizeEvent, verifyEvent } from 'nostr-tools/pure';
import type { NodeIdentity } from './nostr-identity.js';

/**
 * The node's listing: a NIP-91 provider announcement (kind 38421, parameterized-replaceable), in the form
 * routstr-core publishes and its clients (routstrd and others) read: tags `d` (a stable node id), one `u` per
 * public URL, one `mint` per trusted mint, `version`; content the JSON `{"name","about"}`. A newer event
 * with the same author and `d` replaces the older one at the relays.
 */
export const LISTING_KIND = 38421;

export interface ListingInput {
  /** The `d` tag: NOSTR_NODE_ID, else the first 12 hex characters of the public key. */
  nodeId: string;
  urls: string[];
  mints: string[];
  version: string;
  name: string;
  about: string;
}

export interface NostrEvent {
  id: string;
  pubkey: string;
  created_at: number;
  kind: number;
  tags: string[][];
  content: string;
  sig: string;
}

/** The default `d` tag of a node: stable as long as its key is. */
export const defaultNodeId = (pubkey: string) => pubkey.slice(0, 12);

export function listingTags(l: ListingInput): string[][] {
  return [
    ['d', l.nodeId],
    ...l.urls.map((u) => ['u', u]),
    ...l.mints.map((m) => ['mint', m]),
    ['version', l.version],
  ];
}

/** The signed listing event. `createdAt` in seconds (a replacement must be strictly newer). */
export function signListing(id: NodeIdentity, l: ListingInput, createdAt: number): NostrEvent {
  return finalizeEvent(
    {
      kind: LISTING_KIND,
      created_at: createdAt,
      tags: listingTags(l),
      content: JSON.stringify({ name: l.name, about: l.about }),
    },
    id.secretKey,
  ) as NostrEvent;
}

/** What a client learns from a listing (discovery). */
export interface ParsedListing {
  pubkey: string;
  nodeId: string;
  urls: string[];
  mints: string[];
  version: string | undefined;
  name: string | undefined;
  about: string | undefined;
  createdAt: number;
}

/** A listing event read back: `undefined` when it is not a valid, correctly signed kind-38421 event with a `d` tag. */
export function parseListing(ev: unknown): ParsedListing | undefined {
  if (ev === null || typeof ev !== 'object') return undefined;
  const e = ev as NostrEvent;
  if (e.kind !== LISTING_KIND || !Array.isArray(e.tags)) return undefined;
  let ok = false;
  try {
    ok = verifyEvent(e as Parameters<typeof verifyEvent>[0]);
  } catch {
    ok = false;
  }
  if (!ok) return undefined;
  const values = (name: string) =>
    e.tags.filter((t) => Array.isArray(t) && t[0] === name && typeof t[1] === 'string').map((t) => t[1]!);
  const nodeId = values('d')[0];
  if (nodeId === undefined) return undefined;
  let meta: { name?: unknown; about?: unknown } = {};
  try {
    const parsed = JSON.parse(e.content) as unknown;
    if (parsed !== null && typeof parsed === 'object') meta = parsed as typeof meta;
  } catch {
    /* content is optional metadata */
  }
  return {
    pubkey: e.pubkey,
    nodeId,
    urls: values('u'),
    mints: values('mint'),
    version: values('version')[0],
    name: typeof meta.name === 'string' ? meta.name : undefined,
    about: typeof meta.about === 'string' ? meta.about : undefined,
    createdAt: e.created_at,
  };
}
