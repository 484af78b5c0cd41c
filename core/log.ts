import pino from 'pino';

/** What stands in place of a secret wherever one is redacted. */
export const REDACTED = '[redacted]';

/**
 * The process logger. Credentials are redacted by path wherever they could appear in a logged object, and
 * callers MUST NOT interpolate tokens, proof secrets, API keys or passwords into messages: a test greps
 * the logs of a full paid-call run for them.
 */
export const REDACT_PATHS = [
  'authorization',
  'headers.authorization',
  'headers["x-cashu"]',
  'headers.cookie',
  'req.headers.authorization',
  'req.headers["x-cashu"]',
  'req.headers.cookie',
  'token',
  'cashu_token',
  'api_key',
  'apiKey',
  'secret',
  'seed',
  'proofs',
  'password',
  'adminPassword',
  'upstreamApiKey',
  '*.token',
  '*.cashu_token',
  '*.api_key',
  '*.apiKey',
  '*.secret',
  '*.seed',
  '*.proofs',
  '*.password',
];

export type Logger = pino.Logger;

/** Log lines held for a stdout that does not keep up; beyond this, lines are dropped (the gateway never waits). */
const MAX_QUEUED_LOG_BYTES = 4 * 1024 * 1024;

/**
 * stdout as the log destination, written so that logging can never keep the process from running or exiting
 * (docs/architecture.md, "Lifecycle and shutdown"). pino's default destination (sonic-boom on fd 1,
 * asynchronous) flushes synchronously when the process exits, and its flushSync retries every failed write,
 * EPIPE included, every 100 ms for ever: a gateway whose supervisor had exited (its stdout pipe without a
 * reader) hung at `process.exit` in that loop, deaf to signals (strace: `write(1, "…shut down cleanly…") = -1
 * EPIPE` then a 100 ms futex wait, repeated). `process.stdout` writes what the pipe accepts now and queues
 * the rest in memory without blocking; it has no exit hook. A write error (EPIPE: the reader is gone) stops
 * logging, and past MAX_QUEUED_LOG_BYTES queued lines are dropped, so a reader that stopped reading cannot
 * grow the heap either.
 */
export function stdoutDestination(
  out: NodeJS.WriteStream = process.stdout,
  maxQueuedBytes = MAX_QUEUED_LOG_BYTES,
): pino.DestinationStream {
  let open = true;
  out.on('error', () => {
    open = false;
  });
  return {
    write(line: string) {
      if (open && out.writableLength <= maxQueuedBytes) out.write(line);
    },
  };
}

/** The one destination on process.stdout (one error listener however many loggers there are). */
let stdout: pino.DestinationStream | undefined;

export function createLogger(
  level = process.env.LOG_LEVEL ?? 'info',
  destination?: pino.DestinationStream,
): Logger {
  if (destination === undefined) {
    stdout ??= stdoutDestination();
    destination = stdout;
  }
  return pino({ level, redact: { paths: REDACT_PATHS, censor: REDACTED }, base: undefined }, destination);
}

/** Shared default logger; composition roots may replace it with a configured one. */
export let log: Logger = createLogger();

export function setLogger(logger: Logger): void {
  log = logger;
}

/**
 * A URL with its user name and password replaced by `[redacted]` (an URL in the configuration may carry
 * credentials: a Redis password, an upstream key); what is not a URL is redacted whole. `null` for none.
 */
export function redactUrl(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  try {
    const u = new URL(raw);
    if (u.username !== '' || u.password !== '') {
      u.username = u.username === '' ? '' : REDACTED;
      u.password = u.password === '' ? '' : REDACTED;
    }
    return u.toString().replace(/\/+$/, '');
  } catch {
    return REDACTED;
  }
}
