/**
 * `npm run models:sync [-- --out models.json]`: refreshes models.json from the upstream's model list
 * (UPSTREAM_BASE_URL, UPSTREAM_API_KEY), keeping every price and field the operator set. Default path:
 * MODELS_PATH, else ./models.json. The running gateway picks the new file up by itself (it watches it).
 */
import { ConfigError, loadConfig, readEnvFile } from '../core/config.js';
import { ModelsSyncError, syncModels } from './lib/models-sync.js';

try {
  readEnvFile();
  const config = loadConfig();
  const i = process.argv.indexOf('--out');
  const path = i !== -1 ? process.argv[i + 1] : (config.modelsPath ?? './models.json');
  if (!path) throw new ConfigError('--out needs a path');
  const r = await syncModels({ baseUrl: config.upstreamBaseUrl, apiKey: config.upstreamApiKey, path });
  console.log(
    `${path}: ${r.total} models (${r.added.length} new from the upstream, ${r.kept} already there)`,
  );
} catch (err) {
  if (err instanceof ConfigError) console.error(`Configuration error: ${err.message}`);
  else if (err instanceof ModelsSyncError) console.error(`models:sync: ${err.message}`);
  else console.error(err);
  process.exit(1);
}
