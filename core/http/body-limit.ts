import { GatewayError } from '../errors.js';

/**
 * What both engines do with a request body over `MAX_BODY_BYTES` (RFC 9110 §15.5.14). A declared one: see
 * LINGER_IDLE_MS. A counted one (chunked, no declared length):
 *
 * Closing the connection while the client is still sending makes the kernel answer its next bytes with a
 * reset, and a reset can destroy the 413 before the client read it: `fetch` (undici, and so the OpenAI SDKs)
 * then reports EPIPE and retries a request that can never succeed. So the rest of an oversize body is read
 * and discarded, up to `OVERSIZE_DRAIN_BYTES`, and the 413 is sent once the body ended: the client reads it
 * like any answer and the connection stays usable (its framing is intact). Only a body that would still be
 * larger than that is answered at once with `Connection: close` (reading it all would be the operator's cost).
 * The body timeout bounds how long a slow sender can hold the drain.
 */
export const OVERSIZE_DRAIN_BYTES = 64 * 1024 * 1024;

/**
 * A declared Content-Length over the limit is answered at once, before the upload (a client that declares
 * 11 MiB and waits learns at once); the rest is then read and discarded ("lingering close", as nginx does)
 * for at most the body timeout and OVERSIZE_DRAIN_BYTES, and while the client keeps sending: a gap of this
 * long with nothing received ends it (nginx's `lingering_timeout` default).
 */
export const LINGER_IDLE_MS = 5_000;

/** True when an oversize body is small enough to be drained (`bytes` counted or declared in total). */
export function drainable(bytes: number, limit: number): boolean {
  return bytes <= limit + OVERSIZE_DRAIN_BYTES;
}

export function tooLarge(limit: number): GatewayError {
  return new GatewayError('payload_too_large', {
    message: `The request body is larger than ${limit} bytes`,
    details: { limit },
  });
}
