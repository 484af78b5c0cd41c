import type { UpstreamResponse } from '../upstream/upstream-response.js';
import type { ResponseBodyWriter } from './body-writer.js';

/**
 * Moves an upstream body into the client's body writer: each chunk through `transform` (the runner's chunk
 * hooks: a replacement, or null to drop it), then into the writer; a client that cannot take more pauses the
 * upstream until it drains (back-pressure). Resolves when the body ended; rejects with the upstream's error, or
 * with what `transform` or the writer threw (the upstream is aborted then). Without a writer (the client is gone,
 * the answer is read only to be metered) every chunk goes through `transform` and is dropped.
 */
export function pumpBody(
  up: UpstreamResponse,
  writer: ResponseBodyWriter | undefined,
  transform: (chunk: Buffer) => Uint8Array | null,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    up.pipe({
      onData: (chunk) => {
        try {
          const c = transform(chunk);
          if (c === null || writer === undefined) return;
          if (!writer.write(c)) {
            up.pause();
            writer.onDrain(() => up.resume());
          }
        } catch (err) {
          up.abort();
          reject(err);
        }
      },
      onEnd: resolve,
      onError: reject,
    });
  });
}
