import { CALL_TRACE } from '../core/call-trace.js';
import { ConfigError } from '../core/config.js';
import type { RequestContext } from '../core/context.js';
import { PROVIDER_PREFERENCE, type ProviderPreference, SERVED_BY, UPSTREAM_COST } from '../core/context.js';
import { GatewayError } from '../core/errors.js';
import { providerSeries } from '../core/metrics.js';
import type { Plugin, PluginFactory, PluginNeeds } from '../core/plugin.js';
import { nodeAnswer } from '../core/providers/node-answer.js';
import { NodePayment, RAISE_LIMIT } from '../core/providers/node-payment.js';
import { isPaidNode } from '../core/providers/provider.js';
import type { NodeCallPayment, Provider } from '../core/providers/types.js';
import { type CallTrace, providerTraceparent } from '../core/trace-context.js';
import type { UpstreamResponse } from '../core/upstream/upstream-response.js';
import { AUTO_PRICED, type AutoPricedCall } from './paid-state.js';

/**
 * The relay stage: forwards the request to a provider and attaches the upstream response to the context;
 * the runner then streams it through the response hooks to the client.
 *
 * - Providers (core/providers/providers.ts): tried in the routing policy's order, at most
 *   PROVIDER_MAX_ATTEMPTS of them; one whose circuit breaker is open is skipped (nothing is sent to it, no
 *   attempt is counted), and when every one is, the call fails at once with 502 `upstream_error` naming them
 *   (nothing is charged: no upstream answered) — except with the one-provider shorthand, whose breaker only
 *   reports status (Providers.skipOpenBreakers). A connect error, a timeout before the response head, a 5xx or
 *   a 429 moves the call to the next one with the same body bytes — only ever before anything reached the
 *   client (the head is not passed on until a provider's answer is kept). The reservation made before dispatch covers every attempt;
 *   the call is charged once. Each outcome feeds the provider's circuit breaker and metrics.
 *
 * - Body: `ctx.rawBody` as received, or `JSON.stringify(ctx.body)` when a stage called `markBodyModified()`.
 * - Status: 2xx/3xx and 4xx with a JSON body pass through with their status (the provider's own error body,
 *   e.g. an unknown model). A 5xx, or any error status with a non-JSON body, becomes 502 `upstream_error`
 *   naming the upstream status: a provider failure is not the gateway's 500 (`internal_error`).
 * - Fails closed: it never answers from anywhere but the upstream.
 *
 * Why the factory is over 80 lines: its closure holds what the stage was given at start (the services at its top)
 * and nothing else; each hook and each step of a hook is a named function inside it, each under 80 lines.
 */

/** How much of an upstream error body is read to explain it. */
const ERROR_BODY_LIMIT = 16 * 1024;

/** The services relay uses: plugins/index.ts hands it these alone (a required one missing stops the start). */
export const relayNeeds = {
  required: ['providers'],
  optional: ['nodes'],
} as const satisfies PluginNeeds;

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a stage factory: the count is its closure, whose named steps are each under 80 lines
export const relay: PluginFactory<typeof relayNeeds> = (options, services): Plugin => {
  if (options !== undefined && Object.keys(options).length > 0) {
    throw new ConfigError(`relay: unknown options ${Object.keys(options).join(', ')}`);
  }
  const providers = services.providers;
  const maxAttempts = providers.opts.maxAttempts;
  const skipOpen = providers.skipOpenBreakers;
  // Nodes paid from the operator's wallet (core/providers/paid-nodes.ts): `"payment": "cashu"` calls carry a token
  // each, `"cashu-balance"` calls the prepaid key kept at the node.
  const nodes = services.nodes;
  if (nodes === undefined && providers.list.some((p) => isPaidNode(p.spec))) {
    throw new ConfigError(
      'relay: a provider paid with eCash ("payment": "cashu" or "cashu-balance") needs the wallet (CASHU_MINTS) and the store',
    );
  }
  const payer = nodes?.payer;
  const accounts = nodes?.accounts;
  /** `"pricing": "auto"` providers serve only calls whose reservation priced them (reserve stage). */
  function eligible(run: DispatchRun, p: Provider): boolean {
    const auto = run.auto;
    return !(auto !== undefined && (p.spec.autoPricing !== undefined ? !auto.cards.has(p.name) : auto.only));
  }

  /**
   * A paid node's payment for this attempt: `"cashu"` a token (the larger one when the node asked for more),
   * `"cashu-balance"` the request header with the node key (made first when none exists yet). Undefined when
   * paying failed and the call moves on (thrown on the last attempt).
   */
  async function payFor(run: DispatchRun, p: Provider, last: boolean): Promise<Paid | undefined> {
    const { ctx } = run;
    if (p.spec.payment === undefined) return {};
    try {
      if (p.spec.payment === 'cashu-balance') return { prepaid: await accounts!.headers(p) };
      const payment = await payer!.pay(
        p,
        {
          requestId: ctx.requestId,
          model: ctx.model,
          path: ctx.path,
          body: ctx.body,
          rawBytes: run.body === undefined ? 0 : Buffer.byteLength(run.body),
        },
        run.raise?.provider === p ? run.raise.atLeastMsat : 0,
      );
      return { payment };
    } catch (err) {
      // Nothing was sent. A wallet too poor is not the node's fault; a node that lists no price is.
      if ((err as GatewayError).code === 'operator_wallet_insufficient') p.breaker.abandon();
      else p.breaker.failure();
      if (last) throw err;
      run.failure = err;
      providerSeries(p.name).failover.inc();
      return undefined;
    }
  }

  /** The request to `p`: its response and the time to its head, or undefined when it failed and the call moves on
   *  (thrown on the last attempt, or when the client went away). */
  async function sendTo(
    run: DispatchRun,
    p: Provider,
    paid: Paid,
    last: boolean,
  ): Promise<{ up: UpstreamResponse; headMs: number } | undefined> {
    const { ctx, callTrace } = run;
    const { payment, prepaid } = paid;
    const sentAt = performance.now();
    try {
      // The same bytes every attempt: the body is a Buffer or string, replayed unchanged.
      const up = await p.client.send({
        method: ctx.method,
        path: ctx.path,
        rawQuery: ctx.rawQuery,
        headers: ctx.headers,
        body: run.body,
        cancel: ctx,
        // A stage that charges the answer keeps the call once the provider has it (core/context.ts).
        keepOnceSent: ctx.drainAfterAbortMs !== undefined,
        ...(callTrace !== undefined
          ? {
              extraHeaders: {
                ...payment?.headers,
                ...prepaid,
                traceparent: providerTraceparent(callTrace),
              },
            }
          : payment !== undefined
            ? { extraHeaders: payment.headers }
            : prepaid !== undefined
              ? { extraHeaders: prepaid }
              : {}),
      });
      return { up, headMs: performance.now() - sentAt };
    } catch (err) {
      // No answer: the token is taken back (or, if the node redeemed it and died, recorded as a loss).
      payment?.settleHead(undefined);
      // The client went away: not the provider's failure, nothing to retry (a probe it held is freed).
      if (ctx.cancelled) {
        p.breaker.abandon();
        throw err;
      }
      p.breaker.failure();
      const m = providerSeries(p.name);
      m.error.n++;
      if (last) throw err;
      run.failure = err;
      m.failover.inc();
      return undefined;
    }
  }

  /**
   * What `p`'s answer means for the call: kept (`served`), dropped for the next provider (`next`: a 5xx, a 429, a
   * paid node that refused its payment — only ever before anything reached the client), or asked again (`again`:
   * a paid node's 402 naming a shortfall, paid once more with the larger token).
   */
  async function judge(
    run: DispatchRun,
    p: Provider,
    paid: Paid,
    sent: { up: UpstreamResponse; headMs: number },
    last: boolean,
  ): Promise<'served' | 'next' | 'again'> {
    const { payment, prepaid } = paid;
    const { up, headMs } = sent;
    const m = providerSeries(p.name);
    // A node paid with eCash that refused the token (402, untrusted mint …) failed like a 5xx; so did one
    // that refused the prepaid key (401: unknown; 402: its balance is short, a top-up starts).
    const refused =
      (payment !== undefined && NodePayment.refused(up)) ||
      (prepaid !== undefined && (up.status === 401 || up.status === 402));
    if (refused && payment !== undefined) payer?.forgetPrices(p);
    if (refused && prepaid !== undefined) accounts?.refused(p, up.status);
    if (payment !== undefined && up.status === 402 && run.raise === undefined) {
      // The node wants more than its listed prices said (NUT-18 request for the shortfall): its token comes
      // back with the 402, and the same node is asked again, once, with the larger token. Not a failure.
      const short = NodePayment.shortfallMsat(up.headers);
      if (short !== undefined && payment.amountMsat + short <= RAISE_LIMIT * payment.amountMsat) {
        payment.settleHead(up);
        up.abort();
        p.breaker.abandon();
        run.raise = { provider: p, atLeastMsat: payment.amountMsat + short };
        return 'again';
      }
    }
    if (up.status >= 500 || up.status === 429 || refused) {
      p.breaker.failure();
      (refused ? m.error : up.status === 429 ? m.status429 : m.status5xx).n++;
      if (!last || refused) {
        // Nothing of this answer reached the client: drop it and ask the next provider. The node's change
        // (its whole token back with the error) or our own token is redeemed.
        payment?.settleHead(up);
        up.abort();
        const refusal = new GatewayError('upstream_error', {
          message:
            prepaid !== undefined
              ? `The node answered ${up.status}: it did not accept this gateway's prepaid key (${up.status === 402 ? 'its balance there is short; a top-up is under way' : 'unknown there'})`
              : `The node answered ${up.status}: it did not accept this gateway's eCash payment`,
          details: { upstream_status: up.status, provider: p.name },
        });
        if (last) throw refusal;
        run.failure = refused
          ? refusal
          : new GatewayError('upstream_error', {
              message: `The upstream provider answered ${up.status}`,
              details: { upstream_status: up.status },
            });
        m.failover.inc();
        return 'next';
      }
    } else {
      p.breaker.success();
      p.recordTtfb(headMs);
      m.ok.n++;
    }
    await serve(run.ctx, p, paid, up);
    return 'served';
  }

  /** The kept answer on the context: an error status as the gateway's error, a paid node's change and cost taken
   *  out of it. */
  async function serve(ctx: RequestContext, p: Provider, paid: Paid, up: UpstreamResponse): Promise<void> {
    const { payment, prepaid } = paid;
    ctx.timings.upstreamHeaders = performance.now();
    ctx.setLocal(SERVED_BY, p.name);
    if (up.status >= 500 || (up.status >= 400 && !isJson(up.headers['content-type']))) {
      payment?.settleHead(up);
      throw await upstreamFailure(up);
    }
    // A paid node's change is taken out of the answer (header or SSE comment) and redeemed; its cost, taken
    // out too, is what the call cost the operator (the audit record's `upstream_msats`).
    if (payment !== undefined) {
      ctx.upstream = payment.wrap(up, (msat) => ctx.setLocal(UPSTREAM_COST, msat));
    } else if (prepaid !== undefined) {
      ctx.upstream = nodeAnswer(up, (end) => {
        accounts?.spent(p, ctx.requestId, end.costMsat);
        if (end.costMsat !== undefined) ctx.setLocal(UPSTREAM_COST, end.costMsat);
      });
    } else ctx.upstream = up;
  }

  /** One provider asked: paid when it is a paid node, sent the request, its answer judged. */
  async function attempt(run: DispatchRun, p: Provider, last: boolean): Promise<'served' | 'next' | 'again'> {
    const paid = await payFor(run, p, last);
    if (paid === undefined) return 'next';
    const sent = await sendTo(run, p, paid, last);
    if (sent === undefined) return 'next';
    providerSeries(p.name).head.observe(sent.headMs / 1000);
    return judge(run, p, paid, sent, last);
  }

  return {
    name: 'relay',
    // The upstream call runs after every stage's request hook (core/plugin.ts onDispatch), so stages listed
    // after the relay (the meter asking for stream usage) still shape the request.
    async onDispatch(ctx: RequestContext) {
      ctx.timings.upstreamStart = performance.now();
      const order = preferred(providers.order(ctx.model), ctx.local(PROVIDER_PREFERENCE));
      if (order.length === 0) {
        throw new GatewayError('not_found', { message: `No provider serves the model ${ctx.model ?? ''}` });
      }
      const run: DispatchRun = {
        ctx,
        body: ctx.bodyModified ? JSON.stringify(ctx.body) : ctx.rawBody.length > 0 ? ctx.rawBody : undefined,
        attempts: 0,
        failure: undefined,
        raise: undefined,
        auto: ctx.local(AUTO_PRICED),
        // With OpenTelemetry on (core/otel-tracing.ts): the provider's traceparent names the relay span.
        callTrace: ctx.local(CALL_TRACE),
      };
      for (let i = 0; i < order.length && run.attempts < maxAttempts; i++) {
        const p = order[i]!;
        // The client left while an earlier provider failed: nobody is asked again for it.
        if (ctx.clientAborted)
          throw run.failure ?? new GatewayError('upstream_error', { message: 'The request was cancelled' });
        if (!eligible(run, p)) continue;
        // An open breaker: nothing is sent to it (not even a timeout's worth of waiting); after its cool-down
        // one call probes it and the others skip it meanwhile. A skipped provider costs no attempt.
        if (skipOpen && !p.breaker.acquire()) continue;
        run.attempts++;
        if (run.callTrace !== undefined) run.callTrace.attempts = run.attempts;
        const last =
          run.attempts === maxAttempts ||
          i === order.length - 1 ||
          (skipOpen && !order.slice(i + 1).some((q) => q.breaker.allows()));
        const outcome = await attempt(run, p, last);
        if (outcome === 'served') return;
        if (outcome === 'again') {
          run.attempts--;
          i--;
        }
      }
      // A provider that looked available was taken by another call's probe meanwhile: the last failure stands.
      if (run.failure !== undefined) throw run.failure;
      // Every provider of the model is open (or being probed by another call): fail fast, nothing was sent.
      throw new GatewayError('upstream_error', {
        message: `All providers of ${ctx.model ? `model ${ctx.model}` : 'this call'} are unavailable (their circuit breakers are open); try again shortly`,
        details: { providers: order.map((p) => p.name) },
      });
    },
  };
};

/** One call's dispatch across providers: its body bytes and what earlier attempts left. */
interface DispatchRun {
  ctx: RequestContext;
  /** `ctx.rawBody` as received, or `JSON.stringify(ctx.body)` when a stage modified it; the same every attempt. */
  body: string | Buffer | undefined;
  attempts: number;
  /** The last attempt's failure: what the call fails with when nobody else answers. */
  failure: unknown;
  /** A paid node's 402 naming a shortfall: that node is paid once more with the larger token. */
  raise: { provider: Provider; atLeastMsat: number } | undefined;
  auto: AutoPricedCall | undefined;
  callTrace: CallTrace | undefined;
}

/** How one attempt pays a paid node: a token (`"cashu"`) or the prepaid key's header (`"cashu-balance"`). */
interface Paid {
  payment?: NodeCallPayment | undefined;
  prepaid?: Record<string, string> | undefined;
}

/** A routing policy's preference (plugin kit) applied to the node's order. */
function preferred(order: readonly Provider[], pref: ProviderPreference | undefined): readonly Provider[] {
  if (pref === undefined) return order;
  const first = pref.order.flatMap((name) => order.filter((p) => p.name === name));
  return pref.only ? first : [...first, ...order.filter((p) => !first.includes(p))];
}

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
