import { isClusterWorker, runPrimary } from './cluster.js';
import { ConfigError, loadConfig, readEnvFile } from './config.js';
import { createLogger, redactUrl, setLogger } from './log.js';
import { nodeSupport } from './node-version.js';
import { startGateway } from './server.js';
import { closeOnSignals } from './shutdown.js';

/**
 * `npm start` entry: reads the environment, starts the gateway, and shuts down gracefully on SIGINT/SIGTERM
 * (stop accepting, let requests in flight finish and settle for up to SHUTDOWN_GRACE_MS, close the stores).
 * With WORKERS > 1 this process is the cluster primary and each worker runs the same entry (core/cluster.ts).
 */
async function main(): Promise<void> {
  const support = nodeSupport(process.version);
  if (support.kind === 'refused') {
    console.error(support.message);
    process.exit(1);
  }
  let config: ReturnType<typeof loadConfig>;
  try {
    readEnvFile();
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`Configuration error: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
  const log = createLogger(config.logLevel);
  setLogger(log);
  if (support.kind === 'end_of_life' && !isClusterWorker()) log.warn(support.message);
  if (config.workers > 1 && !isClusterWorker()) {
    await runPrimary(config, log);
    return;
  }
  const gateway = await startGateway({ config, log });
  // SIGHUP: re-read models.json now (it is also watched for changes). Not a shutdown signal: closeOnSignals
  // leaves it (and Node's heap-snapshot signal, if set) alone, though close-with-grace's defaults include both.
  process.on('SIGHUP', () => {
    gateway.services.catalog.reloadFile();
  });
  // SIGTERM/SIGINT: stop accepting, let calls in flight finish and settle (SHUTDOWN_GRACE_MS), close the
  // stores, exit 0 when everything settled, 1 when something was left behind (each wait has its own
  // deadline, and a last timer at the grace plus SHUTDOWN_BOUND_MS ends the process: core/shutdown.ts).
  closeOnSignals({ graceMs: config.shutdownGraceMs, log, close: (graceMs) => gateway.close(graceMs) });
  // Announced only now: a supervisor (or a test) that signals the process as soon as it reads this line must
  // meet the handlers above, not Node's default action (which ends the process without a drain).
  log.info(
    {
      engine: gateway.engine,
      host: config.host,
      port: gateway.port,
      upstream: redactUrl(config.upstreamBaseUrl),
      ...(isClusterWorker() ? { worker: process.pid } : {}),
    },
    `gateway listening on ${config.host}:${gateway.port}`,
  );
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? `Configuration error: ${err.message}` : err);
  process.exit(1);
});
