/**
 * `npm run models:sync [-- --out models.json]`: refreshes models.json from the upstream's model list
 * (UPSTREAM_BASE_URL, UPSTREAM_API_KEY), keeping every price and field the operator set. Default path:
 * MODELS_PATH, else ./models.json. The running gateway picks the new file up by itself (it watches it).
 */
import { ConfigError, loadConfig } from '../core/config.js';
import { syncModels } from './lib/models-sync.js';

try {
  const config = loadConfig();
  const i = process.argv.indexOf('--out');
  const path = i !== -1 ? process.argv[i + 1] : (config.modelsPath ?? './models.json');
  if (!path) throw new ConfigError('--out needs a path');
  const r = await syncModels({ baseUrl: config.upstreamBaseUrl, apiKey: config.upstreamApiKey, path });
  console.log(
    `${path}: ${r.total} models (${r.added.length} new from the upstream, ${r.kept} already there)`,
  );
} catch (err) {
  console.error(err instanceof ConfigError ? `Configuration error: ${err.message}` : err);
  process.exit(1);
}
