import { openBenchStore } from '../targets/gateway.js';

/**
 * One funded bench key for the profile scripts' paid mode (bench/profile/cpu-per-call.sh -p paid): on Redis under
 * a fresh random prefix, printing `REDIS_URL=… REDIS_PREFIX=… KEY=…` on one line, to `eval`; with the argument
 * `sqlite`, in a fresh SQLite data directory, printing `DATA_DIR=… KEY=…`. The store is left in place for the
 * gateway processes; the calling script deletes the prefix (or the directory) at exit.
 */
const kind = process.argv[2] === 'sqlite' ? 'sqlite' : 'redis';
const store = await openBenchStore(kind);
const [key] = store.keys;
process.stdout.write(
  kind === 'sqlite'
    ? `DATA_DIR=${store.env.DATA_DIR} KEY=${key}\n`
    : `REDIS_URL=${store.env.REDIS_URL} REDIS_PREFIX=${store.env.REDIS_PREFIX} KEY=${key}\n`,
);
await store.ledger.close();
process.exit(0);
