import type { HttpEngine } from '../config.js';
import type { Logger } from '../log.js';
import type { EngineServer, ExchangeHandler, ListenOptions } from './exchange.js';
import { listenNode } from './node-engine.js';
import { listenUws, loadUws } from './uws-engine.js';

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
    let reason = '';
    try {
      uws = load();
    } catch (err) {
      reason = err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err);
      log?.warn(
        { reason },
        'uWebSockets.js binary could not load on this platform; falling back to the node:http engine',
      );
    }
    if (uws !== undefined) return listenUws(uws, handler, opts);
    const server = await listenNode(handler, opts);
    // Said by GET /readyz (core/routes/health.ts): no uWS build on the npm registry loads on Node 22 or 24 with
    // glibc 2.36 (README, "HTTP engines").
    server.fallback = `uWebSockets.js could not load on Node ${process.versions.node} (${process.platform}-${process.arch}, ABI ${process.versions.modules}): ${reason.slice(0, 200)}`;
    return server;
  }
  return listenNode(handler, opts);
}
