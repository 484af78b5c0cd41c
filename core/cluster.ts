import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { Config } from './config.js';
import type { Logger } from './log.js';
import { SHUTDOWN_BOUND_MS, stopSignals } from './shutdown.js';

/**
 * `WORKERS=N` (docs/architecture.md): N gateway processes on one port with node:cluster — the primary forks
 * the workers, the kernel socket is shared and connections are handed out round-robin. Every worker is a
 * whole gateway (its own pools, credit leases and background passes, which already work across processes
 * sharing a store). The primary only supervises:
 *
 * - a worker that dies unexpectedly is forked again (more than 3 × N deaths within a minute stop the node: a
 *   crash loop, e.g. a store that refuses every start, is not hidden);
 * - `/metrics` on any worker asks the primary, which aggregates every worker's registry (prom-client's
 *   AggregatorRegistry: counters and histograms summed, per-process gauges as prom-client defines);
 * - SIGTERM/SIGINT (and SIGQUIT, SIGUSR2: every signal a single gateway stops on, `stopSignals`) ends in a
 *   SIGTERM to every worker, which shuts down gracefully (SHUTDOWN_GRACE_MS); the primary exits 0 once all
 *   exited cleanly (1 otherwise), or kills what is left after the grace plus SHUTDOWN_BOUND_MS or on a second
 *   signal;
 * - SIGHUP is passed to every worker, each of which re-reads models.json (core/main.ts): without this listener
 *   the signal's default action would end the primary, and with it the node.
 */

const METRICS_REQ = 'gateway:metrics-req';
const METRICS_RES = 'gateway:metrics-res';
const METRICS_TIMEOUT_MS = 5_000;

export function isClusterWorker(): boolean {
  return cluster.isWorker;
}

export async function runPrimary(config: Config, log: Logger): Promise<void> {
  const aggregator = new AggregatorRegistry();
  const n = config.workers;
  let stopping = false;
  let clean = true;
  const deaths: number[] = [];

  const fork = (): Worker => {
    const w = cluster.fork();
    w.on('message', (m: { type?: string; id?: number }) => {
      if (m?.type !== METRICS_REQ) return;
      aggregator
        .clusterMetrics()
        .then((text) => w.send({ type: METRICS_RES, id: m.id, text }))
        .catch((err: Error) => w.send({ type: METRICS_RES, id: m.id, error: err.message }));
    });
    return w;
  };

  const killAll = () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
    process.exit(1);
  };
  const stop = (signal: string) => {
    if (stopping) {
      // A second signal while stopping: end at once, as a single gateway does.
      if (signal !== 'crash-loop') {
        log.error({ signal }, 'second signal while stopping; killing the workers');
        killAll();
      }
      return;
    }
    stopping = true;
    log.info({ signal, workers: Object.keys(cluster.workers ?? {}).length }, 'stopping the workers');
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
    // Ref'd: it must fire even if nothing else is left on the event loop (core/shutdown.ts).
    setTimeout(() => {
      log.error('workers did not stop within the grace period; killing them');
      killAll();
    }, config.shutdownGraceMs + SHUTDOWN_BOUND_MS);
  };
  for (const signal of stopSignals()) process.on(signal, () => stop(signal));
  process.on('SIGHUP', () => {
    if (stopping) return;
    log.info('SIGHUP: passed to the workers (models.json re-read)');
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGHUP');
  });

  cluster.on('exit', (w, code, signal) => {
    if (stopping) {
      if (code !== 0) clean = false;
      if (Object.keys(cluster.workers ?? {}).length === 0) {
        log.info({ clean }, 'all workers stopped');
        process.exit(clean ? 0 : 1);
      }
      return;
    }
    const now = Date.now();
    deaths.push(now);
    while (deaths.length > 0 && deaths[0]! < now - 60_000) deaths.shift();
    if (deaths.length > 3 * n) {
      log.fatal({ deaths: deaths.length }, 'workers keep dying; stopping the node');
      stop('crash-loop');
      return;
    }
    log.error({ pid: w.process.pid, code, signal }, 'a worker died; starting another');
    fork();
  });

  for (let i = 0; i < n; i++) fork();
  log.info({ workers: n, pid: process.pid }, `primary started ${n} workers`);
}

/** In a worker: the whole cluster's metrics text from the primary; undefined when it does not answer. */
export function clusterMetricsText(): Promise<string | undefined> {
  if (!cluster.isWorker || !process.send) return Promise.resolve(undefined);
  const id = Math.floor(Math.random() * 2 ** 31);
  return new Promise((resolve) => {
    const onMessage = (m: { type?: string; id?: number; text?: string; error?: string }) => {
      if (m?.type !== METRICS_RES || m.id !== id) return;
      done(m.text);
    };
    const timer = setTimeout(() => done(undefined), METRICS_TIMEOUT_MS);
    const done = (text: string | undefined) => {
      clearTimeout(timer);
      process.off('message', onMessage);
      resolve(text);
    };
    process.on('message', onMessage);
    process.send!({ type: METRICS_REQ, id });
  });
}
