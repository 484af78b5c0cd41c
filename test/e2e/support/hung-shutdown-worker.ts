import { createLogger } from '../../../core/log.js';
import { closeOnSignals } from '../../../core/shutdown.js';

/**
 * A process whose shutdown step never finishes and ignores its deadline (test/e2e/shutdown-bound.test.ts):
 * only the last timer of core/shutdown.ts can end it. GRACE_MS and BOUND_MS come from the environment; it
 * logs `ready` once the signal handling is installed.
 */
const log = createLogger('info');
closeOnSignals({
  graceMs: Number(process.env.GRACE_MS),
  boundMs: Number(process.env.BOUND_MS),
  log,
  close: () => {
    // Work that goes on past every deadline (a loop nobody bounded) and keeps logging: the event loop never
    // empties, and the log lines go to a stdout whose reader may be gone.
    setInterval(() => log.info('still closing'), 20);
    return new Promise<boolean>(() => {});
  },
});
// Alive until a signal.
setInterval(() => {}, 60_000);
log.info('ready');
