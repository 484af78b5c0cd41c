import { createLocalKey, type RequestContext } from '../core/context.js';
import { createStreamMeter, type StreamEndpoint } from '../core/metering/stream-meter.js';
import type { Plugin, PluginFactory } from '../core/plugin.js';
import { METER, type MeterState, noOptions, PRICED_CALL, pricedEndpoint } from './paid-state.js';

/**
 * The meter stage: how many tokens the call used. FAILS CLOSED in the sense that matters: a call it cannot
 * meter from the upstream's `usage` is counted with gpt-tokenizer and marked estimated — never free.
 *
 * - Streams (chat, completions): the meter's request hook asks the upstream for usage
 *   (`requestStreamUsage`, before the relay stage dispatches) and remembers whether the client asked for it
 *   itself; the stream meter's synchronous `push` is the chunk hook:
 *   it takes usage from the final chunk and drops the usage-only chunk when the client did not ask for it.
 *   It asks the runner to hold `data: [DONE]` (`ctx.holdSseDone`; the body writer is its one owner) so that
 *   bytes appended at the end (the cost block, the X-Cashu change comment) go before it.
 * - Non-stream JSON: the body is buffered (`ctx.bufferResponse`), its chunks are copied and dropped here,
 *   and the settle stage sends the body back with the cost block spliced in. Usage comes from the body.
 * - Other proxied calls (not chat/completions/embeddings/responses) are not metered: they pay the
 *   per-request price.
 * - An upstream error status (4xx passed through) is marked failed: nothing is charged.
 */

/** The client's own `stream_options.include_usage`, before we forced it on. */
const CLIENT_WANTS_USAGE = createLocalKey<boolean>('meter.clientWantsUsage');

function streamEndpoint(e: string): StreamEndpoint | undefined {
  return e === 'chat' || e === 'completions' || e === 'responses' || e === 'messages' ? e : undefined;
}

/**
 * Asks the upstream for usage in a chat/completions stream (`stream_options.include_usage: true`) and
 * remembers whether the client asked for it itself. Runs in the meter's request hook, before the relay stage
 * dispatches (request hooks all run before dispatch, whatever their place in PIPELINE).
 */
function requestStreamUsage(ctx: RequestContext): void {
  const endpoint = pricedEndpoint(ctx);
  if (!ctx.stream || (endpoint !== 'chat' && endpoint !== 'completions')) return;
  const body = ctx.body as Record<string, unknown> | null;
  if (body === null || typeof body !== 'object') return;
  const so = body.stream_options;
  const prior = so !== null && typeof so === 'object' ? (so as Record<string, unknown>) : {};
  ctx.setLocal(CLIENT_WANTS_USAGE, prior.include_usage === true);
  if (prior.include_usage !== true) {
    body.stream_options = { ...prior, include_usage: true };
    ctx.markBodyModified();
  }
}

export const meter: PluginFactory = (options): Plugin => {
  noOptions('meter', options);
  return {
    name: 'meter',
    // A response-side stage that shapes the request: streams must carry their usage (runs before dispatch).
    onRequest(ctx) {
      requestStreamUsage(ctx);
      return undefined;
    },
    onResponseHead(ctx, head) {
      const priced = ctx.local(PRICED_CALL);
      const endpoint = priced?.endpoint ?? pricedEndpoint(ctx);
      const state: MeterState = {
        stream: undefined,
        body: undefined,
        failed: head.status >= 400,
      };
      ctx.setLocal(METER, state);
      // Flat calls, audio and speech are not metered (their units are known at admission; a speech answer is
      // binary and streams through unbuffered). Images are: the JSON answer says how many came back.
      if (
        state.failed ||
        endpoint === 'other' ||
        endpoint === 'free' ||
        endpoint === 'audio' ||
        endpoint === 'speech'
      )
        return;
      const se = streamEndpoint(endpoint);
      if (ctx.responseIsSse && se) {
        state.stream = createStreamMeter({
          clientWantsUsage: ctx.local(CLIENT_WANTS_USAGE) ?? false,
          model: priced?.model ?? ctx.model ?? '',
          endpoint: se,
          request: ctx.body,
        });
        ctx.holdSseDone = true;
      } else if (!ctx.responseIsSse) {
        state.body = [];
        ctx.bufferResponse = true;
      }
    },

    onResponseChunk(ctx, chunk) {
      const state = ctx.local(METER);
      if (state === undefined) return undefined;
      const m = state.stream;
      if (m) return m.push(chunk);
      if (state.body) {
        state.body.push(Buffer.from(chunk)); // a copy: the runner may reuse the chunk's memory
        return null;
      }
      return undefined;
    },

    onResponseEnd(ctx) {
      const m = ctx.local(METER)?.stream;
      // An unterminated last event (no blank line) is still the client's: flush it.
      if (m) {
        const rest = m.finalBytes();
        if (rest.length > 0) ctx.appendToBody(rest);
      }
    },
  };
};
