import { cachedIpList, clientAddress, parseIp } from '../auth/ip-match.js';
import { secretMatches } from '../auth/secret-match.js';
import type { Config } from '../config.js';
import type { RequestContext } from '../context.js';
import { GatewayError } from '../errors.js';

/**
 * The door of GET /metrics (revenue and traffic series are not public):
 * - METRICS_TOKEN set: `Authorization: Bearer <token>` (compared in constant time) or 401
 *   `metrics_auth_required` with `WWW-Authenticate: Bearer`;
 * - unset: loopback clients only (the client address per TRUSTED_PROXIES, so a local reverse proxy does not
 *   open it to everyone it forwards), others 403 `forbidden` — a token would not help them, so not 401.
 */
export function metricsGuard(
  config: Pick<Config, 'metricsToken' | 'trustedProxies'>,
): (ctx: RequestContext) => void {
  const token = config.metricsToken;
  if (token !== undefined) {
    return (ctx) => {
      const auth = ctx.headers.authorization;
      const given = auth !== undefined && /^bearer /i.test(auth) ? auth.slice(7).trim() : undefined;
      if (!secretMatches(given, token)) {
        throw new GatewayError('metrics_auth_required', { headers: { 'WWW-Authenticate': 'Bearer' } });
      }
    };
  }
  return (ctx) => {
    const trusted = cachedIpList(config.trustedProxies);
    const ip =
      trusted === null ? ctx.clientIp : clientAddress(ctx.clientIp, ctx.headers['x-forwarded-for'], trusted);
    if (parseIp(ip)?.range() !== 'loopback') {
      throw new GatewayError('forbidden', {
        message: '/metrics answers loopback clients only; the operator can set METRICS_TOKEN to open it',
      });
    }
  };
}
