import { connect } from 'node:net';

/**
 * A raw HTTP/1.1 exchange over one TCP connection, for hostile input no HTTP client library would send
 * (CR/LF in headers, conflicting framing, invalid UTF-8, truncated bodies). It writes the request bytes,
 * optionally in several segments, half-closes, and collects whatever comes back until the server closes or
 * `timeoutMs` passes. The response is parsed just enough to check the gateway's answer: status line,
 * headers, body (chunked transfer coding decoded). Only for tests and the fuzz tool, never the gateway.
 */

export interface RawResponse {
  /** 0 when nothing parseable came back. */
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** Every byte received (a pipelined second answer stays in here). */
  raw: Buffer;
  /** The server closed (or reset) the connection before the timeout. */
  closed: boolean;
  /** Nothing ended the exchange within the timeout: the server held the socket. */
  timedOut: boolean;
  /** Milliseconds until the first byte of the answer, or until close when none came. */
  elapsedMs: number;
}

export interface RawRequestOptions {
  host?: string;
  port: number;
  /** Split the request into this many segments, written `segmentDelayMs` apart (default 1: one write). */
  segments?: number;
  segmentDelayMs?: number;
  timeoutMs?: number;
  /** Half-close after writing (default true): the server sees the end of the request stream. */
  endAfterWrite?: boolean;
  /** Resolve as soon as one complete answer arrived (a kept-alive connection is not waited on). */
  stopAfterAnswer?: boolean;
}

const HEAD_END = Buffer.from('\r\n\r\n');

export function rawRequest(bytes: Buffer | string, opts: RawRequestOptions): Promise<RawResponse> {
  const data = typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes;
  const segments = Math.max(1, Math.min(opts.segments ?? 1, data.length || 1));
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const started = performance.now();
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let firstByteAt: number | undefined;
    let settled = false;
    const sock = connect({ host: opts.host ?? '127.0.0.1', port: opts.port });
    const finish = (closed: boolean, timedOut: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      const raw = Buffer.concat(parts);
      const elapsedMs = (firstByteAt ?? performance.now()) - started;
      resolve({ ...parseResponse(raw), raw, closed, timedOut, elapsedMs });
    };
    const timer = setTimeout(() => finish(false, true), timeoutMs);
    sock.on('data', (d: Buffer) => {
      firstByteAt ??= performance.now();
      parts.push(d);
      if (opts.stopAfterAnswer && answerComplete(Buffer.concat(parts))) finish(false, false);
    });
    sock.on('close', () => finish(true, false));
    sock.on('error', () => finish(true, false));
    sock.on('connect', async () => {
      const size = Math.ceil(data.length / segments);
      for (let i = 0; i < data.length; i += size) {
        if (sock.destroyed) return;
        sock.write(data.subarray(i, i + size));
        if (i + size < data.length && (opts.segmentDelayMs ?? 0) > 0) {
          await new Promise((r) => setTimeout(r, opts.segmentDelayMs));
        }
      }
      if (opts.endAfterWrite !== false && !sock.destroyed) sock.end();
    });
  });
}

/** Status, headers (lower-cased; repeated ones joined with ", ") and body of the first answer in `raw`. */
export function parseResponse(raw: Buffer): {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
} {
  const headEnd = raw.indexOf(HEAD_END);
  if (headEnd === -1) return { status: 0, headers: {}, body: Buffer.alloc(0) };
  const lines = raw.subarray(0, headEnd).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
  const status = m ? Number(m[1]) : 0;
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i <= 0) continue;
    const name = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  let body = raw.subarray(headEnd + 4);
  if (/\bchunked\b/i.test(headers['transfer-encoding'] ?? '')) body = dechunk(body);
  else if (headers['content-length'] !== undefined) {
    const n = Number(headers['content-length']);
    if (Number.isSafeInteger(n) && n >= 0) body = body.subarray(0, n);
  }
  return { status, headers, body: Buffer.from(body) };
}

/** True when `raw` holds one whole answer: its head, and all of its body by Content-Length or chunking. */
function answerComplete(raw: Buffer): boolean {
  const headEnd = raw.indexOf(HEAD_END);
  if (headEnd === -1) return false;
  const { status, headers } = parseResponse(raw);
  const rest = raw.length - headEnd - 4;
  if (status === 204 || status === 304 || (status >= 100 && status < 200)) return true;
  if (/\bchunked\b/i.test(headers['transfer-encoding'] ?? '')) return raw.includes('\r\n0\r\n\r\n', headEnd);
  const n = Number(headers['content-length'] ?? Number.NaN);
  return Number.isFinite(n) ? rest >= n : false;
}

/** Decodes a chunked body; stops at the last chunk or where the bytes run out (a cut stream). */
function dechunk(b: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  while (at < b.length) {
    const eol = b.indexOf('\r\n', at, 'latin1');
    if (eol === -1) break;
    const size = Number.parseInt(b.subarray(at, eol).toString('latin1'), 16);
    if (!Number.isFinite(size) || size <= 0) break;
    out.push(b.subarray(eol + 2, Math.min(b.length, eol + 2 + size)));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}
