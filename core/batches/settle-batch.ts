import { settlementAuditRecord } from '../audit/audit-log.js';
import type { Ledger, SettleResult } from '../ledger/types.js';
import type { Pricing } from '../pricing/types.js';
import { priceBatchLine } from './batch-price.js';
import type { BatchJob } from './types.js';

/**
 * Settles one ended batch from its output file: every answered line (a 2xx `response` with `usage`) is priced at
 * the batch price (core/batches/batch-price.ts); error lines and the error file are free. The total is charged
 * once, capped at the reservation (then, for a batch paid from a `sat` token, rounded up to whole sats), as ONE
 * `batch` transaction (its description names the batch id and line
 * counts); the rest of the reservation is released. Idempotent on the reservation id (= the job id): a second
 * pass after a crash replays the ledger's stored answer and charges nothing more.
 */

export interface BatchOutcome {
  status: string;
  answered: number;
  failed: number;
  lines: number;
  costMsat: number;
  promptTokens: number;
  completionTokens: number;
}

/** Reads the output JSONL and prices the answered lines (a whole file in memory: tests; the watcher streams). */
export function priceOutput(
  pricing: Pricing,
  job: BatchJob,
  output: Buffer | null,
): Omit<BatchOutcome, 'status' | 'failed'> {
  const p = new OutputPricer(pricing, job);
  const text = output?.toString('utf8') ?? '';
  for (const raw of text.split('\n')) p.line(raw);
  return p.result();
}

/**
 * Prices an output file line by line as it is read (the watcher streams it: only one line is held): every
 * answered line (a 2xx `response` with `usage`) at the batch price, at the BTC price of the batch's bound.
 */
export class OutputPricer {
  private answered = 0;
  private costMsat = 0;
  private promptTokens = 0;
  private completionTokens = 0;
  /** A line answered without a usable usage is charged its share of the bound: never free. */
  private readonly share: number;

  constructor(
    private readonly pricing: Pricing,
    private readonly job: BatchJob,
  ) {
    this.share = Math.ceil(job.reservedMsat / Math.max(1, job.lines));
  }

  line(raw: string): void {
    if (raw.trim() === '') return;
    let line: {
      response?: { status_code?: unknown; body?: { usage?: unknown; output?: unknown } | null } | null;
    };
    try {
      line = JSON.parse(raw) as typeof line;
    } catch {
      return;
    }
    const status = line.response?.status_code;
    if (typeof status !== 'number' || status < 200 || status >= 300) return;
    this.answered++;
    const job = this.job;
    const priced = priceBatchLine(this.pricing, {
      model: job.model,
      endpoint: job.endpoint,
      usage: line.response?.body?.usage,
      // Responses lines: their web searches (`web_search_call` output items) are priced per call.
      body: line.response?.body,
      factor: job.factor,
      btcUsd: job.btcUsd,
    });
    if (priced === undefined) {
      this.costMsat += this.share;
      return;
    }
    this.costMsat += priced.msat;
    this.promptTokens += priced.promptTokens;
    this.completionTokens += priced.completionTokens;
  }

  result(): Omit<BatchOutcome, 'status' | 'failed'> {
    return {
      answered: this.answered,
      lines: this.job.lines,
      costMsat: this.costMsat,
      promptTokens: this.promptTokens,
      completionTokens: this.completionTokens,
    };
  }
}

export function batchDescription(batchId: string, o: BatchOutcome): string {
  return `Batch ${batchId} ${o.status}: ${o.answered} of ${o.lines} lines answered, ${o.failed} failed`;
}

/** `msat` rounded up to whole units of `step` msats (a `sat` token: 1,000), once. */
function inWholeSteps(msat: number, step: number | undefined): number {
  return step === undefined || step <= 1 ? msat : Math.ceil(msat / step) * step;
}

export async function settleBatch(ledger: Ledger, job: BatchJob, o: BatchOutcome): Promise<SettleResult> {
  return ledger.settle({
    accountId: job.accountId,
    requestId: job.id,
    costMsat: inWholeSteps(Math.min(o.costMsat, job.reservedMsat), job.chargeStep),
    // Not counted in the key's tokens/hour window: a batch runs at the provider's own batch limits, and a large
    // one would lock the key's synchronous calls for the rest of the hour.
    promptTokens: 0,
    completionTokens: 0,
    model: job.model,
    description: batchDescription(job.batchId ?? job.id, o),
    estimated: false,
    transactionType: 'batch',
    // The settlement's audit record, written with its charge.
    auditRecord: settlementAuditRecord({
      atMs: Date.now(),
      requestId: job.id,
      keyId: job.keyId,
      endpoint: '/v1/batches',
      method: 'POST',
      status: 200,
    }),
  });
}
