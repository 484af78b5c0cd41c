import { GatewayError } from '../errors.js';
import { promptTokensUpperBound } from '../metering/prompt-bound.js';
import { callerMaxTokens, outputChoices } from '../metering/request-bound.js';
import type { PricedEndpoint, Pricing } from '../pricing/types.js';
import type { ModelCatalog } from '../upstream/model-catalog.js';
import { atBatchPrice } from './batch-price.js';

/**
 * Checks a Batch API input file (JSONL) as it streams through, before anything reaches the provider, and computes
 * its bound: the sum of each line's reservation bound (the same bound a synchronous call reserves: prompt bytes +
 * max_tokens, or the model's maximum) at the batch price. One URL and one model per file (as the providers
 * require), a priced URL (chat, completions, embeddings, responses), a known model, at most BATCH_MAX_LINES lines,
 * each at most MAX_BODY_BYTES (a line is one request body). A refusal names the line (1-based) and nothing is
 * relayed. Only the line being read is held, whatever the file's size.
 */

export const BATCH_URLS: Readonly<Record<string, PricedEndpoint>> = {
  '/v1/chat/completions': 'chat',
  '/v1/completions': 'completions',
  '/v1/embeddings': 'embeddings',
  '/v1/responses': 'responses',
};

/** The priced summary of a checked input file, recorded with its ownership (meta). */
export interface BatchInputSummary {
  url: string;
  endpoint: PricedEndpoint;
  model: string;
  lines: number;
  factor: string;
  /** Σ of the lines' bounds at the batch price (msat): what a batch of this file reserves. */
  boundMsat: number;
  btcUsd: string | undefined;
  /**
   * Stored objects the lines name (`previous_response_id`, `file_id` anywhere in a body): each must be the
   * uploading key's (checked before the file is relayed; not kept with the file's record).
   */
  refs?: BatchInputRef[];
}

export interface BatchInputRef {
  line: number;
  id: string;
  kind: 'response' | 'file';
}

/** Referenced objects a file may name in all (each is one ownership read at upload). */
const MAX_REFS = 10_000;

/** `file_id` strings anywhere in `v` (content parts, tool resources), depth-bounded. */
function fileIds(v: unknown, out: string[], depth = 0): void {
  if (depth > 32 || v === null || typeof v !== 'object') return;
  if (Array.isArray(v)) {
    for (const x of v) fileIds(x, out, depth + 1);
    return;
  }
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (k === 'file_id' && typeof x === 'string' && x !== '') out.push(x);
    else fileIds(x, out, depth + 1);
  }
}

function refuse(line: number, message: string): GatewayError {
  return new GatewayError('invalid_request', {
    message: `Batch input line ${line}: ${message}`,
    details: { line },
  });
}

export interface CheckBatchInputOptions {
  pricing: Pricing;
  catalog: ModelCatalog;
  maxLines: number;
  /** Longest line accepted (MAX_BODY_BYTES): what bounds the memory the check holds. */
  maxLineBytes: number;
  /** The batch multiplier of a model (core/batches/batch-price.ts `batchFactor`). */
  factorOf: (model: string) => string;
}

/** Fed the file's bytes in order (`push`, then `end`); throws the refusal of the first bad line. */
export class BatchInputChecker {
  private summary: BatchInputSummary | undefined;
  private readonly ids = new Set<string>();
  private lineNo = 0;
  /** The start of a line the chunks so far did not end. */
  private partial: Buffer[] = [];
  private partialBytes = 0;

  constructor(private readonly opts: CheckBatchInputOptions) {}

  /** Checks every line `chunk` ends. */
  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) break;
      this.check(this.take(chunk.subarray(start, nl)));
      start = nl + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.bounded(this.partialBytes + rest.length);
      this.partial.push(rest);
      this.partialBytes += rest.length;
    }
  }

  /** Checks the last line (when the file does not end with a newline); the file's summary. */
  end(): BatchInputSummary {
    if (this.partialBytes > 0) this.check(this.take(Buffer.alloc(0)));
    if (this.summary === undefined) throw refuse(1, 'the file has no request');
    return this.summary;
  }

  /** The line that ends with `tail`. */
  private take(tail: Buffer): Buffer {
    this.bounded(this.partialBytes + tail.length);
    if (this.partialBytes === 0) return tail;
    const line = Buffer.concat([...this.partial, tail], this.partialBytes + tail.length);
    this.partial = [];
    this.partialBytes = 0;
    return line;
  }

  private bounded(lineBytes: number): void {
    if (lineBytes > this.opts.maxLineBytes) {
      throw refuse(this.lineNo + 1, `longer than ${this.opts.maxLineBytes} bytes (MAX_BODY_BYTES)`);
    }
  }

  private check(raw: Buffer): void {
    const opts = this.opts;
    const lineNo = ++this.lineNo;
    const text = raw.toString('utf8').trim();
    if (text === '') return;
    if (this.ids.size >= opts.maxLines) {
      throw refuse(lineNo, `more than ${opts.maxLines} requests (BATCH_MAX_LINES)`);
    }
    let line: unknown;
    try {
      line = JSON.parse(text);
    } catch {
      throw refuse(lineNo, 'not valid JSON');
    }
    if (line === null || typeof line !== 'object' || Array.isArray(line))
      throw refuse(lineNo, 'not an object');
    const { custom_id, method, url, body } = line as Record<string, unknown>;
    if (typeof custom_id !== 'string' || custom_id === '') throw refuse(lineNo, 'custom_id must be a string');
    if (this.ids.has(custom_id)) throw refuse(lineNo, `custom_id ${custom_id} repeats an earlier line`);
    if (method !== 'POST') throw refuse(lineNo, 'method must be POST');
    const endpoint = typeof url === 'string' ? BATCH_URLS[url] : undefined;
    if (endpoint === undefined) {
      throw refuse(lineNo, `url must be one of ${Object.keys(BATCH_URLS).join(', ')}`);
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      throw refuse(lineNo, 'body must be an object');
    const b = body as Record<string, unknown>;
    if (typeof b.model !== 'string' || b.model === '') throw refuse(lineNo, 'body.model is required');
    const model = b.model;
    const summary = this.summary;
    if (summary !== undefined && (summary.url !== url || summary.model !== model)) {
      throw refuse(lineNo, 'every line of a batch must use the same url and model as line 1');
    }
    if (opts.catalog.list().length > 0 && opts.catalog.get(model) === undefined) {
      throw refuse(lineNo, `unknown model ${model}`);
    }
    let bound: { maxMsat: number; btcUsd: string | undefined };
    try {
      bound = opts.pricing.reservation({
        model,
        endpoint,
        promptTokensBound: promptTokensUpperBound(b, raw.length),
        // The largest max-tokens field, every choice (`n`, `best_of`) and the tier asked for, as a call's bound.
        maxTokens: callerMaxTokens(b),
        choices: outputChoices(b, endpoint),
        serviceTier: typeof b.service_tier === 'string' ? b.service_tier : undefined,
        contextLength: opts.catalog.get(model)?.context_length,
      });
    } catch (err) {
      if (err instanceof GatewayError && err.status < 500) throw refuse(lineNo, err.message);
      throw err;
    }
    const refs: BatchInputRef[] = [];
    if (typeof b.previous_response_id === 'string' && b.previous_response_id !== '') {
      refs.push({ line: lineNo, id: b.previous_response_id, kind: 'response' });
    }
    const files: string[] = [];
    fileIds(b, files);
    for (const id of files) refs.push({ line: lineNo, id, kind: 'file' });
    this.ids.add(custom_id);
    this.summary ??= {
      url: url as string,
      endpoint,
      model,
      lines: 0,
      factor: opts.factorOf(model),
      boundMsat: 0,
      btcUsd: bound.btcUsd,
    };
    const s = this.summary;
    if (refs.length > 0) {
      s.refs ??= [];
      if (s.refs.length + refs.length > MAX_REFS) {
        throw refuse(lineNo, `more than ${MAX_REFS} referenced responses and files in one file`);
      }
      s.refs.push(...refs);
    }
    s.lines++;
    s.boundMsat += atBatchPrice(bound.maxMsat, s.factor);
  }
}
