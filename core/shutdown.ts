import closeWithGrace from 'close-with-grace';
import type { Logger } from './log.js';

/**
 * The shutdown bound (docs/architecture.md, "Lifecycle and shutdown"): after SIGTERM or SIGINT the process
 * exits within SHUTDOWN_GRACE_MS + SHUTDOWN_BOUND_MS whatever fails around it (a log reader gone, a store or
 * mint that does not answer, a plugin whose `close` never resolves). Calls in flight and settlement retries
 * share the grace; every step after it (a plugin's close beyond the grace, the listener, each service) waits
 * at most SHUTDOWN_STEP_MS; a last timer at grace + SHUTDOWN_BOUND_MS ends the process whatever is still
 * waiting (exit 1).
 */

/** What one closing step may take beyond the grace. */
export const SHUTDOWN_STEP_MS = 2_000;

/** How long after the grace the last timer ends the process. */
export const SHUTDOWN_BOUND_MS = 10_000;

/**
 * SQLite's busy wait once the shutdown began. SQLite waits for another connection's lock synchronously (its
 * busy_timeout, 5 s while serving): the event loop stands still meanwhile, and with it every deadline above and
 * the last timer. A store locked by another process (an exclusive transaction) would otherwise hold each
 * settlement retry and each closing write for 5 s, past the bound. From the signal on, each
 * statement waits at most this long and then fails like an unreachable store (its money is recovered by the
 * next start).
 */
export const SHUTDOWN_SQLITE_BUSY_MS = 200;

/**
 * Waits for `work` at most `ms`: undefined when it resolved in time, else why not (its rejection, or a
 * timeout error). The timer is ref'd on purpose: an unref'd one would let a loop with nothing else to do end
 * the process as if everything had settled (exit 0) while `work` is still pending.
 */
export function within(work: Promise<unknown> | unknown, ms: number): Promise<Error | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(new Error(`did not finish within ${ms} ms`)), ms);
    Promise.resolve(work).then(
      () => {
        clearTimeout(timer);
        resolve(undefined);
      },
      (err: unknown) => {
        clearTimeout(timer);
        resolve(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

export interface SignalShutdown {
  graceMs: number;
  log: Logger;
  /** The shutdown itself: resolves true when everything settled (exit 0), false when work was left (exit 1). */
  close(graceMs: number): Promise<boolean>;
  /** How long after the grace the last timer ends the process. Default SHUTDOWN_BOUND_MS (tests shorten it). */
  boundMs?: number;
}

/**
 * The signal Node writes a heap snapshot on (`--heapsnapshot-signal`, on the command line or in NODE_OPTIONS),
 * if any: a diagnostic an operator sends a live process (commonly SIGUSR2), which must not also shut it down.
 */
export function heapSnapshotSignal(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? '',
): string | undefined {
  const args = [...nodeOptions.split(/\s+/).filter(Boolean), ...execArgv];
  let found: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const [flag, value] = args[i]!.replace(/_/g, '-').split('=', 2);
    if (flag !== '--heapsnapshot-signal') continue;
    found = value ?? args[i + 1];
  }
  return found;
}

/**
 * Signals that do not shut the gateway down, though close-with-grace's default list has them: SIGHUP, the
 * reload signal (core/main.ts re-reads models.json on it; core/cluster.ts passes it to the workers), and the
 * heap-snapshot signal when Node has one.
 */
export function signalsKept(snapshotSignal = heapSnapshotSignal()): closeWithGrace.AllEvents[] {
  const kept = ['SIGHUP'];
  if (snapshotSignal !== undefined && snapshotSignal !== 'SIGHUP') kept.push(snapshotSignal);
  // A snapshot signal outside close-with-grace's list (SIGUSR1, say) is simply never listened to there.
  return kept as closeWithGrace.AllEvents[];
}

/**
 * The signals that stop the gateway gracefully: close-with-grace's ordinary ones less those kept. The cluster
 * primary (core/cluster.ts) stops its workers on the same ones, so `WORKERS=N` answers a signal as one process
 * does (its default action would end the primary, and with it the workers, without a drain).
 */
export function stopSignals(kept: readonly string[] = signalsKept()): NodeJS.Signals[] {
  return (['SIGTERM', 'SIGINT', 'SIGQUIT', 'SIGUSR2'] as const).filter((s) => !kept.includes(s));
}

/**
 * SIGTERM/SIGINT (and a fatal error): runs `close` and exits 0 when it settled everything, 1 otherwise. A
 * second signal ends the process at once (exit 1); so does close-with-grace's last timer at the grace plus
 * the bound, whatever `close` still waits for (a ref'd timer started with the shutdown, ahead of `close`: it
 * fires even when nothing else is left on the event loop, and a step that ignores its own deadline cannot
 * hold it off).
 */
export function closeOnSignals(opts: SignalShutdown): void {
  const { graceMs, log } = opts;
  closeWithGrace(
    { delay: graceMs + (opts.boundMs ?? SHUTDOWN_BOUND_MS), logger: log, skip: signalsKept() },
    async ({ signal, err }) => {
      if (err) log.error({ err }, 'fatal error; shutting down');
      else log.info({ signal, graceMs }, 'shutting down');
      if (!(await opts.close(graceMs))) {
        throw new Error('shut down with work left behind (see the errors above)');
      }
      log.info('shut down cleanly');
    },
  );
}
