import { promisify } from 'node:util';
import { gzip as gzipCb, gzipSync } from 'node:zlib';
import { errorBodyFor, type GatewayError, isAnthropicPath, toGatewayError } from '../errors.js';
import type { Exchange, OutgoingHeaders } from './exchange.js';

/**
 * Writing complete responses: JSON bodies, error envelopes, gzip. Gzip applies when the client accepts it,
 * the body is over 1 KB and the type is compressible (JSON, text, JS, XML, SVG) — never to SSE streams,
 * which are written chunk by chunk and never pass through here.
 */

const gzipAsync = promisify(gzipCb);
export const GZIP_MIN_BYTES = 1024;
/** Bodies above this are compressed off the event loop thread (zlib's thread pool). */
const GZIP_SYNC_MAX_BYTES = 64 * 1024;

export function acceptsGzip(headers: Readonly<Record<string, string>>): boolean {
  const ae = headers['accept-encoding'];
  if (ae === undefined) return false;
  const m = /(?:^|,)\s*(gzip|\*)\s*(?:;\s*q\s*=\s*([0-9.]+))?/i.exec(ae);
  if (m === null) return false;
  return m[2] === undefined || Number(m[2]) > 0;
}

export function isCompressible(contentType: string | string[] | undefined): boolean {
  if (typeof contentType !== 'string') return false;
  const t = contentType.toLowerCase();
  if (t.startsWith('text/event-stream')) return false;
  return (
    t.startsWith('text/') ||
    t.includes('json') ||
    t.includes('javascript') ||
    t.includes('xml') ||
    t.startsWith('image/svg')
  );
}

/**
 * Adds `token` to the `vary` header, keeping what is there (CORS adds `origin`, gzip `accept-encoding`, the
 * upstream its own): one header, comma-separated, each token once.
 */
export function addVary(headers: OutgoingHeaders, token: string): void {
  const cur = headers.vary;
  const list = (Array.isArray(cur) ? cur.join(',') : (cur ?? ''))
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  if (list.some((t) => t.toLowerCase() === token.toLowerCase() || t === '*')) return;
  list.push(token);
  headers.vary = list.join(', ');
}

/** Sends a complete body (Content-Length set by the engine), gzipped when allowed and worth it. */
export async function sendComplete(
  ex: Exchange,
  status: number,
  headers: OutgoingHeaders,
  body: Buffer | string,
  gzipAllowed: boolean,
): Promise<void> {
  let out: Buffer | string = body;
  const size = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  if (
    size > GZIP_MIN_BYTES &&
    headers['content-encoding'] === undefined &&
    isCompressible(headers['content-type'])
  ) {
    // Both variants (gzipped or not) depend on Accept-Encoding: caches must know, whichever this one is.
    addVary(headers, 'accept-encoding');
    if (gzipAllowed) {
      out = size > GZIP_SYNC_MAX_BYTES ? await gzipAsync(body) : gzipSync(body);
      headers['content-encoding'] = 'gzip';
    }
  }
  if (ex.ended) return;
  ex.writeHead(status, headers);
  ex.end(out);
}

export function sendJson(
  ex: Exchange,
  status: number,
  headers: OutgoingHeaders,
  value: unknown,
  gzipAllowed: boolean,
): Promise<void> {
  headers['content-type'] = 'application/json';
  return sendComplete(ex, status, headers, JSON.stringify(value), gzipAllowed);
}

/** The gateway's error envelope, `{ error: { code, message, … } }` (Anthropic's error shape on the Messages routes) with the error's status and
 *  extra headers. */
export function sendError(ex: Exchange, baseHeaders: OutgoingHeaders, err: unknown): GatewayError {
  const ge = toGatewayError(err);
  if (ex.ended) return ge;
  const headers: OutgoingHeaders = { ...baseHeaders, ...ge.headers, 'content-type': 'application/json' };
  delete headers['content-encoding'];
  ex.writeHead(ge.status, headers);
  ex.end(JSON.stringify(errorBodyFor(ex.path, ge)));
  return ge;
}

/**
 * Answers a failed request: the envelope with its status while nothing reached the client; mid-stream (the
 * status is gone) an SSE client gets an error event — Anthropic SDKs read a typed `event: error`, OpenAI SDKs
 * a `data:` line with the envelope — and any other body is cut, so that a truncated body cannot pass for a
 * complete one.
 */
export function sendFailure(
  ex: Exchange,
  headers: OutgoingHeaders,
  ge: GatewayError,
  responseIsSse: boolean,
): void {
  if (ex.ended) return;
  if (!ex.headSent) {
    sendError(ex, headers, ge);
    return;
  }
  if (responseIsSse) {
    const body = JSON.stringify(errorBodyFor(ex.path, ge));
    ex.end(isAnthropicPath(ex.path) ? `event: error\ndata: ${body}\n\n` : `data: ${body}\n\n`);
  } else {
    ex.destroy();
  }
}
