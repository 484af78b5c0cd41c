import { auditKey, auditUnknownKey } from '../audit/audit-log.js';
import { cachedIpList, clientAddress } from '../auth/ip-match.js';
import type { RequestContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { ledgerRefusalToError, limitError, rateLimitHeaders } from '../ledger/errors.js';
import type { KeyLookup, RateLimitInfo, RateLimitType } from '../ledger/types.js';
import { limiterErrorsTotal } from '../metrics.js';
import type { Services } from '../service-types.js';
import type { WindowLimit, WindowSeconds } from './window-limiter.js';

/**
 * Limits on the endpoints that move no money through the paid pipeline (docs/endpoints.md, "Request limits"):
 *
 * - a caller that names a key: one request against the key's own requests-per-minute window, the counter the
 *   paid admission uses (`Ledger.countRequest`); the answer carries X-RateLimit-*. When the store is down the
 *   key's limit follows the ledger: the request fails like any ledger operation would (503).
 * - a caller with no usable credential (none, malformed, or unknown): per client IP, RATE_LIMIT_IP_PER_MINUTE /
 *   _HOUR / _DAY in fixed windows shared by every process through the store (`services.limiter`). When that
 *   store is down these limits FAIL OPEN (logged, counted in gateway_rate_limit_store_errors_total): a limiter
 *   outage must not take down the anonymous endpoints (wallet create, estimate, the paid 401/402 path).
 *
 * Every refusal is 429 `rate_limit_exceeded` with X-RateLimit-* and Retry-After (`limitError`).
 */

/**
 * The client address: the peer, or the right-most `X-Forwarded-For` hop not in TRUSTED_PROXIES when the peer
 * is a trusted proxy (the same rule as the paid pipeline's auth stage: core/auth/ip-match.ts).
 */
export function requestClientAddress(ctx: RequestContext, trustedProxies: readonly string[]): string {
  const trusted = cachedIpList(trustedProxies);
  if (trusted === null) return ctx.clientIp;
  return clientAddress(ctx.clientIp, ctx.headers['x-forwarded-for'], trusted);
}

const WINDOW_TYPES: Record<WindowSeconds, RateLimitType> = {
  60: 'requests_per_minute',
  3600: 'requests_per_hour',
  86400: 'requests_per_day',
};

/** Sets the X-RateLimit-* headers on whatever this request answers (success or error). */
export function setRateLimitHeaders(ctx: RequestContext, rl: RateLimitInfo): void {
  Object.assign(ctx.response.headers, rateLimitHeaders(rl));
}

/**
 * Counts one request of `credential` against its key's requests/min window; 429 when it is full,
 * 401 `invalid_api_key` (after the per-IP limit) when the key is unknown.
 */
export async function countKeyRequest(
  ctx: RequestContext,
  services: Services,
  credential: KeyLookup,
): Promise<void> {
  const ledger = services.ledger;
  if (ledger === undefined) return;
  auditKey(ctx, credential);
  const r = await ledger.countRequest({
    credential,
    requestsPerMinute: services.config.limits.requestsPerMinute,
  });
  if (r.ok) {
    setRateLimitHeaders(ctx, r.rateLimit);
    return;
  }
  if (r.code === 'invalid_api_key') {
    auditUnknownKey(ctx);
    await limitAnonymous(ctx, services);
    throw new GatewayError('invalid_api_key');
  }
  if (r.code === 'rate_limit_exceeded') setRateLimitHeaders(ctx, r.rateLimit);
  throw ledgerRefusalToError(r);
}

/** What the per-IP limits use: a stage hands what it was granted (the limiter is absent in tests without it). */
type IpLimitServices = Pick<Services, 'config' | 'log' | 'limiter'>;

/** One hit per client IP for a caller with no usable credential; throws 429 once a window is full. */
export async function limitAnonymous(ctx: RequestContext, services: IpLimitServices): Promise<void> {
  const { perMinute, perHour, perDay } = services.config.ipLimits;
  await limitByIp(ctx, services, 'ip', [
    { seconds: 60, limit: perMinute },
    { seconds: 3600, limit: perHour },
    { seconds: 86400, limit: perDay },
  ]);
}

/**
 * One hit of the client IP in `scope` (fixed windows); 429 `rate_limit_exceeded` with X-RateLimit-* and
 * Retry-After once a window is full. Fails open when the limit store does not answer.
 */
export async function limitByIp(
  ctx: RequestContext,
  services: IpLimitServices,
  scope: string,
  limits: readonly WindowLimit[],
  message?: string,
): Promise<void> {
  const limiter = services.limiter;
  if (limiter === undefined) return;
  const ip = requestClientAddress(ctx, services.config.trustedProxies);
  let v: Awaited<ReturnType<typeof limiter.hit>>;
  try {
    v = await limiter.hit(scope, ip, limits);
  } catch (err) {
    limiterErrorsTotal.inc({ scope });
    services.log.warn({ err, scope }, 'limit store unreachable; per-IP limit skipped (fails open)');
    return;
  }
  const rl: RateLimitInfo = {
    type: WINDOW_TYPES[v.seconds],
    limit: v.limit,
    remaining: v.remaining,
    resetUnix: v.resetUnix,
  };
  setRateLimitHeaders(ctx, rl);
  if (!v.allowed) throw limitError(rl, message);
}

/**
 * Failed admin logins per client IP (ADMIN_LOGIN_ATTEMPTS_PER_MINUTE): once the minute's failures reached the
 * limit, every admin request from that IP answers 429 at once — even with the right password — until the
 * window passes (answered, never held). `attempted`: a password was offered; `ok`: it matched.
 */
export async function adminLoginGate(
  ctx: RequestContext,
  services: Services,
  attempted: boolean,
  ok: boolean,
): Promise<void> {
  const limiter = services.limiter;
  if (limiter === undefined || !attempted) return;
  const ip = requestClientAddress(ctx, services.config.trustedProxies);
  const limits: WindowLimit[] = [{ seconds: 60, limit: services.config.adminLoginAttemptsPerMinute }];
  try {
    const v = ok
      ? await limiter.peek('admin-login', ip, limits)
      : await limiter.hit('admin-login', ip, limits);
    if (!v.allowed) {
      const rl: RateLimitInfo = {
        type: 'requests_per_minute',
        limit: v.limit,
        remaining: 0,
        resetUnix: v.resetUnix,
      };
      throw limitError(rl, 'Too many failed admin logins from this address; try again later');
    }
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    limiterErrorsTotal.inc({ scope: 'admin-login' });
    services.log.warn({ err }, 'limit store unreachable; admin login limit skipped (fails open)');
  }
}
