import type { OutgoingHeaders } from './exchange.js';
import { addVary } from './respond.js';

/** Upstream response headers never passed to the client (hop-by-hop, or recomputed here). */
const DROP_RESPONSE_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'content-length',
  'set-cookie',
  'x-request-id',
  'date',
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'access-control-expose-headers',
]);

/**
 * The head of a relayed answer: the upstream's headers without hop-by-hop and recomputed ones, then the
 * gateway's own (`own`: request id, CORS, what request hooks set) over them. Both Vary lists hold.
 */
export function relayedHeaders(
  upstream: Readonly<Record<string, string | string[]>>,
  own: OutgoingHeaders,
): OutgoingHeaders {
  const headers: OutgoingHeaders = {};
  for (const name in upstream) {
    if (!DROP_RESPONSE_HEADERS.has(name)) headers[name] = upstream[name]!;
  }
  const upstreamVary = headers.vary;
  Object.assign(headers, own);
  if (upstreamVary !== undefined && own.vary !== undefined) {
    headers.vary = upstreamVary;
    for (const t of String(own.vary).split(',')) addVary(headers, t.trim());
  }
  return headers;
}

/** Whether a content type is a server-sent event stream. */
export function isEventStream(contentType: string | string[] | undefined): boolean {
  return typeof contentType === 'string' && contentType.startsWith('text/event-stream');
}
