import { parseArgs } from 'node:util';
import { loadConfig, readEnvFile } from '../core/config.js';
import { type DiscoveredNode, discoverNodes, providerEntry } from '../core/network/discovery.js';

/**
 * `npm run -s nodes:discover [-- --relays ws://…,wss://… --timeout-ms 5000 --all --providers]`: finds other
 * nodes by their listings (kind 38421) at the relays (default NOSTR_RELAYS), health-checks each one's
 * /v1/info and /v1/models, keeps those that accept one of our trusted mints (CASHU_MINTS; `--all` shows the
 * others too, with the reason), and prints a table: URL, mints, latency, and each model's price in msats per
 * 1,000 prompt / completion tokens. `--providers` prints providers-file entries (docs/providers.md) instead.
 * Exit 1 when no relay answered.
 */
const { values } = parseArgs({
  options: {
    relays: { type: 'string' },
    'timeout-ms': { type: 'string', default: '5000' },
    providers: { type: 'boolean', default: false },
    all: { type: 'boolean', default: false },
  },
});
readEnvFile();
const config = loadConfig();
const relays = values.relays
  ? values.relays
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
  : config.network.relays;
if (relays.length === 0) {
  console.error('nodes:discover: no relays (set NOSTR_RELAYS or pass --relays ws://…)');
  process.exit(2);
}
const timeoutMs = Number(values['timeout-ms']);
const { nodes, relayErrors } = await discoverNodes({ relays, trustedMints: config.cashu.mints, timeoutMs });
for (const e of relayErrors) console.error(`relay ${e.relay}: ${e.error}`);
const shown = values.all ? nodes : nodes.filter((n) => n.usable);

const price = (v: number | null) => (v === null ? '-' : String(v));
function table(list: DiscoveredNode[]): string {
  const rows: string[][] = [
    ['url', 'name', 'mints', 'latency_ms', 'model', 'prompt_msats/1k', 'completion_msats/1k', 'status'],
  ];
  for (const n of list) {
    const base = [
      n.url ?? n.listing.urls[0] ?? '-',
      n.listing.name ?? '-',
      n.mints.join(' ') || '-',
      n.latencyMs === null ? '-' : String(n.latencyMs),
    ];
    const status = n.usable ? 'ok' : (n.reason ?? 'unusable');
    if (n.models.length === 0) rows.push([...base, '-', '-', '-', status]);
    for (const m of n.models)
      rows.push([...base, m.id, price(m.prompt_msats), price(m.completion_msats), status]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

if (values.providers) {
  const providers = shown.filter((n) => n.usable).map(providerEntry);
  process.stdout.write(`${JSON.stringify({ providers }, null, 2)}\n`);
} else {
  process.stdout.write(`${table(shown)}\n`);
}
process.exitCode = relayErrors.length === relays.length ? 1 : 0;
