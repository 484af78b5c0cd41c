import type { RequestContext } from '../core/context.js';
import { rateLimitHeaders } from '../core/ledger/errors.js';
import type { Plugin, PluginFactory } from '../core/plugin.js';
import { ADMISSION, noOptions } from './paid-state.js';

/**
 * The rate-limit stage: writes `X-RateLimit-Limit`, `-Remaining`, `-Reset` and `-Type` on every response
 * of an admitted call (success or error). The limits themselves are enforced inside the reserve stage's
 * single admission round trip (requests per minute, tokens per hour, concurrent calls), which answers 429
 * `rate_limit_exceeded` with these headers and `Retry-After`.
 *
 * FAILS OPEN by design: without admission information (a refusal before admission, a pipeline without the
 * reserve stage) it writes nothing and lets the response pass; enforcement never depends on it.
 */
export const rateLimit: PluginFactory = (options): Plugin => {
  noOptions('rate-limit', options);
  function write(ctx: RequestContext, headers: Record<string, string | string[]>): void {
    const a = ctx.local(ADMISSION);
    if (a) Object.assign(headers, rateLimitHeaders(a.rateLimit));
  }
  return {
    name: 'rate-limit',
    onResponseHead(ctx, head) {
      write(ctx, head.headers);
    },
    onError(ctx) {
      write(ctx, ctx.response.headers);
    },
  };
};
