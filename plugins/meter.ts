import { createLocalKey, type RequestContext } from '../core/context.js';
import { createStreamMeter, type StreamEndpoint } from '../core/metering/stream-meter.js';
import type { Plugin, PluginFactory } from '../core/plugin.js';
import { METER, type MeterState, noOptions, PRICED_CALL, pricedEndpoint } from './paid-state.js';

/**
 * The meter stage: how many tokens the call used. FAILS CLOSED in the sense that matters: a call it cannot
 * meter from the upstream's `usage` is counted with gpt-tokenizer and marked estimated — never free.
 *
 * - Streams (chat, completions): the upstream was asked for usage (`requestStreamUsage`, called by the
 *   reserve stage before the relay), and whether the client asked for it is remembered; the stream meter's synchronous `push` is the chunk hook:
 *   it takes usage from the final chunk, drops the usage-only chunk when the client did not ask for it,
 *   and holds `data: [DONE]` so that bytes appended at the end (the X-Cashu change comment) go before it.
 *   The held event is put back at the end of its chunk, where the runner's own `[DONE]` hold keeps it until
 *   the end hooks ran (`ctx.holdSseDone`), so no stage has to know which one ends the stream.
 * - Non-stream JSON: the body is buffered (`ctx.bufferResponse`), its chunks are copied and dropped here,
 *   and the settle stage sends the body back with the cost block spliced in. Usage comes from the body.
 * - Other proxied calls (not chat/completions/embeddings/responses) are not metered: they pay the
 *   per-request price.
 * - An upstream error status (4xx passed through) is marked failed: nothing is charged.
 */

const DONE_EVENT = Buffer.from('data: [DONE]\n\n');
/** The client's own `stream_options.include_usage`, before we forced it on. */
const CLIENT_WANTS_USAGE = createLocalKey<boolean>('meter.clientWantsUsage');
const DONE_PUT_BACK = createLocalKey<boolean>('meter.donePutBack');

function streamEndpoint(e: string): StreamEndpoint | undefined {
  return e === 'chat' || e === 'completions' || e === 'responses' || e === 'messages' ? e : undefined;
}

/**
 * Asks the upstream for usage in a chat/completions stream (`stream_options.include_usage: true`) and
 * remembers whether the client asked for it itself. Must run BEFORE the relay: the reserve stage calls it
 * while it prepares the forwarded body (the meter's own hooks all run after the relay).
 */
export function requestStreamUsage(ctx: RequestContext): void {
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
      if (m) {
        const held = m.doneHeld;
        const out = m.push(chunk);
        if (held || !m.doneHeld || ctx.local(DONE_PUT_BACK)) return out;
        // The meter just took `data: [DONE]` out of this chunk: put it back at the end, where the runner
        // holds it until the end hooks appended their bytes.
        ctx.setLocal(DONE_PUT_BACK, true);
        const kept = out === null ? undefined : out === undefined ? chunk : out;
        return kept === undefined ? DONE_EVENT : Buffer.concat([kept, DONE_EVENT]);
      }
      if (state.body) {
        state.body.push(Buffer.from(chunk)); // a copy: the runner may reuse the chunk's memory
        return null;
      }
      return undefined;
    },

    onResponseEnd(ctx) {
      const m = ctx.local(METER)?.stream;
      // An unterminated last event (no blank line, no [DONE]) is still the client's: flush it.
      if (m && !m.doneHeld) {
        const rest = m.finalBytes();
        if (rest.length > 0) ctx.appendToBody(rest);
      }
    },
  };
};
