import { openBenchStore } from '../targets/gateway.js';

/**
 * One funded bench key on Redis under a fresh random prefix, for the profile scripts' paid mode
 * (bench/profile/cpu-per-call.sh -p paid): prints `REDIS_URL=… REDIS_PREFIX=… KEY=…` on one line, to `eval`.
 * The store is left in place for the gateway processes; the calling script deletes the prefix at exit.
 */
const store = await openBenchStore('redis');
const [key] = store.keys;
process.stdout.write(`REDIS_URL=${store.env.REDIS_URL} REDIS_PREFIX=${store.env.REDIS_PREFIX} KEY=${key}\n`);
await store.ledger.close();
process.exit(0);
