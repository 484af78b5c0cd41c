import { metricsGuard } from '../http/metrics-guard.js';
import type { RouteModule } from '../http/router.js';
import { installPipelineMetrics, metricsText, registry } from '../metrics.js';
import { installRuntimeMetrics } from '../runtime-metrics.js';

/**
 * GET /metrics, behind a closed door (core/http/metrics-guard.ts): METRICS_TOKEN as a bearer token when set,
 * else loopback clients only. The start-up log says which, and how to open it.
 */
export const metricsRoutes: RouteModule = (router, services) => {
  installPipelineMetrics();
  installRuntimeMetrics();
  const guard = metricsGuard(services.config);
  if (services.config.metricsToken === undefined) {
    services.log.info(
      '/metrics answers loopback clients only; set METRICS_TOKEN to scrape it from elsewhere with Authorization: Bearer <token>',
    );
  }
  router.get(
    '/metrics',
    async (ctx) => {
      guard(ctx);
      return { headers: { 'content-type': registry.contentType }, body: await metricsText() };
    },
    { json: false },
  );
};
