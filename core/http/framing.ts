import { GatewayError } from '../errors.js';

/**
 * Request checks both engines share, made before anything is routed (RFC 9110 / 9112):
 *
 * - Framing the gateway cannot trust: several Content-Length fields, Content-Length together with
 *   Transfer-Encoding, a Transfer-Encoding other than exactly `chunked`, several Host fields. Behind any front
 *   proxy each is a request-smuggling primitive, so the answer is 400 and the connection is closed (the end of
 *   this request, and so the start of the next, is unknowable).
 * - A target the catch-all must never forward: dot segments (plain or percent-encoded), encoded slashes or
 *   backslashes, malformed percent-encoding. The relay maps `/v1/<rest>` onto the provider's base path with the
 *   operator's upstream key; none of these may reach it.
 *
 * Engines report what they saw as `HeadFacts` (their header maps join repeated fields, so counts come from
 * the engine's raw view).
 */

export interface HeadFacts {
  /** Number of Content-Length fields. */
  contentLengths: number;
  /** Number of Host fields. */
  hosts: number;
  /** The Transfer-Encoding value (repeated fields joined with ", "), if any. */
  transferEncoding: string | undefined;
  /** The Content-Length value, if any. */
  contentLength: string | undefined;
}

/** Why the request's framing is refused, or undefined when it is sound. */
export function framingProblem(f: HeadFacts): string | undefined {
  if (f.contentLengths > 1) return 'The request has more than one Content-Length field';
  if (f.hosts > 1) return 'The request has more than one Host field';
  if (f.contentLength !== undefined && !/^\d{1,15}$/.test(f.contentLength.trim())) {
    return 'The Content-Length field is not a number';
  }
  if (f.transferEncoding !== undefined) {
    if (f.contentLength !== undefined) {
      return 'The request has both Content-Length and Transfer-Encoding';
    }
    if (f.transferEncoding.trim().toLowerCase() !== 'chunked') {
      return 'Transfer-Encoding must be exactly "chunked"';
    }
  }
  return undefined;
}

/** A 400 for unsound framing; the engine closes the connection after sending it. */
export function framingError(problem: string): GatewayError {
  return new GatewayError('invalid_request', { message: problem, headers: { connection: 'close' } });
}

const ENCODED_SEPARATOR = /%(?:2f|5c)/i;

/**
 * Why `path` (as sent, not decoded) is refused, or undefined. Refuses what would let a path leave its prefix
 * once decoded or normalised by anyone downstream.
 */
export function pathProblem(path: string): string | undefined {
  if (path.includes('\\')) return 'The path contains a backslash';
  if (ENCODED_SEPARATOR.test(path)) return 'The path contains an encoded slash or backslash';
  for (const seg of path.split('/')) {
    if (seg === '') continue;
    let decoded: string;
    try {
      decoded = seg.includes('%') ? decodeURIComponent(seg) : seg;
    } catch {
      return 'The path has malformed percent-encoding';
    }
    if (decoded === '.' || decoded === '..') return 'The path contains a dot segment';
  }
  return undefined;
}

/**
 * The origin-form path of a request target: absolute-form (`http://host/p?q`, RFC 9112 §3.2.2, which a
 * server MUST accept) becomes `/p?q`; anything else is returned as is.
 */
export function originForm(target: string): string {
  if (!/^https?:\/\//i.test(target)) return target;
  const at = target.indexOf('/', target.indexOf('//') + 2);
  return at === -1 ? '/' : target.slice(at);
}
