import { AUDIT_SUBJECT, auditInputOf, callAuditRecord } from '../core/audit/audit-log.js';
import { BackgroundRetry } from '../core/background-retry.js';
import { isBackgroundResponse, runningResponse } from '../core/batches/background-responses.js';
import type { BatchJob } from '../core/batches/types.js';
import { CALL_TRACE } from '../core/call-trace.js';
import {
  AUTH,
  type AuthInfo,
  adjustedPrice,
  CHARGE,
  type ChargeInfo,
  createLocalKey,
  PRICE_ADJUSTMENT,
  type PriceAdjustment,
  RESERVATION,
  type RequestContext,
  SERVED_BY,
  UPSTREAM_COST,
} from '../core/context.js';
import type { CallAuditRecord, SettleInput, SettleResult } from '../core/ledger/types.js';
import { requestClientAddress } from '../core/limits/request-limits.js';
import {
  type AbandonedCall,
  asksForReasoning,
  describeUsage,
  type Metered,
  meteredUsage,
  UNIT_NAMES,
} from '../core/metering/call-usage.js';
import { emptyUsage, inputTotal, outputTotal } from '../core/metering/usage.js';
import {
  recordCharge,
  recordOverrun,
  recordUnpricedDimension,
  recordUnreportedOutput,
} from '../core/metrics.js';
import type { Plugin, PluginFactory, PluginNeeds } from '../core/plugin.js';
import { nodeCallCost } from '../core/pricing/node-rates.js';
import { type CostResult, isUnitEndpoint } from '../core/pricing/types.js';
import { signCallReceipt, wantsReceipt } from '../core/receipts/call-receipt.js';
import { callTraceparent } from '../core/trace-context.js';
import {
  ADMISSION,
  AUTO_PRICED,
  CHARGE_STEP,
  COST_BLOCK,
  inWholeUnits,
  METER,
  type MeterState,
  noOptions,
  PRICED_CALL,
  type PricedCall,
  SETTLED,
  STORED_RESPONSE,
} from './paid-state.js';

/**
 * The settle stage: charges the metered cost and returns the rest of the reservation, exactly once.
 * NEVER FAILS OPEN: whatever happened, the final hook settles or releases what is still held.
 *
 * - End of a response: cost = pricing.cost(usage, the reservation's BTC price) → `ledger.settle` (idempotent
 *   by reservation id). A cost above the reservation is charged up to what the account holds; the overrun
 *   is logged (`overrun_msat`).
 * - Usage: the upstream's, or the meter's estimate (marked estimated). A client that leaves mid-stream pays
 *   for what was produced up to then (the stream meter's count of what passed); a non-stream call the
 *   client abandoned after the upstream started answering pays its prompt (estimated).
 * - Nothing charged (release): the upstream failed before its first byte, or answered an error status.
 * - Non-stream JSON: the body (held by the meter) is sent back with the cost block spliced in before
 *   its closing brace — the rest of the body is not re-serialised: `"x-node-cost": {sats, msats, usd,
 *   breakdown {prompt_cost, completion_cost, fees} (msats), estimated}`.
 *
 * Why the factory is over 80 lines: its closure holds what the stage was given at start (the services at its top)
 * and nothing else; each hook and each step of a hook is a named function inside it, each under 80 lines.
 */

/** The cost raised to `msat` when below it; the difference is counted as (hidden) reasoning. */
function raisedTo(c: CostResult, msat: number): CostResult {
  if (c.msat >= msat) return c;
  const extra = msat - c.msat;
  const d = c.breakdown.dimensions;
  return {
    msat,
    breakdown: {
      ...c.breakdown,
      completionMsat: c.breakdown.completionMsat + extra,
      dimensions: { ...d, internal_reasoning: (d.internal_reasoning ?? 0) + extra },
    },
    fallbacks: c.fallbacks,
    usd: c.msat === 0 ? c.usd : (c.usd * msat) / c.msat,
    sats: Math.ceil(msat / 1000),
  };
}

/** The cost with a pricing policy's adjustment (plugin kit); the difference is shown as fees. */
function adjustCost(c: CostResult, a: PriceAdjustment | undefined): CostResult {
  if (a === undefined) return c;
  const msat = adjustedPrice(c.msat, a);
  if (msat === c.msat) return c;
  const { promptMsat, completionMsat } = c.breakdown;
  // Prompt and completion parts stay within the total; fees take the rest (may be the whole charge).
  const p = Math.min(promptMsat, msat);
  const q = Math.min(completionMsat, msat - p);
  // The same for each named dimension: parts kept in order while they fit, `fees` the rest.
  const dimensions: CostResult['breakdown']['dimensions'] = {};
  let left = msat;
  for (const [k, v] of Object.entries(c.breakdown.dimensions) as [keyof typeof dimensions, number][]) {
    if (k === 'fees') continue;
    dimensions[k] = Math.min(v, left);
    left -= dimensions[k]!;
  }
  dimensions.fees = left;
  return {
    msat,
    breakdown: { promptMsat: p, completionMsat: q, feesMsat: msat - p - q, dimensions },
    fallbacks: c.fallbacks,
    usd: c.msat === 0 ? 0 : (c.usd * msat) / c.msat,
    sats: Math.ceil(msat / 1000),
  };
}

/**
 * The cost of a call paid with an eCash token (X-Cashu or bearer) in whole units of it (CHARGE_STEP,
 * paid-state.ts): rounded up once; the rounding is its own breakdown part (`unit_rounding` in x-node-cost),
 * so the parts still sum to the charge.
 */
function inTokenUnits(c: CostResult, step: number | undefined): CostResult {
  const msat = inWholeUnits(c.msat, step);
  if (msat === c.msat) return c;
  return {
    msat,
    breakdown: {
      ...c.breakdown,
      unitRoundingMsat: msat - c.msat,
      // The dimensions still sum to the charge: the rounding is part of `fees`.
      dimensions: { ...c.breakdown.dimensions, fees: (c.breakdown.dimensions.fees ?? 0) + msat - c.msat },
    },
    fallbacks: c.fallbacks,
    usd: c.msat === 0 ? c.usd : (c.usd * msat) / c.msat,
    sats: Math.ceil(msat / 1000),
  };
}

/** `body` (a JSON object's text) with `"x-node-cost": block` added before its closing brace, or undefined. */
export function spliceCostBlock(body: Buffer, block: Record<string, unknown>): Buffer | undefined {
  let end = body.length - 1;
  while (end >= 0 && (body[end] === 0x20 || body[end] === 0x0a || body[end] === 0x0d || body[end] === 0x09))
    end--;
  let start = 0;
  while (
    start < end &&
    (body[start] === 0x20 || body[start] === 0x0a || body[start] === 0x0d || body[start] === 0x09)
  )
    start++;
  if (end <= start || body[start] !== 0x7b /* { */ || body[end] !== 0x7d /* } */) return undefined;
  let before = end - 1;
  while (
    before > start &&
    (body[before] === 0x20 || body[before] === 0x0a || body[before] === 0x0d || body[before] === 0x09)
  )
    before--;
  const empty = before === start;
  const field = `${empty ? '' : ','}"x-node-cost":${JSON.stringify(block)}`;
  return Buffer.concat([body.subarray(0, end), Buffer.from(field), body.subarray(end)]);
}

/** The ledger call that failed in an earlier hook of this request, retried by the final hook. */
const PENDING_OP = createLocalKey<() => Promise<unknown>>('settle:pending-op');

/** The services settle uses: plugins/index.ts hands it these alone (a required one missing stops the start). */
export const settleNeeds = {
  required: ['ledger', 'pricing', 'catalog', 'providers', 'config', 'log'],
  optional: ['btc', 'audit', 'batchJobs', 'objects', 'network'],
} as const satisfies PluginNeeds;

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a stage factory: the count is its closure, whose named steps are each under 80 lines
export const settle: PluginFactory<typeof settleNeeds> = (options, services): Plugin => {
  noOptions('settle', options);
  const { ledger, pricing, log } = services;
  const retries = new BackgroundRetry(log, 'settlement');

  /** What the call used (core/metering/call-usage.ts), or undefined when nothing is to be charged. */
  function usageOf(
    ctx: RequestContext,
    state: MeterState | undefined,
    priced: PricedCall,
    ended: boolean,
  ): Metered | undefined {
    return meteredUsage({
      endpoint: priced.endpoint,
      model: priced.model,
      requestBody: ctx.body,
      reservedUnits: priced.units,
      relayed: ctx.upstream !== undefined,
      failed: state?.failed === true,
      started: ctx.timings.firstChunk !== undefined,
      ended,
      stream: state?.stream,
      body: state?.body,
      // The client left and the answer was read on (drainAfterAbortMs): the provider had the call and answered.
      abandoned:
        ctx.clientAborted && ctx.drainAfterAbortMs !== undefined ? abandonedCall(ctx, priced) : undefined,
    });
  }

  /**
   * The watcher's job for a background response the provider answered as still running (queued, in progress):
   * undefined for any other answer (docs/pricing.md, "Background responses").
   */
  function backgroundJob(ctx: RequestContext, priced: PricedCall): BatchJob | undefined {
    const state = ctx.local(METER);
    const res = ctx.local(RESERVATION);
    const admission = ctx.local(ADMISSION);
    if (
      services.batchJobs === undefined ||
      state?.body === undefined ||
      state.failed ||
      res === undefined ||
      admission === undefined ||
      !isBackgroundResponse(priced.endpoint, ctx.body)
    )
      return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.concat(state.body).toString('utf8'));
    } catch {
      return undefined;
    }
    const running = runningResponse(parsed);
    if (running === undefined) return undefined;
    const step = ctx.local(CHARGE_STEP);
    const trace = ctx.local(CALL_TRACE);
    return {
      id: res.id,
      kind: 'response',
      state: 'open',
      accountId: admission.accountId,
      keyId: admission.key.keyId,
      parentKeyId: admission.key.parentKeyId,
      batchId: running.id,
      model: priced.model,
      endpoint: 'responses',
      factor: '1',
      btcUsd: priced.btcUsd,
      reservedMsat: res.amountMsats,
      lines: 1,
      createdAtMs: Date.now(),
      ...(step !== undefined && step > 1 ? { chargeStep: step } : {}),
      ...(trace !== undefined ? { traceparent: callTraceparent(trace) } : {}),
    };
  }

  /** What an abandoned call is charged at least: its prompt bound; a model that reasons (asked to, or priced for
   *  internal reasoning) its whole reservation. A background response cut short runs on at the provider (billed
   *  unseen): its reservation too. */
  function abandonedCall(ctx: RequestContext, priced: PricedCall): AbandonedCall {
    const reasoningPrice = services.catalog.get(priced.model)?.pricing?.internal_reasoning;
    return {
      promptTokensBound: priced.promptTokensBound,
      reasons:
        asksForReasoning(ctx.body) ||
        Number(reasoningPrice ?? 0) > 0 ||
        isBackgroundResponse(priced.endpoint, ctx.body),
      reservedMsat: ctx.local(RESERVATION)?.amountMsats,
    };
  }

  /** What `usage` of this call costs: at the serving provider's own prices when it declares them (model-based
   *  pricing; see Providers.chargeRates) or advertises them (`"pricing": "auto"`, any pricing mode), with a pricing
   *  policy's adjustment. */
  function costOf(ctx: RequestContext, priced: PricedCall, metered: Metered): CostResult {
    if (priced.relayMsat !== undefined) {
      // A RELAY_PATHS call: its listed price, all of it a fee (no tokens are metered).
      const msat = priced.relayMsat;
      const flat = {
        msat,
        breakdown: { promptMsat: 0, completionMsat: 0, feesMsat: msat, dimensions: { request: msat } },
        fallbacks: [],
        usd: 0,
        sats: Math.ceil(msat / 1000),
      };
      return adjustCost(flat, ctx.local(PRICE_ADJUSTMENT));
    }
    // A `"pricing": "auto"` provider served it: its node's price × markup, as reserved (core/pricing/node-rates.ts).
    const card = ctx.local(AUTO_PRICED)?.cards.get(ctx.local(SERVED_BY) ?? '');
    if (card !== undefined) {
      const c = nodeCallCost(card, metered.usage ?? emptyUsage(), priced.btcUsd ?? services.btc?.peek()?.usd);
      return inTokenUnits(adjustCost(c, ctx.local(PRICE_ADJUSTMENT)), ctx.local(CHARGE_STEP));
    }
    const providers = services.providers;
    const cost = adjustCost(
      pricing.cost({
        model: priced.model,
        endpoint: priced.endpoint,
        usage: metered.usage,
        btcUsd: priced.btcUsd,
        units: metered.units,
        variant: priced.variant,
        rates:
          pricing.mode === 'model' && providers.priced
            ? providers.chargeRates(
                priced.model,
                ctx.local(SERVED_BY),
                services.catalog.usdRates(priced.model),
              )
            : undefined,
      }),
      ctx.local(PRICE_ADJUSTMENT),
    );
    return inTokenUnits(cost, ctx.local(CHARGE_STEP));
  }

  /**
   * The call's audit record for the settle step, which writes it with the charge (core/audit/audit-log.ts);
   * undefined without an audit log. `status`: what the client is answered.
   */
  function auditRecordOf(ctx: RequestContext, status: number): CallAuditRecord | undefined {
    if (services.audit === undefined) return undefined;
    const input = auditInputOf(ctx, status, requestClientAddress(ctx, services.config.trustedProxies));
    return input === undefined ? undefined : callAuditRecord(input);
  }

  /** The ledger's settle of a metered call: its cost, its tokens, the line the account's history shows, and the
   *  audit record that goes with the charge. */
  function settleInput(
    ctx: RequestContext,
    auth: AuthInfo,
    reservationId: string,
    priced: PricedCall,
    usage: Metered,
    c: CostResult,
    status: number | undefined,
  ): SettleInput {
    const tokens = usage.usage;
    return {
      accountId: auth.accountId,
      requestId: reservationId,
      costMsat: c.msat,
      promptTokens: tokens ? inputTotal(tokens) : 0,
      completionTokens: tokens ? outputTotal(tokens) : 0,
      model: priced.model,
      description: isUnitEndpoint(priced.endpoint)
        ? `${priced.model}: ${usage.units ?? 0} ${UNIT_NAMES[priced.endpoint]}`
        : `${priced.model || ctx.path}: ${tokens ? describeUsage(tokens) : '0 tokens'}${usage.estimated ? ' (estimated)' : ''}${usage.atLeastMsat !== undefined ? ' (client left, reservation)' : ''}`,
      estimated: usage.estimated,
      auditRecord: auditRecordOf(ctx, status ?? ctx.response.status),
    };
  }

  /** After the ledger charged the call: metrics, a stored response's tokens, CHARGE and the cost block. */
  async function recordCharged(
    ctx: RequestContext,
    keyId: string,
    priced: PricedCall,
    usage: Metered,
    c: CostResult,
    input: SettleInput,
    r: Extract<SettleResult, { ok: true }>,
  ): Promise<void> {
    const tokens = usage.usage;
    const { promptTokens, completionTokens } = input;
    const charged = r.chargedMsat;
    if (!r.replay) {
      recordCharge(charged, ctx.path);
      recordOverrun(r.overrunMsat);
      for (const d of c.fallbacks) recordUnpricedDimension(d);
      recordUnreportedOutput(tokens?.unreportedOutput ?? 0);
    }
    // A stored response: the tokens charged bound the calls that continue it (plugins/reserve.ts).
    const stored = ctx.local(STORED_RESPONSE);
    if (stored !== undefined && services.objects !== undefined && tokens !== undefined) {
      // Not part of the charge: a store error here leaves the record without tokens (a follow-up is then
      // bounded by STORED_CONTEXT_MAX_TOKENS or refused), never settles twice.
      await services.objects
        .annotate(stored, JSON.stringify({ input_tokens: promptTokens, output_tokens: completionTokens }))
        .catch((err: unknown) =>
          log.warn({ err, requestId: ctx.requestId }, 'stored response tokens not recorded'),
        );
    }
    ctx.setLocal(CHARGE, {
      msats: charged,
      ...(c.usd !== undefined ? { usd: c.usd } : {}),
      model: priced.model,
      promptTokens,
      completionTokens,
      ...(tokens !== undefined ? { usage: tokens } : {}),
      ...(usage.units !== undefined ? { units: usage.units } : {}),
      estimated: usage.estimated,
      balanceAfterMsat: r.balanceMsat,
    });
    if (r.overrunMsat > 0) {
      log.warn(
        { requestId: ctx.requestId, keyId, cost_msat: c.msat, overrun_msat: r.overrunMsat },
        'call cost more than the account could pay (upstream ignored max_tokens?)',
      );
    }
    ctx.setLocal(COST_BLOCK, costBlockOf(ctx, c, usage.estimated));
  }

  /** The `x-node-cost` block of a charged call. */
  function costBlockOf(ctx: RequestContext, c: CostResult, estimated: boolean): Record<string, unknown> {
    const servedBy = ctx.local(SERVED_BY);
    // What a paid node charged the operator for this call, shown only where the operator asked for it.
    const upstreamMsat = services.config.nodeCostUpstream ? ctx.local(UPSTREAM_COST) : undefined;
    return {
      sats: c.sats,
      msats: c.msat,
      usd: c.usd,
      breakdown: {
        prompt_cost: c.breakdown.promptMsat,
        completion_cost: c.breakdown.completionMsat,
        fees: c.breakdown.feesMsat,
        dimensions: c.breakdown.dimensions,
        ...(c.breakdown.unitRoundingMsat ? { unit_rounding: c.breakdown.unitRoundingMsat } : {}),
      },
      estimated,
      ...(servedBy !== undefined ? { provider: servedBy } : {}),
      ...(upstreamMsat !== undefined ? { upstream_msats: upstreamMsat } : {}),
    };
  }

  /** Settles or releases once; `ended`: called at the end of a complete response. */
  async function finish(ctx: RequestContext, ended: boolean, final = false, status?: number): Promise<void> {
    const res = ctx.local(RESERVATION);
    const auth = ctx.local(AUTH);
    const priced = ctx.local(PRICED_CALL);
    const state = ctx.local(SETTLED);
    if (!res || !auth || !priced || state === 'settled' || state === 'released' || state === 'settling')
      return;
    ctx.setLocal(SETTLED, 'settling');
    let op: (() => Promise<unknown>) | undefined;
    try {
      // A background response still running at the provider: its reservation stays, the watcher settles it.
      const job = ended ? backgroundJob(ctx, priced) : undefined;
      if (job !== undefined) {
        const jobs = services.batchJobs!;
        op = () => jobs.put(job, Date.now() + services.config.batches.pollMs);
        await op();
        ctx.setLocal(SETTLED, 'settled');
        return;
      }
      const usage = usageOf(ctx, ctx.local(METER), priced, ended);
      if (!usage) {
        // Nothing charged: the call's record is the end hook's, as for any request.
        const release = { accountId: auth.accountId, requestId: res.id };
        op = () => ledger.release(release);
        await op();
        ctx.setLocal(SETTLED, 'released');
        return;
      }
      // Chat web search is billed per call and not counted in usage: one search when none is reported.
      if (priced.searchPerCall && usage.usage !== undefined && usage.usage.webSearch === 0) {
        usage.usage.webSearch = 1;
      }
      const metered = costOf(ctx, priced, usage);
      const c = usage.atLeastMsat !== undefined ? raisedTo(metered, usage.atLeastMsat) : metered;
      const input = settleInput(ctx, auth, res.id, priced, usage, c, status);
      // The record goes with the charge (a retried settle carries it too); the end hook writes it only when the
      // ledger refuses the settle.
      const subject = input.auditRecord !== undefined ? ctx.local(AUDIT_SUBJECT) : undefined;
      if (subject !== undefined) subject.byLedger = true;
      op = () => ledger.settle(input);
      const r = await ledger.settle(input);
      ctx.setLocal(SETTLED, 'settled');
      if (!r.ok) {
        if (subject !== undefined) subject.byLedger = false;
        log.warn({ requestId: ctx.requestId, code: r.code }, 'settle refused by the ledger');
        return;
      }
      await recordCharged(ctx, auth.keyId, priced, usage, c, input, r);
    } catch (err) {
      // Left unsettled: the final hook tries once more; after that it is retried in the background
      // (idempotent by request id), so a store blip after the answer does not make the call free.
      ctx.setLocal(SETTLED, undefined);
      log.error({ err, requestId: ctx.requestId }, 'settlement failed');
      if (op) {
        if (final) retries.schedule(ctx.requestId, op);
        else ctx.setLocal(PENDING_OP, op);
      }
    }
  }

  /** The signed receipt of a charged call; undefined without the node's key (no network identity). */
  function receiptOf(ctx: RequestContext, charge: ChargeInfo): string | undefined {
    const identity = services.network?.identity;
    if (identity === undefined) return undefined;
    return signCallReceipt(identity.secretKey, {
      request_id: ctx.requestId,
      model: charge.model,
      usage:
        charge.usage !== undefined
          ? { ...charge.usage }
          : charge.units !== undefined
            ? { units: charge.units }
            : {},
      msats: charge.msats,
      balance_msats: charge.balanceAfterMsat ?? 0,
      time: Math.floor(Date.now() / 1000),
    });
  }

  return {
    name: 'settle',
    after: ['reserve'],
    // Shutdown: settlements the store refused earlier are tried again now, within the grace period.
    async close(graceMs) {
      if (retries.pending === 0) return;
      const left = await retries.drain(graceMs);
      if (left > 0)
        throw new Error(`${left} settlements not applied before shutdown; their reservations expire`);
    },
    onResponseHead(ctx, head) {
      // Cost known at admission (flat calls, audio, speech): in the head, so a streamed binary answer has it.
      // The provider that serves is known now: priced as finish() will charge it — at its own prices, not the
      // dearest provider's the reservation was sized for — so the header equals the charge.
      const priced = ctx.local(PRICED_CALL);
      if (priced?.exactMsat === undefined || head.status >= 400) return;
      const msat =
        pricing.mode === 'model' && services.providers.priced
          ? costOf(ctx, priced, { units: priced.units, estimated: false }).msat
          : priced.exactMsat;
      head.headers['X-Node-Cost'] = String(msat);
    },
    async onResponseEnd(ctx) {
      await finish(ctx, true);
      const charge = ctx.local(CHARGE);
      const block = ctx.local(COST_BLOCK);
      if (charge !== undefined) {
        // What was finally charged: a header when the head is still held, else (metered streams) an SSE
        // comment with the cost block just before `data: [DONE]`.
        if (!ctx.headWritten) ctx.response.headers['X-Node-Cost'] = String(charge.msats);
        else if (ctx.responseIsSse && ctx.holdSseDone && block !== undefined) {
          ctx.appendToBody(`: x-node-cost ${JSON.stringify(block)}\n\n`);
        }
        // `Prefer: receipt`: the charge signed with the node's key (core/receipts/): a header, or the stream's
        // comment after the cost block.
        const receipt = wantsReceipt(ctx.headers.prefer) ? receiptOf(ctx, charge) : undefined;
        if (receipt !== undefined) {
          if (!ctx.headWritten) {
            ctx.response.headers['X-Receipt'] = receipt;
            ctx.response.headers['Preference-Applied'] = 'receipt';
          } else if (ctx.responseIsSse && ctx.holdSseDone) ctx.appendToBody(`: x-receipt ${receipt}\n\n`);
        }
      }
      const state = ctx.local(METER);
      if (!state?.body) return;
      // The meter dropped the body's chunks; send it back, with the cost block when the call was charged —
      // except Anthropic answers, relayed byte for byte (their cost is in X-Node-Cost).
      const raw = Buffer.concat(state.body);
      state.body = undefined;
      const splice = block !== undefined && ctx.local(PRICED_CALL)?.endpoint !== 'messages';
      ctx.appendToBody((splice && spliceCostBlock(raw, block)) || raw);
    },
    async onError(ctx, err) {
      // The answer's status, for the audit record: the error's, unless the head already went out (a relayed
      // stream, not held) with the upstream's.
      const sent = ctx.headWritten;
      await finish(ctx, false, false, sent ? ctx.response.status : err.status);
    },
    onRequest(ctx) {
      // A call the provider gets is charged even when its client leaves (docs/pricing.md): the runner reads its
      // answer on — a stream for ABANDONED_DRAIN_MS, a whole answer within the upstream timeout.
      const priced = ctx.local(PRICED_CALL);
      if (ctx.local(RESERVATION) === undefined || priced === undefined || priced.endpoint === 'free') return;
      ctx.drainAfterAbortMs = ctx.stream
        ? services.config.abandonedDrainMs
        : services.config.upstreamTimeoutMs;
    },
    async onFinally(ctx) {
      if (ctx.local(SETTLED) !== undefined) return;
      const pending = ctx.local(PENDING_OP);
      // The whole answer was read (a client that left while it was read on) or not.
      if (!pending) return await finish(ctx, ctx.timings.upstreamEnd !== undefined, true);
      // Retry exactly what failed (the usage was measured then; the buffered body is gone now).
      try {
        await pending();
        ctx.setLocal(SETTLED, 'settled');
      } catch {
        retries.schedule(ctx.requestId, pending);
      }
    },
  };
};
