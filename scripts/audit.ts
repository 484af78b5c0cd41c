import { loadConfig, readEnvFile } from '../core/config.js';
import { createLedger } from '../core/ledger/index.js';
import { openStore } from '../core/store/connection.js';

/**
 * `npm run audit`: checks the money invariants of the configured store (the Redis form or DATA_DIR) without
 * changing anything: conservation per account and in total (deposited = balance + spent + withdrawn +
 * fees), 0 ≤ reserved ≤ balance, reserved = sum of open reservations. Prints the report as JSON and exits
 * 1 when there is any breach, 2 when the store cannot be read. A store that cannot be read is asked again
 * every half second for up to AUDIT_WAIT_MS (default 20 s): a Redis Cluster master that just went answers
 * again once its replica took over, and the audit reads every account or none.
 */
readEnvFile();
const config = loadConfig();
const conn = openStore({
  redis: config.redis,
  redisPrefix: config.redisPrefix,
  dataDir: config.dataDir,
});
const waitMs = Number(process.env.AUDIT_WAIT_MS ?? 20_000);
const until = Date.now() + waitMs;
async function audit() {
  let ledger: Awaited<ReturnType<typeof createLedger>> | undefined;
  for (let said = false; ; ) {
    try {
      ledger ??= await createLedger(conn, { warn: (m) => console.error(m) });
      return await ledger.checkConservation();
    } catch (err) {
      if ((err as { code?: string }).code !== 'store_unavailable' || Date.now() >= until) throw err;
      if (!said) console.error(`the store is unavailable; asking again for up to ${waitMs} ms`);
      said = true;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
try {
  const report = await audit();
  console.log(JSON.stringify({ store: conn.kind, ...report }, null, 2));
  process.exitCode = report.ok ? 0 : 1;
} catch (err) {
  console.error(`audit failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 2;
} finally {
  await conn.close();
}
