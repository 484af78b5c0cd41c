import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { type HttpEngine, loadConfig } from '../../core/config.js';
import type { RouteModule } from '../../core/http/router.js';
import { createLogger } from '../../core/log.js';
import { type Gateway, startGateway } from '../../core/server.js';
import type { Services } from '../../core/service-types.js';
import type { PipelineEntry } from '../../plugins/index.js';
import { lateBound } from './late-bound.js';

export interface TestGatewayOptions {
  engine: HttpEngine;
  /** Pipeline entries; default the configured (shipped) default pipeline. */
  pipeline?: PipelineEntry[];
  /** UPSTREAM_BASE_URL (e.g. a mock upstream's `url`). */
  upstreamUrl?: string;
  /** Extra environment variables for loadConfig. */
  env?: Record<string, string>;
  routes?: RouteModule[];
  services?: Partial<Services>;
  awaitCatalog?: boolean;
}

export interface TestGateway extends Gateway {
  /** `${url}/v1`, the OpenAI SDK baseURL. */
  readonly baseURL: string;
}

/** Starts a gateway on 127.0.0.1, port 0, with the given engine and pipeline; logs silenced by default. */
export async function startTestGateway(opts: TestGatewayOptions): Promise<TestGateway> {
  // The money store opens at start: a fresh SQLite folder per gateway (unless the test chose a store).
  const dataDir = opts.env?.DATA_DIR ?? mkdtempSync(join(tmpdir(), 'gw-test-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    HTTP_ENGINE: opts.engine,
    UPSTREAM_BASE_URL: opts.upstreamUrl ?? 'http://127.0.0.1:9/v1',
    UPSTREAM_TIMEOUT_MS: '10000',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...opts.env,
  });
  const gw = await startGateway({
    config,
    log: createLogger(config.logLevel),
    ...(opts.pipeline ? { pipeline: opts.pipeline } : {}),
    ...(opts.routes ? { routes: opts.routes } : {}),
    ...(opts.services ? { services: opts.services } : {}),
    awaitCatalog: opts.awaitCatalog ?? true,
  });
  if (opts.env?.DATA_DIR === undefined) {
    const close = gw.close.bind(gw);
    gw.close = async (graceMs?: number) => {
      const settled = await close(graceMs);
      rmSync(dataDir, { recursive: true, force: true });
      return settled;
    };
  }
  return Object.assign(gw, { baseURL: `${gw.url}/v1` });
}

/** One test gateway for the enclosing describe block: started before its tests, closed after. */
export function testGatewayPerSuite(opts: TestGatewayOptions): TestGateway {
  let gw: TestGateway | undefined;
  beforeAll(async () => {
    gw = await startTestGateway(opts);
  });
  afterAll(async () => {
    await gw?.close();
  });
  return lateBound(() => gw, 'the test gateway');
}
