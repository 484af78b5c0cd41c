import type { OutgoingHeaders } from './exchange.js';
import { addVary } from './respond.js';

/**
 * CORS for browser clients: configurable origins (`CORS_ORIGINS`, default `*`), methods GET, POST, PUT,
 * DELETE, OPTIONS (plus PATCH for the admin settings), the headers a client sends, Max-Age 86400, and the
 * response headers a browser client needs to read (X-Cashu change, request id, rate limits).
 */
const ALLOW_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';
const ALLOW_HEADERS =
  'Authorization, Content-Type, X-Cashu, X-Request-ID, X-Api-Key, Anthropic-Version, Anthropic-Beta, Prefer';
const EXPOSE_HEADERS =
  'X-Cashu, X-Cashu-Change, X-Cashu-Payment-Request, X-Node-Cost, X-Request-ID, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-RateLimit-Type, Retry-After, WWW-Authenticate, Payment-Receipt, X-Receipt';

export class Cors {
  private readonly any: boolean;
  private readonly origins: Set<string>;

  constructor(origins: readonly string[]) {
    this.any = origins.includes('*');
    this.origins = new Set(origins.map((o) => o.replace(/\/+$/, '')));
  }

  /** Headers for an actual (non-preflight) response; empty when the origin is not allowed. */
  headers(origin: string | undefined, into: OutgoingHeaders): void {
    if (this.any) {
      into['access-control-allow-origin'] = '*';
      into['access-control-expose-headers'] = EXPOSE_HEADERS;
    } else if (origin !== undefined && this.origins.has(origin)) {
      into['access-control-allow-origin'] = origin;
      into['access-control-expose-headers'] = EXPOSE_HEADERS;
      addVary(into, 'origin');
    }
  }

  /** Headers for a preflight (OPTIONS) answer. */
  preflight(origin: string | undefined, into: OutgoingHeaders): void {
    this.headers(origin, into);
    if (into['access-control-allow-origin'] === undefined) return;
    into['access-control-allow-methods'] = ALLOW_METHODS;
    into['access-control-allow-headers'] = ALLOW_HEADERS;
    into['access-control-max-age'] = '86400';
  }
}
