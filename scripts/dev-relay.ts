/**
 * `npm run relay:dev -- [--port 7777]`
 *
 * The Nostr relay the test suites use (test/support/nostr-relay.ts: @nostr-relay/core behind a `ws` server,
 * events in memory) on 127.0.0.1, for the README's network walkthrough. Prints its URL; stops on SIGINT/SIGTERM.
 * Not a relay to keep: nothing is stored on disk.
 */
import { parseArgs } from 'node:util';
import { startTestRelay } from '../test/support/nostr-relay.js';

const { values } = parseArgs({ options: { port: { type: 'string', default: '7777' } } });
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0) {
  console.error('--port must be a non-negative integer');
  process.exit(2);
}
const relay = await startTestRelay(port);
console.log(relay.url);
console.error(`dev Nostr relay listening on ${relay.url} (events in memory)`);
const stop = (): void => void relay.close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
