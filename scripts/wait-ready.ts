/**
 * `npm run -s wait-ready -- <url>… [--timeout 60]`
 *
 * Waits until every URL answers, for shell walkthroughs that start servers in the background: an `http(s)://`
 * URL must answer 2xx (the gateway's `/readyz` answers 503 until its store and wallet are up), a `ws(s)://` or
 * `tcp://host:port` one must accept a TCP connection (a Nostr relay). Exits 0 once all answer; after `--timeout`
 * seconds (default 60) it names the ones that did not and exits 1, so a walkthrough stops instead of going on
 * against a server that never started.
 */
import { parseArgs } from 'node:util';
import { waitReady } from './lib/wait-ready.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { timeout: { type: 'string', default: '60' } },
});
const timeoutMs = Number(values.timeout) * 1000;
if (positionals.length === 0 || !(timeoutMs > 0)) {
  console.error('usage: npm run -s wait-ready -- <url>… [--timeout seconds]');
  process.exit(2);
}

const late = await waitReady(positionals, { timeoutMs });
for (const l of late)
  console.error(`wait-ready: ${l.url} did not answer within ${values.timeout} s (${l.last})`);
process.exit(late.length > 0 ? 1 : 0);
