import type { RouteModule } from '../http/router.js';
import { installPipelineMetrics, metricsText, registry } from '../metrics.js';

/** GET /metrics (no credentials: expose it only to the monitoring network). */
export const metricsRoutes: RouteModule = (router) => {
  installPipelineMetrics();
  router.get(
    '/metrics',
    async () => ({
      headers: { 'content-type': registry.contentType },
      body: await metricsText(),
    }),
    { json: false },
  );
};
