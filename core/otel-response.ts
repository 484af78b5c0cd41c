import { StringDecoder } from 'node:string_decoder';

/**
 * The answer's `gen_ai.response.id` and `gen_ai.response.finish_reasons` (OpenTelemetry GenAI semantic
 * conventions), read from the provider's bytes as they pass (the `gateway:response:chunk` channel) for a sampled
 * call only: loaded with core/otel-tracing.ts, so with tracing off none of this runs.
 *
 * - A JSON answer is kept (a copy, up to MAX_JSON_BYTES) and parsed once at the end: Chat Completions and
 *   Completions `id` and each choice's `finish_reason` (in choice order); Responses `id` and, once it ended, the
 *   `incomplete_details.reason` or else its `status`; Messages `id` and `stop_reason`.
 * - A stream is read line by line and only the events that carry them are parsed: the first chunk (its `id`) and
 *   those whose `finish_reason` is set (chat, completions); `response.created` and the terminal events
 *   (Responses); `message_start` and `message_delta` (Messages). A line longer than MAX_LINE_CHARS is skipped.
 *
 * The values are the provider's own words (`stop`, `length`, `tool_calls`, `end_turn`, `max_output_tokens`…), as
 * the conventions ask.
 */

export type AnswerApi = 'chat' | 'completions' | 'responses' | 'messages';

const API_OF: Record<string, AnswerApi> = {
  '/v1/chat/completions': 'chat',
  '/v1/completions': 'completions',
  '/v1/responses': 'responses',
  '/v1/messages': 'messages',
};

/** The API whose answers carry an id and finish reasons, by request path (undefined: not read). */
export function answerApiOf(path: string): AnswerApi | undefined {
  return API_OF[path];
}

export interface AnswerFacts {
  id?: string;
  finishReasons?: string[];
}

const MAX_JSON_BYTES = 4 << 20;
const MAX_LINE_CHARS = 4 << 20;
const ENDED = new Set(['completed', 'incomplete', 'failed', 'cancelled']);
const FINISH_SET = /"finish_reason"\s*:\s*"/;
const RESPONSES_EVENT = /"type"\s*:\s*"response\.(created|completed|incomplete|failed|cancelled)"/;
const MESSAGES_EVENT = /"type"\s*:\s*"message_(start|delta)"/;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

export class AnswerReader {
  private readonly facts: AnswerFacts = {};
  private json: Buffer[] | undefined;
  private jsonBytes = 0;
  private decoder: StringDecoder | undefined;
  /** The start of a line whose end has not come yet. */
  private pending: string[] = [];
  private pendingChars = 0;
  /** The pending line passed MAX_LINE_CHARS: skipped up to its end. */
  private overlong = false;
  /** Chat and completions: the first event was read for the answer's id. */
  private idRead = false;
  private readonly choices = new Map<number, string>();

  constructor(
    private readonly api: AnswerApi,
    private readonly sse: boolean,
  ) {}

  /** One chunk of the provider's answer, as it came (copied when kept: its memory may be reused). */
  push(chunk: Uint8Array): void {
    if (!this.sse) {
      if (this.jsonBytes + chunk.byteLength > MAX_JSON_BYTES) {
        this.json = undefined;
        this.jsonBytes = Number.POSITIVE_INFINITY;
        return;
      }
      this.json ??= [];
      this.json.push(Buffer.from(chunk));
      this.jsonBytes += chunk.byteLength;
      return;
    }
    this.decoder ??= new StringDecoder('utf8');
    const text = this.decoder.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      if (this.pending.length > 0) {
        // The end of a line begun in earlier chunks (each piece searched once: no quadratic rescans).
        if (!this.overlong) {
          this.pending.push(text.slice(0, nl));
          const line = this.pending.join('');
          this.onLine(line, 0, line.length);
        }
        this.pending = [];
        this.pendingChars = 0;
        this.overlong = false;
      } else this.onLine(text, start, nl);
      start = nl + 1;
    }
    if (start < text.length) {
      this.pendingChars += text.length - start;
      if (this.pendingChars > MAX_LINE_CHARS) {
        this.overlong = true;
        this.pending = [''];
      } else if (!this.overlong) this.pending.push(text.slice(start));
    }
  }

  /** What was found, once the answer ended. */
  result(): AnswerFacts {
    if (this.sse) {
      if (this.pending.length > 0 && !this.overlong) {
        const line = this.pending.join('');
        this.onLine(line, 0, line.length);
      }
      this.pending = [];
    } else if (this.json !== undefined) {
      try {
        this.fromBody(JSON.parse(Buffer.concat(this.json).toString('utf8')));
      } catch {
        // Not JSON (an error page, a cut body): nothing to say.
      }
      this.json = undefined;
    }
    if (this.choices.size > 0) {
      this.facts.finishReasons = [...this.choices.entries()].sort((a, b) => a[0] - b[0]).map(([, r]) => r);
    }
    return this.facts;
  }

  private fromBody(body: unknown): void {
    if (!isObject(body)) return;
    if (typeof body.id === 'string') this.facts.id = body.id;
    switch (this.api) {
      case 'chat':
      case 'completions':
        this.fromChoices(body.choices);
        return;
      case 'responses':
        this.fromResponse(body);
        return;
      case 'messages':
        if (typeof body.stop_reason === 'string') this.facts.finishReasons = [body.stop_reason];
        return;
    }
  }

  private fromChoices(choices: unknown): void {
    if (!Array.isArray(choices)) return;
    for (const [i, c] of choices.entries()) {
      if (!isObject(c) || typeof c.finish_reason !== 'string') continue;
      this.choices.set(typeof c.index === 'number' ? c.index : i, c.finish_reason);
    }
  }

  private fromResponse(r: Json): void {
    if (typeof r.id === 'string') this.facts.id = r.id;
    const status = r.status;
    if (typeof status !== 'string' || !ENDED.has(status)) return;
    const reason = isObject(r.incomplete_details) ? r.incomplete_details.reason : undefined;
    this.facts.finishReasons = [typeof reason === 'string' ? reason : status];
  }

  private onLine(text: string, start: number, end: number): void {
    if (!text.startsWith('data:', start)) return;
    const line = text.slice(start + (text[start + 5] === ' ' ? 6 : 5), end);
    switch (this.api) {
      case 'chat':
      case 'completions': {
        const first = !this.idRead;
        if (!first && !FINISH_SET.test(line)) return;
        this.idRead = true;
        const ev = parse(line);
        if (ev === undefined) return;
        if (first && typeof ev.id === 'string') this.facts.id = ev.id;
        this.fromChoices(ev.choices);
        return;
      }
      case 'responses': {
        if (!RESPONSES_EVENT.test(line)) return;
        const ev = parse(line);
        if (ev !== undefined && isObject(ev.response)) this.fromResponse(ev.response);
        return;
      }
      case 'messages': {
        const m = MESSAGES_EVENT.exec(line);
        if (m === null) return;
        const ev = parse(line);
        if (ev === undefined) return;
        if (m[1] === 'start' && isObject(ev.message) && typeof ev.message.id === 'string') {
          this.facts.id = ev.message.id;
        } else if (isObject(ev.delta) && typeof ev.delta.stop_reason === 'string') {
          this.facts.finishReasons = [ev.delta.stop_reason];
        }
        return;
      }
    }
  }
}

function parse(line: string): Json | undefined {
  try {
    const v = JSON.parse(line) as unknown;
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}
