import { providerFailoversTotal, providerRequestsTotal } from '../metrics.js';
import type { Services } from '../service-types.js';

/**
 * GET /admin/api/providers (the console's Providers view): every provider of the providers file in the file's
 * order, with what an operator needs to see why calls go where they go — routing policy, priority, weight,
 * the measured time to the response head, the breaker's state and this process's call outcomes and failovers
 * (read from the same prom-client counters `/metrics` exposes, so the two never disagree).
 *
 * Never shown: a provider's API key, its extra headers, and anything of its base URL but the host (a URL's
 * user info, path or query may carry a credential).
 */

const OUTCOMES = ['ok', 'error', 'status_5xx', 'status_429'] as const;
type Outcome = (typeof OUTCOMES)[number];

/** No call yet: every outcome 0. */
export const noCalls = (): Record<Outcome, number> => ({ ok: 0, error: 0, status_5xx: 0, status_429: 0 });

/** Counter values by provider name (and outcome), from the process's registry (also the Network view's). */
export async function providerCounts(): Promise<{
  calls: Map<string, Record<Outcome, number>>;
  failovers: Map<string, number>;
}> {
  const calls = new Map<string, Record<Outcome, number>>();
  for (const v of (await providerRequestsTotal.get()).values) {
    const name = String(v.labels.provider);
    const outcome = v.labels.outcome as Outcome;
    if (!OUTCOMES.includes(outcome)) continue;
    const row = calls.get(name) ?? noCalls();
    row[outcome] += v.value;
    calls.set(name, row);
  }
  const failovers = new Map<string, number>();
  for (const v of (await providerFailoversTotal.get()).values) {
    const name = String(v.labels.provider);
    failovers.set(name, (failovers.get(name) ?? 0) + v.value);
  }
  return { calls, failovers };
}

/** The JSON answer of GET /admin/api/providers (schema AdminProviders). */
export async function providersView(services: Services, now = Date.now()) {
  const { calls, failovers } = await providerCounts();
  return {
    routing_policy: services.config.routingPolicy,
    providers: services.providers.list.map((p) => {
      const b = p.breaker.snapshot(now);
      return {
        name: p.name,
        host: new URL(p.spec.baseUrl).host,
        status: p.breaker.status(now),
        priority: p.spec.priority,
        weight: p.spec.weight,
        ttfb_ms: p.ttfbMs === null ? null : Math.round(p.ttfbMs * 10) / 10,
        models: p.namedModels,
        breaker: {
          state: b.state,
          consecutive_failures: b.consecutiveFailures,
          opened_at: b.openedAtMs,
          retry_at: b.retryAtMs,
        },
        calls: calls.get(p.name) ?? noCalls(),
        failovers: failovers.get(p.name) ?? 0,
      };
    }),
  };
}
