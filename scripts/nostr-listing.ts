import { loadConfig, readEnvFile } from '../core/config.js';
import { createLedger } from '../core/ledger/index.js';
import { signListing } from '../core/network/listing.js';
import { listingFor } from '../core/network/node-network.js';
import { loadNodeIdentity } from '../core/network/nostr-identity.js';
import { openStore } from '../core/store/connection.js';

/**
 * `npm run -s nostr:listing`: prints the node's signed listing (kind 38421) as one line of JSON, exactly as
 * the running gateway publishes it, without publishing anything. The key is NOSTR_NSEC, else the one kept in
 * the configured money store (made there now if the node never started). Exit 2 when it cannot be made.
 */
readEnvFile();
const config = loadConfig();
const conn = openStore({
  redis: config.redis,
  redisPrefix: config.redisPrefix,
  dataDir: config.dataDir,
});
try {
  // The ledger waits for a Redis connection and applies the SQLite migrations the key's table is in.
  await createLedger(conn, { prefix: config.redisPrefix, warn: (m) => console.error(m) });
  const identity = await loadNodeIdentity(conn, config.network.nsec);
  const event = signListing(identity, listingFor(config, identity), Math.floor(Date.now() / 1000));
  process.stdout.write(`${JSON.stringify(event)}\n`);
} catch (err) {
  console.error(`nostr:listing failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 2;
} finally {
  await conn.close();
}
