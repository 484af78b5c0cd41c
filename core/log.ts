import pino from 'pino';

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
  return pino({ level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: undefined }, destination);
}

/** Shared default logger; composition roots may replace it with a configured one. */
export let log: Logger = createLogger();

export function setLogger(logger: Logger): void {
  log = logger;
}
