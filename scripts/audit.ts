import { loadConfig, readEnvFile } from '../core/config.js';
import { createLedger } from '../core/ledger/index.js';
import { openStore } from '../core/store/connection.js';

/**
 * `npm run audit`: checks the money invariants of the configured store (the Redis form or DATA_DIR) without
 * changing anything: conservation per account and in total (deposited = balance + spent + withdrawn +
 * fees), 0 ≤ reserved ≤ balance, reserved = sum of open reservations. Prints the report as JSON and exits
 * 1 when there is any breach, 2 when the store cannot be read.
 */
readEnvFile();
const config = loadConfig();
const conn = openStore({
  redis: config.redis,
  redisPrefix: config.redisPrefix,
  dataDir: config.dataDir,
});
try {
  const ledger = await createLedger(conn, { warn: (m) => console.error(m) });
  const report = await ledger.checkConservation();
  console.log(JSON.stringify({ store: conn.kind, ...report }, null, 2));
  process.exitCode = report.ok ? 0 : 1;
} catch (err) {
  console.error(`audit failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 2;
} finally {
  await conn.close();
}
