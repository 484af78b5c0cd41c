import { type Event, EventRepository, EventType, EventUtils, type Filter } from '@nostr-relay/common';
import { NostrRelay } from '@nostr-relay/core';
import { WebSocketServer } from 'ws';

/**
 * A real Nostr relay on loopback for the tests: @nostr-relay/core (NIP-01 message handling, signature checks,
 * subscriptions) behind a `ws` server on a free port, storing events in memory with NIP-01's replacement
 * rules (a parameterized-replaceable event replaces the older one of the same author, kind and `d` tag).
 * `refuse` makes it answer OK false to every EVENT (a relay that rejects the listing).
 */
class MemoryRepository extends EventRepository {
  readonly events = new Map<string, Event>();

  isSearchSupported(): boolean {
    return false;
  }

  private slot(e: Event): string {
    const type = EventUtils.getType(e.kind);
    if (type === EventType.PARAMETERIZED_REPLACEABLE)
      return `${e.pubkey}:${e.kind}:${EventUtils.extractDTagValue(e) ?? ''}`;
    if (type === EventType.REPLACEABLE) return `${e.pubkey}:${e.kind}`;
    return e.id;
  }

  upsert(e: Event): { isDuplicate: boolean } {
    const k = this.slot(e);
    const old = this.events.get(k);
    if (old !== undefined && (old.id === e.id || old.created_at > e.created_at)) return { isDuplicate: true };
    this.events.set(k, e);
    return { isDuplicate: false };
  }

  find(filter: Filter): Event[] {
    const out = [...this.events.values()].filter((e) => EventUtils.isMatchingFilter(e, filter));
    out.sort((a, b) => b.created_at - a.created_at);
    return filter.limit === undefined ? out : out.slice(0, filter.limit);
  }

  async destroy(): Promise<void> {}
}

export interface TestRelay {
  url: string;
  /** Every stored event (newest listing per author and `d`). */
  events(): Event[];
  /** Received EVENT messages, accepted or not. */
  received: number;
  refuse: boolean;
  close(): Promise<void>;
}

/** `port` 0 (default): a free one; `npm run relay:dev` (scripts/dev-relay.ts) names one. */
export async function startTestRelay(port = 0): Promise<TestRelay> {
  const repo = new MemoryRepository();
  const relay = new NostrRelay(repo);
  const wss = new WebSocketServer({ host: '127.0.0.1', port });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const t: TestRelay = {
    url: `ws://127.0.0.1:${(wss.address() as { port: number }).port}`,
    events: () => [...repo.events.values()],
    received: 0,
    refuse: false,
    async close() {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await relay.destroy();
    },
  };
  wss.on('connection', (ws) => {
    relay.handleConnection(ws);
    ws.on('message', (data) => {
      let msg: unknown;
      try {
        msg = JSON.parse(String(data));
      } catch {
        ws.send(JSON.stringify(['NOTICE', 'invalid: not JSON']));
        return;
      }
      if (!Array.isArray(msg)) return;
      if (msg[0] === 'EVENT') {
        t.received++;
        if (t.refuse) {
          ws.send(
            JSON.stringify([
              'OK',
              (msg[1] as { id?: string })?.id ?? '',
              false,
              'blocked: test relay refuses',
            ]),
          );
          return;
        }
      }
      void relay.handleMessage(ws, msg as Parameters<NostrRelay['handleMessage']>[1]);
    });
    ws.on('close', () => relay.handleDisconnect(ws));
  });
  return t;
}
