import type { Server } from 'node:http';
import { type WebSocket, WebSocketServer } from 'ws';
import type { MintCore } from './mint-core.js';

/**
 * NUT-17 on the dev mint: `GET /v1/ws` upgraded to a WebSocket speaking JSON-RPC 2.0. `subscribe`
 * `{kind: "bolt11_mint_quote", subId, filters: [quote ids]}` answers `{status: "OK", subId}`, then sends each
 * quote's current state at once and again on every change (PAID, ISSUED) as a `subscribe` notification
 * `{subId, payload: <the NUT-04 quote>}`; `unsubscribe {subId}` stops it. Other kinds are refused (the mint's
 * info lists only this command). Dev and tests only.
 */

interface Subscription {
  socket: WebSocket;
  subId: string;
  quotes: Set<string>;
}

const MAX_FILTERS = 100;

export interface MintWebSocket {
  /** Drops every open socket (a mint outage, or a connection lost): subscribers must subscribe again. */
  dropAll(): void;
  close(): void;
}

/** `isDown()` true refuses upgrades (an outage, or NUT-17 switched off: the mint's info does not offer it). */
export function attachWebSocket(server: Server, core: MintCore, isDown: () => boolean): MintWebSocket {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  const subs = new Set<Subscription>();

  server.on('upgrade', (req, socket, head) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== '/v1/ws' || isDown()) {
      socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => onSocket(ws));
  });

  function notify(sub: Subscription, payload: unknown): void {
    sub.socket.send(
      JSON.stringify({ jsonrpc: '2.0', method: 'subscribe', params: { subId: sub.subId, payload } }),
    );
  }

  function onSocket(ws: WebSocket): void {
    ws.on('message', (data) => {
      let msg: { id?: unknown; method?: unknown; params?: Record<string, unknown> };
      try {
        msg = JSON.parse(String(data)) as typeof msg;
      } catch {
        ws.send(
          JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null }),
        );
        return;
      }
      const id = msg.id ?? null;
      const reply = (result: unknown) => ws.send(JSON.stringify({ jsonrpc: '2.0', result, id }));
      const fail = (message: string) =>
        ws.send(JSON.stringify({ jsonrpc: '2.0', error: { code: -32602, message }, id }));
      const p = msg.params ?? {};
      const subId = typeof p.subId === 'string' ? p.subId : '';
      if (msg.method === 'unsubscribe') {
        for (const s of subs) if (s.socket === ws && s.subId === subId) subs.delete(s);
        reply({ status: 'OK', subId });
        return;
      }
      if (msg.method !== 'subscribe') return fail('Unknown method');
      if (p.kind !== 'bolt11_mint_quote') return fail('Unsupported subscription kind');
      const filters = Array.isArray(p.filters)
        ? p.filters.filter((f): f is string => typeof f === 'string')
        : [];
      if (!subId || filters.length === 0 || filters.length > MAX_FILTERS) return fail('Invalid params');
      const sub: Subscription = { socket: ws, subId, quotes: new Set(filters) };
      subs.add(sub);
      reply({ status: 'OK', subId });
      for (const q of filters) {
        try {
          notify(sub, core.mintQuoteView(q));
        } catch {
          /* unknown quote: nothing to send until it exists */
        }
      }
    });
    ws.on('close', () => {
      for (const s of subs) if (s.socket === ws) subs.delete(s);
    });
  }

  core.onMintQuoteChange = (view) => {
    for (const s of subs)
      if (s.quotes.has(String(view.quote)) && s.socket.readyState === s.socket.OPEN) notify(s, view);
  };

  const dropAll = (): void => {
    for (const c of wss.clients) c.terminate();
    subs.clear();
  };
  return {
    dropAll,
    close() {
      core.onMintQuoteChange = null;
      dropAll();
      wss.close();
    },
  };
}
