/**
 * The streaming meter: watches an upstream SSE body chunk by chunk, synchronously, and
 * - records `usage` from the final event (chat/completions usage chunk, responses `response.completed`);
 * - drops the usage-only chunk (`"choices":[]` + usage) when the client did not ask for usage (the gateway
 *   asked the upstream for it on the client's behalf) — events may straddle chunk boundaries;
 * - holds back `data: [DONE]` so the end stage can write `: x-cashu <token>` before it (`finalBytes`);
 * - keeps the produced text (content, reasoning, tool-call arguments) so that a stream that ends without
 *   usage (client left, upstream died) is still charged for what was produced: `result()` counts it with
 *   gpt-tokenizer and marks it estimated.
 *
 * Why a hand scanner and not eventsource-parser: the meter must pass the upstream's bytes through
 * unchanged and cut exactly one event out of them, which needs byte offsets of event boundaries;
 * eventsource-parser hands out decoded event objects (re-serialising them would change the bytes and cost
 * more). The scanner only finds blank lines with the native `indexOf` and looks inside an event for a few
 * byte needles; JSON.parse runs only on events that carry a usage object. bench/micro/stream-meter.ts
 * measures it against eventsource-parser on the same stream. Lone-CR line endings (legal SSE, unused by
 * any provider) are not recognised as separators: such bytes pass through once MAX_TAIL is reached.
 */

import { countPromptTokens, countTokens } from './tokens.js';
import { normalizeUsage, type Usage } from './usage.js';

export type StreamEndpoint = 'chat' | 'completions' | 'responses';

export interface StreamMeterOptions {
  /** The client set `stream_options.include_usage`: pass the usage chunk on. */
  clientWantsUsage: boolean;
  model: string;
  /** Which API's events these are (decides where produced text is). Default 'chat'. */
  endpoint?: StreamEndpoint;
  /** The parsed request body: its prompt is counted when the stream ends without usage. */
  request?: unknown;
}

export interface MeterResult {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** True when counted by the gateway (no upstream usage). */
  estimated: boolean;
}

export interface StreamMeter {
  /** The chunk hook: a replacement, null to drop the chunk, undefined to pass it unchanged. */
  push(chunk: Uint8Array): Uint8Array | null | undefined;
  /** The upstream's usage, once seen. */
  readonly usage: Usage | undefined;
  /** A `data: [DONE]` event was seen and held back (it is in `finalBytes`). */
  readonly doneHeld: boolean;
  /** Bytes to write at the end: any unterminated last event, then `extra` (raw SSE text, e.g.
   *  ": x-cashu cashuB…\n\n"), then the held `data: [DONE]` event. Call once, after the last push. */
  finalBytes(extra?: string): Uint8Array;
  /** Usage from the upstream, or an estimate from the produced text (`estimated: true`). */
  result(): MeterResult;
}

const LF = 10;
const CR = 13;
/** An event longer than this without a blank line is passed on without framing (bounded memory). */
const MAX_TAIL = 1 << 20;
/** Produced text kept for the estimate; beyond it, bytes are counted at 1 token per 4 bytes. */
const MAX_TEXT = 8 << 20;
const DONE = /^data: ?\[DONE\][ \t]*(?:\r?\n|$)/;
const USAGE = Buffer.from('"usage"');
const TEXT_KEYS: Record<StreamEndpoint, Buffer[]> = {
  chat: ['"content"', '"reasoning_content"', '"reasoning"', '"arguments"', '"refusal"'].map((s) =>
    Buffer.from(s),
  ),
  completions: [Buffer.from('"text"')],
  responses: [Buffer.from('"delta"')],
};

type Action = 'keep' | 'drop' | 'done';

class SseStreamMeter implements StreamMeter {
  usage: Usage | undefined;
  doneHeld = false;
  private tail: Buffer | undefined;
  private doneBytes: Buffer | undefined;
  private readonly pieces: string[] = [];
  private textChars = 0;
  private overflowBytes = 0;
  private finished = false;
  private readonly keys: Buffer[];
  /** Per buffer, the next occurrence of each needle at or after the last search start (-1: none). Searches
   *  only move forward, so an event's search never rescans the rest of a chunk holding many events. */
  private memoBuf: Buffer | undefined;
  private readonly memo = new Map<Buffer, number>();

  constructor(private readonly opts: StreamMeterOptions) {
    this.keys = TEXT_KEYS[opts.endpoint ?? 'chat'];
  }

  push(chunk: Uint8Array): Uint8Array | null | undefined {
    if (chunk.byteLength === 0) return undefined;
    const view = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let buf = view;
    let modified = false;
    if (this.tail) {
      buf = Buffer.concat([this.tail, view]);
      this.tail = undefined;
      modified = true;
    }
    // Output = buf minus dropped ranges minus the unterminated tail. `kept` collects ranges only once a cut
    // happens; until then the output is the prefix [0, keptEnd).
    let kept: [number, number][] | undefined;
    let runStart = 0;
    let eventStart = 0;
    let lineStart = 0;
    for (let nl = buf.indexOf(LF, 0); nl !== -1; nl = buf.indexOf(LF, lineStart)) {
      const blank = nl === lineStart || (nl === lineStart + 1 && buf[lineStart] === CR);
      lineStart = nl + 1;
      if (!blank) continue;
      const action = this.onEvent(buf, eventStart, lineStart);
      if (action !== 'keep') {
        kept ??= [];
        if (eventStart > runStart) kept.push([runStart, eventStart]);
        runStart = lineStart;
        modified = true;
      }
      eventStart = lineStart;
    }
    let end = buf.length;
    if (eventStart < buf.length) {
      if (buf.length - eventStart > MAX_TAIL) {
        this.collectText(buf, eventStart, buf.length); // give up framing this one; still count its text
      } else {
        this.tail = Buffer.from(buf.subarray(eventStart)); // copy: the chunk's memory may be reused
        end = eventStart;
        modified = true;
      }
    }
    if (!modified) return undefined;
    if (!kept) return end === 0 ? null : buf.subarray(0, end);
    if (end > runStart) kept.push([runStart, end]);
    if (kept.length === 0) return null;
    if (kept.length === 1) return buf.subarray(kept[0]![0], kept[0]![1]);
    return Buffer.concat(kept.map(([a, b]) => buf.subarray(a, b)));
  }

  finalBytes(extra = ''): Uint8Array {
    if (this.finished) throw new Error('finalBytes() called twice');
    this.finished = true;
    let tail: Buffer = Buffer.alloc(0);
    if (this.tail) {
      const t = this.tail;
      this.tail = undefined;
      // An unterminated last event: meter it like any other, then terminate it so `extra` stays separate.
      if (this.onEvent(t, 0, t.length) === 'keep') {
        tail = t[t.length - 1] === LF ? t : Buffer.concat([t, Buffer.from('\n\n')]);
      }
    }
    const parts: Buffer[] = [tail];
    if (extra) parts.push(Buffer.from(extra));
    if (this.doneBytes) parts.push(this.doneBytes);
    return Buffer.concat(parts);
  }

  result(): MeterResult {
    if (this.usage) return { ...this.usage, estimated: false };
    const promptTokens = countPromptTokens(this.opts.request, this.opts.model);
    const completionTokens =
      countTokens(this.producedText(), this.opts.model) + Math.ceil(this.overflowBytes / 4);
    return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens, estimated: true };
  }

  private producedText(): string {
    const raw = this.pieces.join('');
    try {
      return JSON.parse(`"${raw}"`) as string; // the pieces are JSON string bodies, escapes intact
    } catch {
      return raw;
    }
  }

  /** Classifies the complete event buf[s, e) (its terminating blank line included). */
  private onEvent(buf: Buffer, s: number, e: number): Action {
    const len = e - s;
    if (len <= 24 && buf[s] === 0x64 /* d */ && DONE.test(buf.toString('latin1', s, e))) {
      this.doneHeld = true;
      this.doneBytes = Buffer.from(buf.subarray(s, e));
      return 'done';
    }
    const u = this.indexWithin(buf, USAGE, s, e);
    if (u !== -1 && nextValueStarts(buf, u + USAGE.length, e, 0x7b /* { */) !== -1) {
      const action = this.onUsageEvent(buf.toString('utf8', s, e));
      if (action === 'drop') return action;
    }
    this.collectText(buf, s, e);
    return 'keep';
  }

  private onUsageEvent(text: string): Action {
    let data = '';
    for (const line of text.split(/\r?\n/)) {
      if (line.startsWith('data:')) data += (data ? '\n' : '') + line.slice(line[5] === ' ' ? 6 : 5);
    }
    let obj: Record<string, unknown>;
    try {
      obj = JSON.parse(data) as Record<string, unknown>;
    } catch {
      return 'keep';
    }
    const usage =
      normalizeUsage(obj.usage) ??
      normalizeUsage((obj.response as Record<string, unknown> | undefined)?.usage);
    if (!usage) return 'keep';
    this.usage = usage;
    const usageOnly = Array.isArray(obj.choices) && obj.choices.length === 0;
    return usageOnly && !this.opts.clientWantsUsage ? 'drop' : 'keep';
  }

  /** Index of `needle` in buf[from, end), or -1. */
  private indexWithin(buf: Buffer, needle: Buffer, from: number, end: number): number {
    if (from >= end) return -1;
    if (this.memoBuf !== buf) {
      this.memoBuf = buf;
      this.memo.clear();
    }
    let i = this.memo.get(needle);
    if (i === undefined || (i !== -1 && i < from)) {
      i = buf.indexOf(needle, from);
      this.memo.set(needle, i);
    }
    return i !== -1 && i + needle.length <= end ? i : -1;
  }

  /** Keeps the JSON string bodies of the produced-text keys found in buf[s, e). */
  private collectText(buf: Buffer, s: number, e: number): void {
    for (const key of this.keys) {
      let from = s;
      for (
        let at = this.indexWithin(buf, key, from, e);
        at !== -1;
        at = this.indexWithin(buf, key, from, e)
      ) {
        from = at + key.length;
        const open = nextValueStarts(buf, from, e, 0x22 /* " */);
        if (open === -1) continue;
        const close = stringEnd(buf, open + 1, e);
        if (close === -1) continue;
        from = close + 1;
        if (this.textChars < MAX_TEXT) {
          const piece = buf.toString('utf8', open + 1, close);
          this.pieces.push(piece);
          this.textChars += piece.length;
        } else {
          this.overflowBytes += close - open - 1;
        }
      }
    }
  }
}

/** After a key at `i`: skips `\s*:\s*` and returns the index of the value's first byte if it is `first`. */
function nextValueStarts(buf: Buffer, i: number, end: number, first: number): number {
  while (i < end && isSpace(buf[i]!)) i++;
  if (buf[i] !== 0x3a /* : */) return -1;
  i++;
  while (i < end && isSpace(buf[i]!)) i++;
  return i < end && buf[i] === first ? i : -1;
}

/** Index of the closing quote of a JSON string whose body starts at `i`, or -1. */
function stringEnd(buf: Buffer, i: number, end: number): number {
  for (; i < end; i++) {
    const b = buf[i];
    if (b === 0x5c /* \ */) i++;
    else if (b === 0x22) return i;
    else if (b === LF) return -1;
  }
  return -1;
}

function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x09;
}

export function createStreamMeter(opts: StreamMeterOptions): StreamMeter {
  return new SseStreamMeter(opts);
}
