import { HttpResponseError, isMintOperationError, NetworkError } from '@cashu/cashu-ts';
import { GatewayError } from '../errors.js';

/**
 * One place where mint failures become catalogue errors (cashubtc/nuts error_codes.md; both the current
 * table and the legacy codes older mints still send). Messages never quote the mint's detail text verbatim
 * into logs with token content; the mint's code goes into `details.mint_code`.
 */

/** Codes that mean "these inputs are not valid money" → 400 invalid_token. */
const INVALID_INPUT_CODES = new Set([10001, 10003, 11007, 11009, 11010, 12001, 12002, 12003]);

/** What kind of answer the mint gave: definitive (it did nothing) or ambiguous (it may have acted). */
export type MintFailureKind = 'rejected' | 'unreachable' | 'ambiguous';

export function classifyMintFailure(err: unknown): MintFailureKind {
  if (isMintOperationError(err)) return 'rejected';
  if (isConnectionRefused(err)) return 'unreachable';
  if (err instanceof HttpResponseError && err.status < 500 && err.status !== 429 && err.status !== 408) {
    return 'rejected';
  }
  return 'ambiguous';
}

/**
 * An ambiguous failure without the mint's answer — a timeout, a reset, a gateway timeout (504) or 408: the
 * request may still be on its way to the mint (queued in a proxy, a slow mint), so "nothing happened" read from
 * the mint now is no proof (journal.ts, `mayStillArrive`). An answered 5xx is not one of these.
 */
export function mayBeInFlight(err: unknown): boolean {
  if (classifyMintFailure(err) !== 'ambiguous') return false;
  if (err instanceof HttpResponseError) return err.status === 504 || err.status === 408;
  return true;
}

/** True when the request provably never reached the mint (TCP connection refused). */
export function isConnectionRefused(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < 6 && e && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === 'ECONNREFUSED') return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

export function isMintTransportError(err: unknown): boolean {
  return err instanceof NetworkError || (err instanceof HttpResponseError && !isMintOperationError(err));
}

/** Maps any error thrown while talking to a mint about a token to the catalogue. */
export function mapMintError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  if (isMintOperationError(err)) {
    const code = err.code;
    const details = { mint_code: code };
    if (code === 11001) return new GatewayError('token_already_spent', { details, cause: err });
    if (code === 11002) return new GatewayError('token_pending', { details, cause: err });
    if (INVALID_INPUT_CODES.has(code)) return new GatewayError('invalid_token', { details, cause: err });
    return new GatewayError('mint_unavailable', {
      message: 'The eCash mint refused the operation',
      details,
      cause: err,
    });
  }
  if (err instanceof HttpResponseError || err instanceof NetworkError) {
    return new GatewayError('mint_unavailable', { cause: err });
  }
  if (err instanceof Error && /fetch failed|ECONNREFUSED|network/i.test(err.message)) {
    return new GatewayError('mint_unavailable', { cause: err });
  }
  return new GatewayError('internal_error', { cause: err });
}
