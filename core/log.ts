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

export function createLogger(
  level = process.env.LOG_LEVEL ?? 'info',
  destination?: pino.DestinationStream,
): Logger {
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
