import { createLedger } from '../../../core/ledger/index.js';
import { openStore } from '../../../core/store/connection.js';

/**
 * A separate OS process for the multi-process race test: opens its own store connection (Redis or the
 * shared SQLite file), fires ADMITS concurrent admits of MSAT each, reports how many succeeded, exits.
 */
const env = process.env;
const conn = openStore(
  env.W_REDIS_URL
    ? { redisUrl: env.W_REDIS_URL, redisPrefix: env.W_PREFIX! }
    : { dataDir: env.W_DATA_DIR!, sqliteFile: 'ledger.db' },
);
const ledger = await createLedger(conn, { warn: () => {} });
const n = Number(env.W_ADMITS);
const msat = Number(env.W_MSAT);
const now = Number(env.W_NOW);
const limits = { requestsPerMinute: 1_000_000, tokensPerHour: 1_000_000_000, concurrent: 1_000_000 };
const results = await Promise.all(
  Array.from({ length: n }, (_, i) =>
    ledger.admit({
      credential: { apiKey: env.W_API_KEY! },
      requestId: `p${process.pid}-${i}`,
      model: 'm',
      maxMsat: msat,
      minMsat: msat,
      expiresInMs: 600_000,
      limits,
      now,
    }),
  ),
);
const ok = results.filter((r) => r.ok).length;
const paymentRequired = results.filter((r) => !r.ok && r.code === 'payment_required').length;
process.send?.({ ok, paymentRequired });
await conn.close();
process.exit(0);
