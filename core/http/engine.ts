import type { HttpEngine } from '../config.js';
import type { Logger } from '../log.js';
import type { Exchange } from './exchange.js';
import { listenNode } from './node-engine.js';
import { listenUws, loadUws } from './uws-engine.js';

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
}

export interface EngineServer {
  /** The engine actually serving (may differ from the one asked for after a fallback). */
  readonly engine: HttpEngine;
  readonly port: number;
  /** Stops accepting new connections; requests in flight go on. */
  stopAccepting(): void;
  /** Stops listening and closes the remaining connections. */
  close(): Promise<void>;
}

/**
 * Starts the requested engine. `uws` falls back to node:http, with one warning line, when the native
 * uWebSockets.js binary cannot load on this platform or Node version.
 */
export async function listen(
  engine: HttpEngine,
  handler: ExchangeHandler,
  opts: ListenOptions,
  log?: Logger,
  load: () => ReturnType<typeof loadUws> = loadUws,
): Promise<EngineServer> {
  if (engine === 'uws') {
    let uws: ReturnType<typeof loadUws> | undefined;
    try {
      uws = load();
    } catch (err) {
      log?.warn(
        { reason: err instanceof Error ? err.message.split('\n')[0] : String(err) },
        'uWebSockets.js binary could not load on this platform; falling back to the node:http engine',
      );
    }
    if (uws !== undefined) return listenUws(uws, handler, opts);
  }
  return listenNode(handler, opts);
}
