import { loadConfig, readEnvFile } from '../core/config.js';
import { createLogger } from '../core/log.js';
import { openStore, type StoreConnection } from '../core/store/connection.js';
import { createWallet, type WalletService } from '../core/wallet/wallet.js';

/**
 * Shared start-up of the operator wallet scripts: the gateway's own configuration (CASHU_MINTS, CASHU_SEED,
 * REDIS_URL / DATA_DIR), the same store, a recovery pass first (so balances include anything a crash left).
 * Logs go to stderr at warn level; stdout carries only the script's result.
 */
export async function openOperatorWallet(): Promise<{ wallet: WalletService; conn: StoreConnection }> {
  readEnvFile();
  const config = loadConfig();
  if (config.cashu.mints.length === 0) {
    throw new Error(
      'CASHU_MINTS is empty: set it (and REDIS_URL or DATA_DIR) as the gateway has them, in the environment or in .env (ENV_FILE)',
    );
  }
  const conn = openStore({
    redis: config.redis,
    redisPrefix: config.redisPrefix,
    dataDir: config.dataDir,
  });
  const log = createLogger(process.env.LOG_LEVEL ?? 'warn', process.stderr);
  const wallet = await createWallet({
    conn,
    mints: config.cashu.mints,
    seed: config.cashu.seed,
    log,
  });
  const report = await wallet.recover();
  if (report.examined > 0) console.error(`recovery: ${JSON.stringify(report)}`);
  return { wallet, conn };
}

export function fail(err: unknown): never {
  const e = err as { code?: string; message?: string };
  console.error(e.code ? `${e.code}: ${e.message}` : String(e.message ?? err));
  process.exit(1);
}
