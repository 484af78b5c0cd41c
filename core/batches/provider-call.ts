import type { FormData } from 'undici';
import { GatewayError } from '../errors.js';
import type { CancelSource, UpstreamClient } from '../upstream/upstream-client.js';

/**
 * One whole request to the provider on the operator's key, body collected (at most `maxBytes`): what the Files
 * and Batch routes and the settlement watcher send. The caller's credentials are never forwarded
 * (UpstreamClient.forwardHeaders drops them and sets the provider key).
 */
export interface ProviderReply {
  status: number;
  headers: Readonly<Record<string, string | string[]>>;
  body: Buffer;
}

/** Largest provider body held (a batch's output file): 512 MiB, the providers' file size limit. */
export const PROVIDER_BODY_MAX = 512 * 1024 * 1024;

export function providerCall(
  client: UpstreamClient,
  req: {
    method: string;
    path: string;
    rawQuery?: string;
    headers?: Record<string, string>;
    body?: Buffer | string | FormData;
    /** Cancelling it (the request context, when its client leaves) cancels the call. */
    cancel?: CancelSource;
  },
  maxBytes = PROVIDER_BODY_MAX,
): Promise<ProviderReply> {
  return client
    .send({
      method: req.method,
      path: req.path,
      rawQuery: req.rawQuery ?? '',
      headers: req.headers ?? { accept: 'application/json' },
      body: req.body,
      cancel: req.cancel,
    })
    .then(
      (up) =>
        new Promise<ProviderReply>((resolve, reject) => {
          const chunks: Buffer[] = [];
          let size = 0;
          up.pipe({
            onData(chunk) {
              size += chunk.length;
              if (size > maxBytes) {
                up.abort();
                reject(new GatewayError('upstream_error', { message: 'The provider answer is too large' }));
                return;
              }
              chunks.push(chunk);
            },
            onEnd() {
              resolve({ status: up.status, headers: up.headers, body: Buffer.concat(chunks) });
            },
            onError: reject,
          });
        }),
    );
}

/** The provider's JSON answer when 2xx; else the relay's rule: a 4xx with JSON is the caller's error as the
 * provider said it (thrown as-is by the route), anything else is 502 `upstream_error`. */
export function providerJson(r: ProviderReply, what: string): Record<string, unknown> {
  if (r.status >= 200 && r.status < 300) {
    try {
      return JSON.parse(r.body.toString('utf8')) as Record<string, unknown>;
    } catch (err) {
      throw new GatewayError('upstream_error', {
        message: `The provider sent invalid JSON for ${what}`,
        cause: err,
      });
    }
  }
  throw new GatewayError('upstream_error', {
    message: `The provider answered ${r.status} to ${what}`,
    details: { upstream_status: r.status },
  });
}

/** Longest output line held while it arrives: 64 MiB (one line is one answer; providers' are far smaller). */
export const PROVIDER_LINE_MAX = 64 * 1024 * 1024;

/**
 * A GET whose 200 body is handed to `onLine` one line at a time as it arrives (a batch's output file: never held
 * whole; only the line being read is). Resolves with the status; a non-200 answer's body is read and dropped.
 * A line longer than `maxLine` fails the read (upstream_error).
 */
export function providerLines(
  client: UpstreamClient,
  path: string,
  onLine: (line: string) => void,
  maxLine = PROVIDER_LINE_MAX,
): Promise<number> {
  return client.send({ method: 'GET', path, rawQuery: '', headers: {} }).then(
    (up) =>
      new Promise<number>((resolve, reject) => {
        const ok = up.status === 200;
        let held: Buffer[] = [];
        let heldBytes = 0;
        let failed = false;
        up.pipe({
          onData(chunk) {
            if (!ok || failed) return;
            let from = 0;
            for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, from)) {
              const part = chunk.subarray(from, nl);
              const line = held.length === 0 ? part : Buffer.concat([...held, part]);
              held = [];
              heldBytes = 0;
              onLine(line.toString('utf8'));
              from = nl + 1;
            }
            if (from < chunk.length) {
              heldBytes += chunk.length - from;
              if (heldBytes > maxLine) {
                failed = true;
                up.abort();
                reject(new GatewayError('upstream_error', { message: 'A provider file line is too long' }));
                return;
              }
              held.push(Buffer.from(chunk.subarray(from))); // a copy: the chunk's memory may be reused
            }
          },
          onEnd() {
            if (failed) return;
            if (ok && heldBytes > 0) onLine(Buffer.concat(held).toString('utf8'));
            resolve(up.status);
          },
          onError(err) {
            if (!failed) reject(err);
          },
        });
      }),
  );
}
