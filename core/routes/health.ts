import { GatewayError } from '../errors.js';
import type { RouteModule } from '../http/router.js';
import type { Services } from '../service-types.js';
import type { RedisNodes } from '../store/connection.js';

/**
 * Probes for orchestrators and load balancers (free, no credentials):
 * - `GET /healthz`: the process answers (liveness).
 * - `GET /readyz`: 200 only when this process should get traffic: not shutting down, the money store answers,
 *   and the primary mint answers (when the node takes eCash). Otherwise 503 `service_unavailable` with
 *   `details.checks`. On Redis, `redis` says which form is in use (single, cluster, sentinel) and how many of
 *   its nodes answer; a Redis Cluster whose slots are not all served (cluster_state not ok) is `failing`.
 *   Results are cached for a second so probes cannot load the store or the mint.
 */

type Check = 'ok' | 'failing' | 'not_configured' | 'draining';

const CACHE_MS = 1000;
const PROBE_TIMEOUT_MS = 2000;

function inTime<T>(p: Promise<T>): Promise<T> {
  return Promise.race([
    p,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error('timeout')), PROBE_TIMEOUT_MS).unref(),
    ),
  ]);
}

async function storeAnswers(services: Services): Promise<Check> {
  const s = services.store;
  if (s === undefined) return services.ledger ? 'ok' : 'not_configured';
  try {
    if (s.kind === 'redis') {
      await inTime(s.redis.ping());
      if (s.form === 'cluster') {
        const info = String(await inTime(s.redis.cluster('INFO')));
        if (!info.includes('cluster_state:ok')) return 'failing';
      }
    } else {
      s.db.prepare('SELECT 1').get();
    }
    return 'ok';
  } catch {
    return 'failing';
  }
}

async function mintAnswers(services: Services): Promise<Check> {
  const primary = services.wallet?.mints[0];
  if (primary === undefined) return 'not_configured';
  try {
    const res = await fetch(`${primary}/v1/keysets`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    await res.arrayBuffer();
    return res.ok ? 'ok' : 'failing';
  } catch {
    return 'failing';
  }
}

export const healthRoutes: RouteModule = (router, services) => {
  let cached: { at: number; checks: Record<string, Check>; redis?: RedisNodes } | undefined;

  // `pid`: which process answered (with WORKERS > 1, which worker).
  router.add('GET', '/healthz', () => ({ json: { status: 'ok', pid: process.pid } }), { json: false });

  router.add(
    'GET',
    '/readyz',
    async () => {
      if (services.lifecycle?.draining) {
        throw new GatewayError('service_unavailable', {
          message: 'This process is shutting down',
          details: { checks: { lifecycle: 'draining' } },
        });
      }
      if (cached === undefined || Date.now() - cached.at > CACHE_MS) {
        const s = services.store;
        const [store, mint, redis] = await Promise.all([
          storeAnswers(services),
          mintAnswers(services),
          s?.kind === 'redis' ? s.nodes() : undefined,
        ]);
        cached = { at: Date.now(), checks: { store, mint }, ...(redis !== undefined ? { redis } : {}) };
      }
      const { checks, redis } = cached;
      const fallback = services.lifecycle?.engineFallback;
      const extra = {
        ...(redis !== undefined ? { redis } : {}),
        ...(fallback !== undefined ? { engine: fallback } : {}),
      };
      if (Object.values(checks).includes('failing')) {
        throw new GatewayError('service_unavailable', {
          message: 'Not ready',
          details: { checks, ...extra },
        });
      }
      return { json: { status: 'ready', checks, ...extra } };
    },
    { json: false },
  );
};
