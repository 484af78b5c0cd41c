import { GatewayError } from '../errors.js';
import { inputTokensBound } from '../metering/input-bound.js';
import {
  callerMaxTokens,
  declaredTools,
  fileIdsOf,
  outputChoices,
  storedContext,
} from '../metering/request-bound.js';
import {
  type HostedTools,
  isTokenEndpoint,
  type PricedEndpoint,
  type Pricing,
  type ReservationInput,
} from '../pricing/types.js';
import type { ModelCatalog } from '../upstream/types.js';
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
  /**
   * The lines that continue a stored response (`previous_response_id`): the provider bills that response's whole
   * context as their input, which the line does not carry. Their bound is raised by it once the upload has read
   * the stored response (`withStoredContext`); not kept with the file's record.
   */
  continued?: ContinuedLine[];
}

/** A line continuing a stored response, with what its bound was priced from (to price it again with the context). */
export interface ContinuedLine {
  line: number;
  responseId: string;
  request: ReservationInput;
}

export interface BatchInputRef {
  line: number;
  id: string;
  kind: 'response' | 'file';
}

/** Referenced objects a file may name in all (each is one ownership read at upload). */
const MAX_REFS = 10_000;

function refuse(line: number, message: string): GatewayError {
  return new GatewayError('invalid_request', {
    message: `Batch input line ${line}: ${message}`,
    details: { line },
  });
}

/** A line refused with the code a synchronous call with the same body gets (the message names the line). */
function refuseAs(
  code: 'reference_not_bounded' | 'context_not_bounded',
  line: number,
  message: string,
): GatewayError {
  return new GatewayError(code, { message: `Batch input line ${line} ${message}`, details: { line } });
}

export interface CheckBatchInputOptions {
  pricing: Pricing;
  catalog: ModelCatalog;
  maxLines: number;
  /** Longest line accepted (MAX_BODY_BYTES): what bounds the memory the check holds. */
  maxLineBytes: number;
  /** The batch multiplier of a model (core/batches/batch-price.ts `batchFactor`). */
  factorOf: (model: string) => string;
  /** IMAGE_MAX_TOKENS: an image on a model whose image rule is not known, as a call's bound (default 3000). */
  imageMaxTokens?: number;
  /** REFERENCE_MAX_TOKENS: each file a line refers to by id or URL; unset: such a line is refused. */
  referenceMaxTokens?: number | undefined;
  /** STORED_CONTEXT_MAX_TOKENS: a conversation, stored prompt or untokened stored response; unset: refused. */
  storedContextMaxTokens?: number | undefined;
  /** WEB_SEARCH_CONTENT_TOKENS: the results each web search call adds to the input (default 0). */
  webSearchContentTokens?: number;
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
    let bound: { maxMsat: number; btcUsd: string | undefined; lowered: boolean };
    const tools = this.hostedTools(b, lineNo, model, endpoint);
    const request: ReservationInput = {
      model,
      endpoint,
      promptTokensBound: this.promptBound(b, raw.length, lineNo, model, endpoint, tools),
      hostedTools: tools,
      // The largest max-tokens field, every choice (`n`, `best_of`) and the tier asked for, as a call's bound.
      maxTokens: callerMaxTokens(b),
      choices: outputChoices(b, endpoint),
      serviceTier: typeof b.service_tier === 'string' ? b.service_tier : undefined,
      contextLength: opts.catalog.get(model)?.context_length,
    };
    try {
      bound = opts.pricing.reservation(request);
    } catch (err) {
      if (err instanceof GatewayError && err.status < 500) throw refuse(lineNo, err.message);
      throw err;
    }
    // A synchronous call like it is sent with the gateway's cap written in (./completion-cap.ts); a line is
    // forwarded as written, so it must carry its own.
    if (bound.lowered) {
      throw refuse(
        lineNo,
        `set body.max_tokens (or max_completion_tokens, max_output_tokens): the context length of model ${model} is unknown, so nothing else bounds what the provider may write`,
      );
    }
    const refs: BatchInputRef[] = [];
    const previous =
      typeof b.previous_response_id === 'string' && b.previous_response_id !== ''
        ? b.previous_response_id
        : undefined;
    if (previous !== undefined) refs.push({ line: lineNo, id: previous, kind: 'response' });
    // A Responses line continuing a stored response: its bound takes that context at upload (`withStoredContext`).
    const continued = endpoint === 'responses' ? previous : undefined;
    for (const id of fileIdsOf(b)) refs.push({ line: lineNo, id, kind: 'file' });
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
    if (continued !== undefined) {
      s.continued ??= [];
      s.continued.push({ line: lineNo, responseId: continued, request });
    }
    s.lines++;
    s.boundMsat += atBatchPrice(bound.maxMsat, s.factor);
  }

  /**
   * The server-side tools a line declares, bounded as a call's (core/metering/request-bound.ts `declaredTools`),
   * with what a call gets written into its body required of the line instead (a line is forwarded as written):
   * Responses `max_tool_calls`, Anthropic `max_uses`. Chat web search is refused: the provider bills it per call
   * without a count the batch output shows.
   */
  private hostedTools(
    b: Record<string, unknown>,
    lineNo: number,
    model: string,
    endpoint: PricedEndpoint,
  ): HostedTools | undefined {
    if (!isTokenEndpoint(endpoint)) return undefined;
    const declared = declaredTools(b, endpoint, model, 0);
    if (declared.searchPerCall) {
      throw refuse(
        lineNo,
        'chat web search (web_search_options, the web plugin, :online) is not served in batches: the provider bills its searches without a count the batch output shows',
      );
    }
    if (declared.limit !== undefined) {
      throw refuse(
        lineNo,
        `declares server-side tools without ${endpoint === 'messages' ? 'max_uses' : 'max_tool_calls'}: set it, since nothing else bounds the calls the provider may make`,
      );
    }
    return declared.hosted;
  }

  /**
   * A line's prompt bound by a synchronous call's rule (core/metering/input-bound.ts): its bytes, each image by
   * its model's image rule, each file by id or URL at REFERENCE_MAX_TOKENS, a conversation or stored prompt at
   * STORED_CONTEXT_MAX_TOKENS, each web search's results at WEB_SEARCH_CONTENT_TOKENS; without a setting it needs,
   * the line is refused, naming it. A continued response's context is added at upload (`withStoredContext`).
   */
  private promptBound(
    b: Record<string, unknown>,
    bytes: number,
    lineNo: number,
    model: string,
    endpoint: PricedEndpoint,
    tools: HostedTools | undefined,
  ): number {
    const opts = this.opts;
    const entry = opts.catalog.get(model);
    return inputTokensBound(
      {
        body: b,
        rawBytes: bytes,
        model,
        endpoint,
        imageRule: entry?.image_tokens,
        window: entry?.context_length,
        unseen: isTokenEndpoint(endpoint) ? storedContext(b, endpoint).unseen : undefined,
        webSearchCalls: tools?.tools.some((t) => t.tool === 'web_search') ? tools.calls : 0,
      },
      {
        imageMaxTokens: opts.imageMaxTokens ?? 3000,
        referenceMaxTokens: opts.referenceMaxTokens,
        storedContextMaxTokens: opts.storedContextMaxTokens,
        webSearchContentTokens: opts.webSearchContentTokens ?? 0,
      },
      (code, refersTo) => refuseAs(code, lineNo, `refers to ${refersTo}`),
    );
  }
}

/**
 * The bound of a checked file raised by the stored context its continued lines carry: for each, the continued
 * response's billed input + output (`tokensOf`: undefined when recorded without them, then STORED_CONTEXT_MAX_TOKENS
 * or refused `context_not_bounded`, naming the line), the line priced again with it at the batch price. Returns the
 * summary with its new bound (the same object when no line continues one).
 */
export function withStoredContext(
  summary: BatchInputSummary,
  pricing: Pricing,
  tokensOf: (line: ContinuedLine) => number | undefined,
  storedContextMaxTokens: number | undefined,
): BatchInputSummary {
  if (summary.continued === undefined || summary.continued.length === 0) return summary;
  let extra = 0;
  for (const c of summary.continued) {
    let tokens = tokensOf(c);
    if (tokens === undefined) {
      if (storedContextMaxTokens === undefined) {
        throw refuseAs(
          'context_not_bounded',
          c.line,
          'continues a stored response recorded without its tokens (STORED_CONTEXT_MAX_TOKENS is unset)',
        );
      }
      tokens = storedContextMaxTokens;
    }
    // Both prices at the same moment: the line's bound rises by exactly what its context adds.
    const before = pricing.reservation(c.request).maxMsat;
    const after = pricing.reservation({
      ...c.request,
      promptTokensBound: c.request.promptTokensBound + tokens,
    }).maxMsat;
    extra += Math.max(0, atBatchPrice(after, summary.factor) - atBatchPrice(before, summary.factor));
  }
  return { ...summary, boundMsat: summary.boundMsat + extra };
}
