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
