import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { type Child, freePort, startChild, waitForHttp } from '../lib/processes.js';
import { type BenchStore, benchGatewayEnv } from '../targets/gateway.js';

/**
 * The gateway the soak runs against: one process, paid under fixed pricing on the bench store (fresh Redis
 * prefix or temp SQLite DATA_DIR, keys funded through the ledger contract), credit leases at their default
 * (on), the default HTTP engine, with the same limits-out-of-the-way settings as the bench's gateway targets
 * (bench/targets/gateway.ts) plus a METRICS_TOKEN so the soak can read /metrics as an operator's scraper does.
 *
 * `entry: 'dist'` runs the build (`node dist/core/main.js`, what `npm start` runs); `'source'` runs
 * `node --import tsx core/main.ts` (the test slice: no tsc build inside a 90 s test).
 */

export type GatewayEntry = 'dist' | 'source';

export interface SoakGateway {
  baseUrl: string;
  pid: number;
  /** GET /metrics with the token: the Prometheus text. */
  metrics(timeoutMs: number): Promise<string>;
  /** The process's output tail (failure messages). */
  tail(): string;
  stop(): Promise<void>;
}

export async function startSoakGateway(
  store: BenchStore,
  upstreamUrl: string,
  entry: GatewayEntry,
  extraEnv: Record<string, string> = {},
): Promise<SoakGateway> {
  const root = process.cwd();
  const args =
    entry === 'dist' ? [join(root, 'dist/core/main.js')] : ['--import', 'tsx', join(root, 'core/main.ts')];
  if (!existsSync(args[args.length - 1]!)) throw new Error(`${args[args.length - 1]} is missing`);
  const port = await freePort();
  const metricsToken = randomBytes(24).toString('hex');
  const env: NodeJS.ProcessEnv = {
    ...benchGatewayEnv(port, upstreamUrl, 1024),
    METRICS_TOKEN: metricsToken,
    ...store.env,
    ...extraEnv,
  };
  const child: Child = startChild(process.execPath, args, { env, cwd: root });
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${baseUrl}/v1/models`, child, 60_000);
  } catch (err) {
    await child.stop();
    throw err;
  }
  return {
    baseUrl,
    pid: child.pid,
    async metrics(timeoutMs) {
      const r = await request(`${baseUrl}/metrics`, {
        headers: { authorization: `Bearer ${metricsToken}` },
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const text = await r.body.text();
      if (r.statusCode !== 200) throw new Error(`/metrics answered ${r.statusCode}: ${text.slice(0, 160)}`);
      return text;
    },
    tail: () => child.tail(),
    stop: () => child.stop(),
  };
}
