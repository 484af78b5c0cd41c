import { ConfigError } from '../core/config.js';
import type { RequestContext } from '../core/context.js';
import { GatewayError } from '../core/errors.js';
import type { Plugin, PluginFactory } from '../core/plugin.js';
import type { UpstreamResponse } from '../core/upstream/upstream-response.js';

/**
 * The relay stage: forwards the request to the provider and attaches the upstream response to the context;
 * the runner then streams it through the response hooks to the client.
 *
 * - Body: `ctx.rawBody` as received, or `JSON.stringify(ctx.body)` when a stage called `markBodyModified()`.
 * - Status: 2xx/3xx and 4xx with a JSON body pass through with their status (the provider's own error body,
 *   e.g. an unknown model). A 5xx, or any error status with a non-JSON body, becomes 502 `upstream_error`
 *   naming the upstream status: a provider failure is not the gateway's 500 (`internal_error`).
 * - Fails closed: it never answers from anywhere but the upstream.
 */

/** How much of an upstream error body is read to explain it. */
const ERROR_BODY_LIMIT = 16 * 1024;

export const relay: PluginFactory = (options, services): Plugin => {
  if (options !== undefined && Object.keys(options).length > 0) {
    throw new ConfigError(`relay: unknown options ${Object.keys(options).join(', ')}`);
  }
  const upstream = services.upstream;
  return {
    name: 'relay',
    // The upstream call runs after every stage's request hook (core/plugin.ts onDispatch), so stages listed
    // after the relay (the meter asking for stream usage) still shape the request.
    async onDispatch(ctx: RequestContext) {
      ctx.timings.upstreamStart = performance.now();
      const body = ctx.bodyModified
        ? JSON.stringify(ctx.body)
        : ctx.rawBody.length > 0
          ? ctx.rawBody
          : undefined;
      const up = await upstream.send({
        method: ctx.method,
        path: ctx.path,
        rawQuery: ctx.rawQuery,
        headers: ctx.headers,
        body,
        cancel: ctx,
      });
      ctx.timings.upstreamHeaders = performance.now();
      if (up.status >= 500 || (up.status >= 400 && !isJson(up.headers['content-type']))) {
        throw await upstreamFailure(up);
      }
      ctx.upstream = up;
    },
  };
};

function isJson(ct: string | string[] | undefined): boolean {
  return typeof ct === 'string' && /\bjson\b/i.test(ct);
}

async function upstreamFailure(up: UpstreamResponse): Promise<GatewayError> {
  let text = '';
  try {
    text = (await readBounded(up, ERROR_BODY_LIMIT)).toString('utf8');
  } catch {
    // The error body itself failed; the status is explanation enough.
  }
  const details: Record<string, unknown> = { upstream_status: up.status };
  if (isJson(up.headers['content-type'])) {
    try {
      const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
      const msg =
        typeof parsed.error === 'string'
          ? parsed.error
          : typeof parsed.error?.message === 'string'
            ? parsed.error.message
            : typeof parsed.message === 'string'
              ? parsed.message
              : undefined;
      if (msg !== undefined) details.upstream_message = msg.slice(0, 500);
    } catch {
      // Not JSON after all: reported below as non-JSON.
    }
  }
  const kind =
    details.upstream_message === undefined && !isJson(up.headers['content-type']) ? ' (non-JSON body)' : '';
  return new GatewayError('upstream_error', {
    message: `The upstream provider answered ${up.status}${kind}`,
    details,
  });
}

/** Reads an upstream body up to `limit` bytes, then cancels the rest. */
export function readBounded(up: UpstreamResponse, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    let settled = false;
    up.pipe({
      onData(chunk) {
        if (settled) return;
        const room = limit - size;
        parts.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
        size += Math.min(chunk.length, room);
        if (size >= limit) {
          settled = true;
          up.abort();
          resolve(Buffer.concat(parts));
        }
      },
      onEnd() {
        if (!settled) resolve(Buffer.concat(parts));
        settled = true;
      },
      onError(err) {
        if (!settled) reject(err);
        settled = true;
      },
    });
  });
}
