import { GatewayError } from '../errors.js';

/**
 * How a caller presents its credential (docs/endpoints.md, "Authentication"). Parsing only: no store or mint
 * call happens here, so the paid pipeline and the wallet/balance routes share one definition of what a
 * credential is.
 *
 * - `Authorization: Bearer sk-…` → an API key;
 * - `Authorization: Bearer cashuA…|cashuB…` → an eCash token as bearer (its hash is the account identity);
 * - `X-Cashu: cashuA…|cashuB…` → a per-call token (stateless; change returned in the `X-Cashu` header);
 * - `x-api-key: sk-…` (or a cashu token): Anthropic's SDKs send their key so; read as that bearer value;
 * - `?api_key=sk-…` on GET requests only (tools that cannot set headers).
 * Both `Authorization` and `X-Cashu` at once is ambiguous and refused (400), so a client never pays twice.
 */
export type ParsedCredential =
  | { kind: 'api_key'; apiKey: string }
  | { kind: 'bearer_token'; token: string }
  | { kind: 'x_cashu'; token: string }
  /** `Authorization: L402 <macaroon>:<preimage>` or `Payment <credential>` (core/doors/, checked there). */
  | { kind: 'door'; authorization: string };

/** The Lightning doors' schemes (L402, its older name LSAT, and MPP's Payment). */
const DOOR_SCHEME = /^(L402|LSAT|Payment)\s/i;

export interface CredentialSource {
  method: string;
  headers: Readonly<Record<string, string>>;
  /** The `api_key` query parameter, when present. */
  queryApiKey?: string | null | undefined;
}

const TOKEN_PREFIX = /^cashu[AB]/;

export function isCashuToken(value: string): boolean {
  return TOKEN_PREFIX.test(value);
}

/**
 * Reads the credential of a request. Returns `undefined` when none is present (the caller answers 401
 * `missing_credentials`). Throws `invalid_api_key` for a credential of no known shape, `invalid_request` when
 * two are combined.
 */
export function parseCredential(src: CredentialSource): ParsedCredential | undefined {
  const apiKeyHeader = src.headers['x-api-key']?.trim();
  let authorization = src.headers.authorization?.trim();
  if (apiKeyHeader) {
    // One credential: the same value in both headers is fine (some clients send both), two different ones
    // would leave it open which one pays.
    const bearer = `Bearer ${apiKeyHeader}`;
    if (authorization && authorization !== bearer) {
      throw new GatewayError('invalid_request', {
        message: 'Send either Authorization or x-api-key, not two different credentials',
      });
    }
    authorization = bearer;
  }
  const xCashu = src.headers['x-cashu']?.trim();
  if (authorization && xCashu) {
    throw new GatewayError('invalid_request', {
      message: 'Send either Authorization or X-Cashu, not both',
    });
  }
  if (xCashu) {
    if (!isCashuToken(xCashu)) {
      throw new GatewayError('invalid_token', { message: 'X-Cashu must carry a cashuA or cashuB token' });
    }
    return { kind: 'x_cashu', token: xCashu };
  }
  if (authorization) {
    if (DOOR_SCHEME.test(authorization)) return { kind: 'door', authorization };
    const m = /^Bearer\s+(\S+)$/i.exec(authorization);
    if (!m) {
      throw new GatewayError('invalid_api_key', {
        message: 'Authorization must be "Bearer <API key or token>"',
      });
    }
    const value = m[1]!;
    if (value.startsWith('sk-')) return { kind: 'api_key', apiKey: value };
    if (isCashuToken(value)) return { kind: 'bearer_token', token: value };
    throw new GatewayError('invalid_api_key');
  }
  if (src.method === 'GET' && src.queryApiKey) {
    if (src.queryApiKey.startsWith('sk-')) return { kind: 'api_key', apiKey: src.queryApiKey };
    throw new GatewayError('invalid_api_key');
  }
  return undefined;
}
