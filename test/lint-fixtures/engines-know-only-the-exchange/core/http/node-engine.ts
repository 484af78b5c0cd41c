// Breaks engines-know-only-the-exchange: the engine calls the router itself. The exchange and the
// Server-Timing rule are what it may know.
import { serverTiming } from '../server-timing.js';
import type { Exchange } from './exchange.js';
import { route } from './router.js';

export const serve = (ex: Exchange): string => route(ex.path) + serverTiming(1);
