import { channel } from 'node:diagnostics_channel';

/**
 * Request tracing over `node:diagnostics_channel` (the undici way): zero cost when nobody subscribes,
 * because every publish is guarded by `hasSubscribers`. The benchmark helper subscribes for a per-stage
 * time breakdown. Payloads are plain objects; times are milliseconds from `performance.now()`.
 *
 * - `gateway:request:start` → `{ requestId, method, path, ctx }` when a pipeline request starts (`ctx`: the
 *   RequestContext, for a subscriber that keeps state on it: core/otel-tracing.ts sets CALL_TRACE there).
 * - `gateway:stage` → `{ requestId, plugin, hook, durationMs }` after each plugin hook (chunk hooks excluded:
 *   they are per chunk; see `gateway:request:end`'s `chunkMs`).
 * - `gateway:request:end` → `{ requestId, method, path, status, outcome, durationMs, timings, chunkMs, keyId,
 *   charge, ctx }` after the final hooks ran. `keyId`: the paying key's id when one was identified; `charge`: what the
 *   call was charged (`ChargeInfo` of core/context.ts: msats, usd, model, tokens, estimated) when it was settled
 *   with a charge — where metrics and the audit log read a call's cost and usage.
 * - `gateway:response:chunk` → `{ ctx, chunk }` for each chunk of a relayed answer as the provider sent it (before
 *   the chunk hooks; the chunk's memory may be reused after the publish): core/otel-tracing.ts reads the answer's
 *   id and finish reasons from it.
 * - `gateway:span` → a finished span of work outside the paid pipeline (`OpSpanEvent` of core/trace-context.ts:
 *   batch creation and settlement, background responses' settlement, payouts), exported by core/otel-tracing.ts.
 */
export const requestStartChannel = channel('gateway:request:start');
export const stageChannel = channel('gateway:stage');
export const requestEndChannel = channel('gateway:request:end');
export const responseChunkChannel = channel('gateway:response:chunk');
export const opSpanChannel = channel('gateway:span');

export interface StageEvent {
  requestId: string;
  plugin: string;
  hook: 'onRequest' | 'onDispatch' | 'onResponseHead' | 'onResponseEnd' | 'onError' | 'onFinally';
  durationMs: number;
}
