import type { GatewayError } from '../errors.js';

/** Receives the body of an upstream response, chunk by chunk, in order. */
export interface UpstreamSink {
  onData(chunk: Buffer): void;
  onEnd(): void;
  /** The body failed (reset, idle timeout, abort); already mapped to a gateway error. */
  onError(err: GatewayError): void;
}

/**
 * An upstream response whose head has arrived and whose body has not been read yet. The body does not flow
 * until `pipe` is called (the relay pauses the socket in between), so nothing is buffered while the
 * response-head hooks run.
 */
export interface UpstreamResponse {
  readonly status: number;
  /** Response headers, lowercased names. */
  readonly headers: Readonly<Record<string, string | string[]>>;
  /** Starts delivering the body to `sink`. Call once. */
  pipe(sink: UpstreamSink): void;
  /** Stops reading from the upstream socket (client backpressure). */
  pause(): void;
  resume(): void;
  /** Cancels the upstream request; a no-op after the body ended. */
  abort(): void;
  /** True once the body ended, failed or was aborted. */
  readonly finished: boolean;
}
