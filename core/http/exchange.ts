/**
 * The one small type the pipeline and the router see instead of an engine's request/response objects.
 * Both engine adapters (uWebSockets.js in `uws-engine.ts`, node:http in `node-engine.ts`) implement it, so
 * nothing above `core/http/*-engine.ts` knows which engine runs.
 *
 * Rules every implementation keeps:
 * - Request data (method, path, query, headers, remote address) is copied when the exchange is created:
 *   uWS request objects are only valid synchronously inside the route handler.
 * - After the client went away (`aborted`), every write is a silent no-op.
 * - `writeHead` only records the head; it goes to the socket with the first `write`/`end` (uWS writes
 *   must happen inside `cork`, and a head that is never followed by a body is never half-sent).
 * - `end(body)` without a previous `write` sends `Content-Length`; a `write` first switches to chunked.
 */

import type { Readable } from 'node:stream';
import type { HttpEngine } from '../config.js';
import type { GatewayError } from '../errors.js';
import type { CallTimes } from '../server-timing.js';

/** Response headers: lowercase names; a string array repeats the header (e.g. `vary`). */
export type OutgoingHeaders = Record<string, string | string[]>;

export interface Exchange {
  /** Upper-case method, e.g. `POST`. */
  readonly method: string;
  /** URL path without the query string, as sent (not decoded). */
  readonly path: string;
  /** The raw query string after `?`, or `''`. */
  readonly rawQuery: string;
  /** Request headers with lowercased names; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  /** The peer's IP address as text. */
  readonly remoteAddress: string;
  /** True once the client disconnected before the response ended. */
  readonly aborted: boolean;
  /** True once `writeHead` was called. */
  readonly headWritten: boolean;
  /** The status of the last `writeHead` (0 before any: e.g. the client left first). */
  readonly statusCode: number;
  /** True once the head went to the socket (first `write` or `end`); until then `writeHead` may be repeated. */
  readonly headSent: boolean;
  /** True once `end` was called (or the exchange was destroyed). */
  readonly ended: boolean;
  /**
   * Set by the engine when the request must be refused before anything reads it: unsound framing
   * (core/http/framing.ts) → 400 and the connection closes; an HTTP version other than 1.0/1.1 → 505.
   */
  readonly refusal: GatewayError | undefined;
  /**
   * When the request's steps happened (set by the transport once the request is accepted): every head written
   * after that carries `Server-Timing` (core/server-timing.ts).
   */
  timing: CallTimes | undefined;

  /**
   * Reads the whole request body. Rejects with `GatewayError('payload_too_large')` at once when the declared
   * Content-Length exceeds `limit` (the rest is read and discarded after the answer, core/http/body-limit.ts);
   * when the bytes counted exceed it: once the rest of the body was read and discarded, so
   * that a client still sending reads the 413 (core/http/body-limit.ts); at once, with the connection closed
   * after the 413, when the body is too large to drain.
   */
  readBody(limit: number): Promise<Buffer>;
  /**
   * The request body as it arrives, instead of `readBody` (a route with RouteOptions `streamBody`): MUST be called
   * in the turn the exchange was made (uWS delivers body data from the next one). The engine holds a few chunks
   * at most: it stops reading the socket while the stream's reader is behind (core/http/streamed-body.ts). More
   * than `limit` bytes fail the stream with `GatewayError('payload_too_large')`; a client that leaves fails it.
   */
  streamBody(limit: number): Readable;
  /**
   * Reads and discards what the route left of a streamed body; MUST be awaited before the answer, so a client
   * still sending reads it. When too much is left (over OVERSIZE_DRAIN_BYTES), resolves at once and the answer
   * closes the connection. A no-op when the body was not streamed or already ended. Never rejects.
   */
  discardBody(): Promise<void>;
  /** Registers a callback for a client disconnect before the response ended. Runs at most once. */
  onAborted(cb: () => void): void;
  /** Records status and headers; sent with the first `write` or `end` (a later call before that replaces them). */
  writeHead(status: number, headers: OutgoingHeaders): void;
  /** Writes a body chunk. Returns false when the chunk was buffered because the client is slow. */
  write(chunk: Uint8Array | string): boolean;
  /** Calls `cb` once the buffered data drained (after a `write` returned false). */
  onDrain(cb: () => void): void;
  /** Ends the response, optionally with a last (or the only) chunk. */
  end(chunk?: Uint8Array | string): void;
  /** Closes the connection at once (used when a streamed response cannot be completed correctly). */
  destroy(): void;
}

// What an engine (node-engine.ts, uws-engine.ts) offers engine.ts: kept here, beside the exchange, so the engines
// import only this module and engine.ts can import them.

/** Called once per request with a fresh exchange; must not throw (errors become responses inside). */
export type ExchangeHandler = (ex: Exchange) => void;

export interface ListenOptions {
  host: string;
  port: number;
  /** Hard cap on request body bytes the engine will buffer (MAX_BODY_BYTES). */
  maxBodyBytes: number;
  /** Cap on the request head (MAX_HEADER_BYTES): node:http answers 431 above it; uWS has its own fixed limit. */
  maxHeaderBytes: number;
  /** Slow-client bounds (node:http; uWS keeps its own fixed idle timeout). Defaults: node's. */
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  keepAliveTimeoutMs?: number;
  /** 0 or absent: no cap. */
  maxConnections?: number;
  /**
   * WebSocket upgrades (`Upgrade: websocket`; the Realtime sessions, core/realtime/): node:http through `ws`,
   * uWS natively. Absent: an upgrade request is answered as a plain request.
   */
  onUpgrade?: UpgradeHandler;
}

/** Takes the WebSocket upgrade requests of an engine. */
export interface UpgradeHandler {
  /** The largest message a client may send: a bigger one closes its socket with 1009 (uWS: one over twice
   *  this is cut without a close frame, since uWS buffers a message up to its own fixed bound first). */
  readonly maxMessageBytes: number;
  /** Called once per upgrade request; must answer it (`refuse`) or take it (`accept`). Must not throw. */
  handle(upgrade: WebSocketUpgrade): void;
}

/**
 * A WebSocket upgrade request, the same on both engines: the request's data (copied, as for an exchange),
 * then exactly one of `refuse` (an HTTP answer, the connection closes) or `accept` (the 101; the socket is
 * handed over as a `MessageSocket`). A client that leaves before either runs its `onAborted` callbacks.
 */
export interface WebSocketUpgrade {
  readonly method: string;
  readonly path: string;
  readonly rawQuery: string;
  /** Request headers with lowercased names; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  readonly remoteAddress: string;
  /** True once the client left before the upgrade was answered. */
  readonly aborted: boolean;
  /** Runs once if the client leaves before `refuse` or `accept` answered it (at once when it already left). */
  onAborted(cb: () => void): void;
  /** Answers with an HTTP status instead of the 101 and closes the connection. */
  refuse(status: number, headers: OutgoingHeaders, body: string): void;
  /**
   * Completes the upgrade with `protocol` (one the client offered in Sec-WebSocket-Protocol, or undefined for
   * none) and hands the socket to `onOpen`, synchronously or not at all (the client already left).
   */
  accept(protocol: string | undefined, onOpen: (socket: MessageSocket) => void): void;
}

/** An accepted WebSocket, on either engine. Every call after it closed is a no-op. */
export interface MessageSocket {
  /** Bytes sent and not yet written to the network (a slow reader's backlog). */
  readonly bufferedAmount: number;
  /** True until the socket closed, from either side. */
  readonly open: boolean;
  readonly isPaused: boolean;
  /** Sends one message (text unless `isBinary`). */
  send(data: Uint8Array | string, isBinary: boolean): void;
  /**
   * Asks the engine to stop reading the client. Messages may still arrive after it: node's `ws` delivers what it
   * had read, and uWS cannot stop reading a WebSocket at all, so the caller bounds what it holds.
   */
  pause(): void;
  resume(): void;
  /** Sends a close frame with `code` and `reason` (at most 123 bytes) after what is buffered. */
  close(code: number, reason: string): void;
  /** Drops the connection at once. */
  terminate(): void;
  /** The message callback (one; a message's bytes are the handler's to keep). */
  onMessage(cb: (data: Buffer, isBinary: boolean) => void): void;
  /** Runs once when the socket closed (either side, a network error), with the close code (1006: none). */
  onClose(cb: (code: number) => void): void;
}

export interface EngineServer {
  /** The engine actually serving (may differ from the one asked for after a fallback). */
  readonly engine: HttpEngine;
  /** Why uWS was asked for and node:http serves (its binary could not load here), when it happened. */
  fallback?: string;
  readonly port: number;
  /** Stops accepting new connections; requests in flight go on. */
  stopAccepting(): void;
  /** Stops listening and closes the remaining connections. */
  close(): Promise<void>;
}
