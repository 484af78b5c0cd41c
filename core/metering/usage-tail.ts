import { type Usage, usageFromOpenAi } from './usage.js';

/**
 * The usage of an OpenAI-shaped JSON body (chat completions, completions, embeddings) read from its tail,
 * without parsing the whole body: providers write the top-level `usage` (and `service_tier`) after `choices`,
 * so the settle step reads only the last TAIL_BYTES and parses the `usage` object alone. This is the paid
 * path's metering on every non-streamed call (docs/benchmarks.md, "The paid-path cuts").
 *
 * Exact or nothing: `null` means "not decidable from the tail" and the caller parses the whole body, as
 * before. A key found here is a top-level key for certain: in valid JSON the bytes `"usage"` followed by `:`
 * can only be an object key (a quote inside a string is always escaped), and one string-aware scan from the
 * key to the body's end proves the key's object is the root (its closing brace is the body's last byte). A
 * `usage` nested deeper, one before the tail, or a body that does not end as an object gives `null`.
 */
export const TAIL_BYTES = 16 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

const isSpace = (b: number | undefined): boolean => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/** Index just past the string whose opening quote is at `i`, or -1 when it does not close before `end`. */
function skipString(body: Buffer, i: number, end: number): number {
  for (let j = i + 1; j < end; j++) {
    const b = body[j];
    if (b === BACKSLASH) j++;
    else if (b === QUOTE) return j + 1;
  }
  return -1;
}

/**
 * Whether the bytes from `from` (outside any string, at the root object's top level) to the root's closing
 * brace at `last` stay at or above the top level: the depth first drops below it at `last` exactly.
 */
function atTopLevel(body: Buffer, from: number, last: number): boolean {
  let depth = 0;
  for (let i = from; i < last; i++) {
    const b = body[i];
    if (b === QUOTE) {
      const next = skipString(body, i, last);
      if (next < 0) return false;
      i = next - 1;
    } else if (b === OPEN_BRACE || b === OPEN_BRACKET) depth++;
    else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
      if (--depth < 0) return false;
    }
  }
  return depth === 0;
}

/**
 * The raw value of the root object's last top-level `"key"` within the tail: `[start, stop)`, or null when the
 * key is absent from the tail (`absent`) or not provably top-level (`unknown`).
 */
const USAGE = Buffer.from('"usage"');
const SERVICE_TIER = Buffer.from('"service_tier"');

function topLevelValue(
  body: Buffer,
  key: Buffer,
  tailStart: number,
  last: number,
): { start: number; stop: number } | 'absent' | 'unknown' {
  const at = body.lastIndexOf(key, last);
  if (at < tailStart) return at < 0 ? 'absent' : 'unknown';
  let i = at + key.length;
  while (isSpace(body[i])) i++;
  if (body[i] !== COLON) return 'unknown';
  i++;
  while (isSpace(body[i])) i++;
  const start = i;
  // The value: a string, an object or array (matched brackets, strings skipped), or a bare literal/number.
  if (body[i] === QUOTE) {
    i = skipString(body, i, last);
    if (i < 0) return 'unknown';
  } else if (body[i] === OPEN_BRACE || body[i] === OPEN_BRACKET) {
    let depth = 0;
    for (; i < last; i++) {
      const b = body[i];
      if (b === QUOTE) {
        const next = skipString(body, i, last);
        if (next < 0) return 'unknown';
        i = next - 1;
      } else if (b === OPEN_BRACE || b === OPEN_BRACKET) depth++;
      else if ((b === CLOSE_BRACE || b === CLOSE_BRACKET) && --depth === 0) break;
    }
    if (i >= last) return 'unknown';
    i++;
  } else {
    while (i < last && body[i] !== 0x2c && body[i] !== CLOSE_BRACE && !isSpace(body[i])) i++;
  }
  const stop = i;
  return atTopLevel(body, stop, last) ? { start, stop } : 'unknown';
}

/** See the module comment: the usage read from the tail, or null when the whole body must be parsed. */
export function openAiUsageFromTail(body: Buffer): Usage | null {
  let last = body.length - 1;
  while (last >= 0 && isSpace(body[last])) last--;
  let first = 0;
  while (first < last && isSpace(body[first])) first++;
  if (last <= first || body[first] !== OPEN_BRACE || body[last] !== CLOSE_BRACE) return null;
  const tailStart = Math.max(first + 1, body.length - TAIL_BYTES);
  // No usage in the body at all: the caller estimates from the parsed body's text.
  const usage = topLevelValue(body, USAGE, tailStart, last);
  if (typeof usage !== 'object') return null;
  const tier = topLevelValue(body, SERVICE_TIER, tailStart, last);
  if (tier === 'unknown') return null;
  try {
    const u = JSON.parse(body.toString('utf8', usage.start, usage.stop)) as unknown;
    const t =
      typeof tier === 'object'
        ? (JSON.parse(body.toString('utf8', tier.start, tier.stop)) as unknown)
        : undefined;
    // A usage that is present but unreadable (no prompt_tokens): the caller parses and estimates.
    return usageFromOpenAi(u, t) ?? null;
  } catch {
    return null;
  }
}
