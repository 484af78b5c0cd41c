import { AbstractRelay } from 'nostr-tools/abstract-relay';
import type { Filter } from 'nostr-tools/filter';
import { verifyEvent } from 'nostr-tools/pure';
import WebSocket from 'ws';
import type { NostrEvent } from './listing.js';

/**
 * Relay connections through nostr-tools, with the `ws` client (Node 20 has no global WebSocket). Each call
 * opens its own connection and closes it: the node talks to relays only to publish its listing now and then
 * and to discover others, so nothing is kept open.
 */

/**
 * `ws` with an 'error' listener from the start: nostr-tools closes a socket still connecting when its connect
 * deadline passes and then drops its own `onerror`, so ws's "closed before the connection was established"
 * error would otherwise be an uncaught exception that ends the gateway. Failures still reach nostr-tools through
 * `onerror` and `onclose` while it listens.
 */
class GuardedWebSocket extends WebSocket {
  constructor(address: string | URL, protocols?: string | string[]) {
    super(address, protocols);
    this.on('error', () => {});
  }
}

function open(url: string, timeoutMs: number): Promise<AbstractRelay> {
  return AbstractRelay.connect(url, {
    verifyEvent,
    websocketImplementation: GuardedWebSocket as unknown as typeof globalThis.WebSocket,
    timeout: timeoutMs,
  });
}

/** A relay URL as it may be shown or used as a label: no credentials, no query. */
export function relayLabel(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return 'invalid-relay-url';
  }
}

/** Sends `ev`; resolves when the relay answers OK true, rejects with its refusal or a timeout. */
export async function publishEvent(url: string, ev: NostrEvent, timeoutMs: number): Promise<void> {
  const relay = await open(url, timeoutMs);
  try {
    relay.publishTimeout = timeoutMs;
    await relay.publish(ev);
  } finally {
    relay.close();
  }
}

/** Every stored event matching `filter` (until the relay's EOSE or the deadline). */
export async function queryEvents(url: string, filter: Filter, timeoutMs: number): Promise<NostrEvent[]> {
  const relay = await open(url, timeoutMs);
  try {
    return await new Promise<NostrEvent[]>((resolve) => {
      const events: NostrEvent[] = [];
      const sub = relay.subscribe([filter], {
        eoseTimeout: timeoutMs,
        onevent: (e) => events.push(e as NostrEvent),
        oneose: () => {
          sub.close();
          resolve(events);
        },
        onclose: () => resolve(events),
      });
    });
  } finally {
    relay.close();
  }
}
