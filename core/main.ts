import closeWithGrace from 'close-with-grace';
import { isClusterWorker, runPrimary } from './cluster.js';
import { ConfigError, loadConfig } from './config.js';
import { createLogger, redactUrl, setLogger } from './log.js';
import { startGateway } from './server.js';
import { SHUTDOWN_BOUND_MS } from './shutdown.js';

/**
 * `npm start` entry: reads the environment, starts the gateway, and shuts down gracefully on SIGINT/SIGTERM
 * (stop accepting, let requests in flight finish and settle for up to SHUTDOWN_GRACE_MS, close the stores).
 * With WORKERS > 1 this process is the cluster primary and each worker runs the same entry (core/cluster.ts).
 */
async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
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
  if (config.workers > 1 && !isClusterWorker()) {
    await runPrimary(config, log);
    return;
  }
  const gateway = await startGateway({ config, log });
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
  // SIGHUP: re-read models.json now (it is also watched for changes).
  process.on('SIGHUP', () => {
    gateway.services.catalog.reloadFile();
  });
  // SIGTERM/SIGINT: stop accepting, let calls in flight finish and settle (SHUTDOWN_GRACE_MS), close the
  // stores, exit 0 when everything settled, 1 when something was left behind (each wait has its own
  // deadline, core/shutdown.ts). A second signal ends the process at once (exit 1); so does close-with-grace's
  // last timer at the grace plus SHUTDOWN_BOUND_MS (a ref'd timer, created before the shutdown starts: it fires
  // even when nothing else is left on the event loop).
  closeWithGrace(
    { delay: config.shutdownGraceMs + SHUTDOWN_BOUND_MS, logger: log },
    async ({ signal, err }) => {
      if (err) log.error({ err }, 'fatal error; shutting down');
      else log.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down');
      if (!(await gateway.close(config.shutdownGraceMs))) {
        throw new Error('shut down with work left behind (see the errors above)');
      }
      log.info('shut down cleanly');
    },
  );
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? `Configuration error: ${err.message}` : err);
  process.exit(1);
});
