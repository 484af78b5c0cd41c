/**
 * The one error catalogue. Every error the gateway answers with is defined here: a stable `code`, the HTTP
 * status, the error `type`, and a default message. Handlers never invent their own shape: they throw
 * `new GatewayError('code', { message?, details? })` and the HTTP layer renders `errorBody()`.
 *
 * A test ties this catalogue to `openapi/openapi.yaml` and the README: add a code here, document it there.
 * Messages and details MUST NOT contain tokens, proof secrets, API keys or passwords.
 */

export interface ErrorDef {
  readonly status: number;
  readonly type: string;
  readonly message: string;
}

export const ERRORS = {
  // 400
  invalid_request: { status: 400, type: 'invalid_request', message: 'The request is malformed' },
  invalid_json: { status: 400, type: 'invalid_request', message: 'The request body is not valid JSON' },
  validation_failed: {
    status: 400,
    type: 'invalid_request',
    message: 'The request body does not match the schema',
  },
  invalid_token: { status: 400, type: 'invalid_request', message: 'The eCash token is malformed or invalid' },
  token_already_spent: {
    status: 400,
    type: 'invalid_request',
    message: 'The eCash token has already been spent',
  },
  mint_not_trusted: {
    status: 400,
    type: 'invalid_request',
    message: 'The eCash token is from a mint this gateway does not accept',
  },
  unsupported_unit: {
    status: 400,
    type: 'invalid_request',
    message: 'The eCash token unit is not supported (sat and msat are)',
  },
  model_not_priced: {
    status: 400,
    type: 'invalid_request',
    message: 'This node has no price for this model on this endpoint',
  },
  tool_not_priced: {
    status: 400,
    type: 'invalid_request',
    message: 'This node has no price for a server-side tool this call declares',
  },
  service_tier_not_priced: {
    status: 400,
    type: 'invalid_request',
    message: 'This node has no price for the service tier this call asks for',
  },
  context_not_bounded: {
    status: 400,
    type: 'invalid_request',
    message:
      'The call refers to stored context this node cannot bound (a stored prompt or conversation it did not see)',
  },
  reference_not_bounded: {
    status: 400,
    type: 'invalid_request',
    message: 'The call refers to a file by id or URL whose tokens this node cannot bound',
  },
  token_amount_too_small: {
    status: 400,
    type: 'invalid_request',
    message: 'The eCash token is worth nothing after the mint fee',
  },
  swap_fee_too_high: {
    status: 400,
    type: 'invalid_request',
    message: 'Swapping this eCash token from its mint would cost more than this node allows',
  },
  payout_exceeds_surplus: {
    status: 400,
    type: 'invalid_request',
    message: 'The payout is larger than the operator surplus (proofs held minus user balances)',
  },
  refund_address_invalid: {
    status: 400,
    type: 'invalid_request',
    message: 'The refund address is not a Lightning address (name@host)',
  },
  refund_address_refused: {
    status: 400,
    type: 'invalid_request',
    message: 'The refund address points at a host this gateway may not reach (the webhook SSRF rules)',
  },
  refund_address_unresolvable: {
    status: 400,
    type: 'invalid_request',
    message: "The refund address's LNURL-pay endpoint did not answer with its parameters",
  },
  refund_address_not_lnurl_pay: {
    status: 400,
    type: 'invalid_request',
    message: 'The refund address does not answer as an LNURL-pay endpoint',
  },
  refund_address_missing: {
    status: 400,
    type: 'invalid_request',
    message: 'This key has no refund address: set one with POST /v1/wallet/update',
  },
  // 401
  missing_credentials: {
    status: 401,
    type: 'authentication_failed',
    message: 'No credentials: send Authorization: Bearer <API_KEY or eCash token>, or X-Cashu: <eCash token>',
  },
  invalid_api_key: {
    status: 401,
    type: 'authentication_failed',
    message: 'The API key is unknown or deleted',
  },
  key_expired: { status: 401, type: 'authentication_failed', message: 'The API key has expired' },
  invalid_payment_credential: {
    status: 401,
    type: 'authentication_failed',
    message:
      'The L402 token or MPP credential does not verify (signature, challenge binding, service or preimage)',
  },
  payment_credential_expired: {
    status: 401,
    type: 'authentication_failed',
    message: 'The L402 token or MPP challenge has expired: pay a fresh challenge',
  },
  key_disabled: {
    status: 401,
    type: 'authentication_failed',
    message: 'The API key is disabled by the operator',
  },
  metrics_auth_required: {
    status: 401,
    type: 'authentication_failed',
    message: 'The metrics need Authorization: Bearer <METRICS_TOKEN>',
  },
  admin_auth_required: {
    status: 401,
    type: 'authentication_failed',
    message: 'Admin authentication required (admin_password cookie)',
  },
  // 402
  payment_required: {
    status: 402,
    type: 'insufficient_balance',
    message: 'The balance does not cover the cost of this request',
  },
  invoice_not_paid: {
    status: 402,
    type: 'insufficient_balance',
    message: 'The mint does not report the invoice of this credential as paid',
  },
  insufficient_balance: {
    status: 402,
    type: 'insufficient_balance',
    message: 'The balance cannot cover the next response of this Realtime session',
  },
  refund_below_fee_reserve: {
    status: 402,
    type: 'insufficient_balance',
    message:
      "The balance does not cover one sat plus the mint's Lightning fee reserve (or the address's minimum)",
  },
  // 403
  forbidden: { status: 403, type: 'forbidden', message: 'Access denied' },
  ip_not_allowed: {
    status: 403,
    type: 'forbidden',
    message: 'This key may not be used from this IP address',
  },
  model_not_allowed: { status: 403, type: 'forbidden', message: 'This key may not use this model' },
  child_key_forbidden: {
    status: 403,
    type: 'forbidden',
    message: 'A child key cannot perform this operation',
  },
  // 404
  not_found: { status: 404, type: 'not_found', message: 'Not found' },
  endpoint_not_enabled: {
    status: 404,
    type: 'not_found',
    message: 'This gateway does not relay this endpoint (the operator lists relayed paths in RELAY_PATHS)',
  },
  // 405
  method_not_allowed: { status: 405, type: 'invalid_request', message: 'Method not allowed on this path' },
  // 408
  request_timeout: {
    status: 408,
    type: 'invalid_request',
    message: 'The request did not arrive in time (HEADERS_TIMEOUT_MS / BODY_TIMEOUT_MS)',
  },
  // 409
  token_pending: {
    status: 409,
    type: 'conflict',
    message: 'The eCash token is pending at the mint; try again later',
  },
  conflict: { status: 409, type: 'conflict', message: 'The request conflicts with the current state' },
  payout_in_progress: {
    status: 409,
    type: 'conflict',
    message: "A payout of this key's balance is not decided yet; try again when it is",
  },
  // 413
  payload_too_large: { status: 413, type: 'invalid_request', message: 'The request body is too large' },
  // 415
  unsupported_media_type: {
    status: 415,
    type: 'invalid_request',
    message: 'Content-Type must be application/json',
  },
  // 431
  headers_too_large: {
    status: 431,
    type: 'invalid_request',
    message: 'The request head is larger than MAX_HEADER_BYTES',
  },
  // 429
  rate_limit_exceeded: { status: 429, type: 'rate_limit_exceeded', message: 'Rate limit exceeded' },
  too_many_sessions: {
    status: 429,
    type: 'rate_limit_exceeded',
    message: 'Too many open Realtime sessions for this key or address',
  },
  // 500
  internal_error: { status: 500, type: 'internal_error', message: 'Internal server error' },
  // 501
  not_implemented: { status: 501, type: 'not_implemented', message: 'Not implemented yet' },
  // 502
  upstream_error: { status: 502, type: 'upstream_error', message: 'The upstream provider failed' },
  batch_outcome_unknown: {
    status: 502,
    type: 'upstream_error',
    message:
      'The provider did not answer the batch creation clearly; the outcome is being reconciled: if the provider made the batch, it appears in GET /v1/batches and is charged as usual, otherwise its reservation is released',
  },
  // 505
  http_version_not_supported: {
    status: 505,
    type: 'invalid_request',
    message: 'Only HTTP/1.0 and HTTP/1.1 are served on this port',
  },
  // 503
  service_unavailable: { status: 503, type: 'service_unavailable', message: 'Service unavailable' },
  store_unavailable: {
    status: 503,
    type: 'service_unavailable',
    message: 'The balance store is unavailable; no call is made unpaid',
  },
  balance_in_transit: {
    status: 503,
    type: 'service_unavailable',
    message:
      "Part of this key's balance is held by another gateway process that has not given it back yet; retry after Retry-After",
  },
  mint_unavailable: {
    status: 503,
    type: 'service_unavailable',
    message: 'The eCash mint is unreachable or failing',
  },
  operator_wallet_insufficient: {
    status: 503,
    type: 'service_unavailable',
    message: "The operator's eCash surplus cannot pay the node that serves this model; nothing was charged",
  },
  price_unavailable: {
    status: 503,
    type: 'service_unavailable',
    message: 'No fresh BTC price is available to price this call',
  },
  refund_invoice_failed: {
    status: 502,
    type: 'upstream_error',
    message: "The refund address's LNURL-pay callback did not give a valid invoice for the amount",
  },
  // 504
  upstream_timeout: { status: 504, type: 'upstream_error', message: 'The upstream provider timed out' },
} as const satisfies Record<string, ErrorDef>;

export type ErrorCode = keyof typeof ERRORS;

export interface ErrorEnvelope {
  error: { type: string; message: string; code: string; details?: Record<string, unknown> };
}

export interface GatewayErrorOptions {
  message?: string;
  details?: Record<string, unknown>;
  /** Extra response headers (e.g. Retry-After, X-Cashu payment request). */
  headers?: Record<string, string>;
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: string;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, opts: GatewayErrorOptions = {}) {
    const def: ErrorDef = ERRORS[code];
    super(opts.message ?? def.message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.status = def.status;
    this.type = def.type;
    this.details = opts.details;
    this.headers = opts.headers;
  }

  toEnvelope(): ErrorEnvelope {
    const error: ErrorEnvelope['error'] = { type: this.type, message: this.message, code: this.code };
    if (this.details !== undefined) error.details = this.details;
    return { error };
  }
}

/**
 * Anthropic's error `type` for an HTTP status (the Messages API's documented set), so Anthropic SDKs raise
 * their matching error class.
 */
function anthropicType(status: number): string {
  switch (status) {
    case 400:
    case 405:
    case 409:
    case 415:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
      return 'overloaded_error';
    case 504:
      return 'timeout_error';
    default:
      return 'api_error';
  }
}

/** Paths whose errors take Anthropic's shape (the Messages API and its token counter). */
export function isAnthropicPath(path: string): boolean {
  return path === '/v1/messages' || path.startsWith('/v1/messages/');
}

/**
 * The error body for a request path: the error envelope, or on the Anthropic Messages routes Anthropic's
 * `{"type":"error","error":{"type","message"}}` carrying the same `code` (and `details`).
 */
export function errorBodyFor(path: string, ge: GatewayError): object {
  const envelope = ge.toEnvelope();
  if (!isAnthropicPath(path)) return envelope;
  return { type: 'error', error: { ...envelope.error, type: anthropicType(ge.status) } };
}

export function isGatewayError(err: unknown): err is GatewayError {
  return err instanceof GatewayError;
}

/** Any thrown value as a GatewayError; unknown errors become `internal_error` with a generic message. */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return new GatewayError('internal_error', { cause: err });
}
