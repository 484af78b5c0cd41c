import type { RawResponse } from './raw-http.js';
import type { RenderedRequest } from './requests.js';

/**
 * What must hold for EVERY answer, whatever was sent: the socket is answered or closed within the bound
 * (never held), an answer is a well-formed HTTP response, every error is the error envelope, the only 5xx are
 * the ones a dependency causes (upstream, store, mint), and no secret comes back. Returns the violations
 * (empty when the answer is fine).
 */

/** 5xx codes a failing dependency may cause; any other 5xx (notably 500 internal_error) is a bug. */
const DEPENDENCY_5XX = new Set([
  'upstream_error',
  'upstream_timeout',
  'batch_outcome_unknown',
  'store_unavailable',
  'mint_unavailable',
  'service_unavailable',
  'price_unavailable',
  'not_implemented',
]);

export interface Secrets {
  /** Values that must never appear in any answer or log. */
  never: string[];
}

export function checkAnswer(req: RenderedRequest, res: RawResponse, secrets: Secrets): string[] {
  const v: string[] = [];
  if (res.timedOut) v.push(`no answer and no close within the bound (${Math.round(res.elapsedMs)} ms)`);
  if (res.status === 0) {
    if (req.expectAnswer && !res.timedOut) v.push('the connection closed without an HTTP answer');
  } else {
    if (res.status < 100 || res.status > 599) v.push(`status ${res.status} out of range`);
    const isHead = req.bytes.subarray(0, 5).toString('latin1') === 'HEAD ';
    const ct = res.headers['content-type'] ?? '';
    if (res.status >= 400 && !isHead) {
      if (!ct.startsWith('application/json')) {
        v.push(`error ${res.status} with content-type "${ct}" (expected the JSON error envelope)`);
      } else {
        const err = envelope(res.body);
        if (err === undefined)
          v.push(`error ${res.status} without a well-formed envelope: ${preview(res.body)}`);
        else if (res.status >= 500 && !DEPENDENCY_5XX.has(err.code ?? '')) {
          v.push(`${res.status} ${err.code ?? '(no code)'}: a gateway fault, not a dependency's`);
        }
      }
    }
  }
  const text = res.raw.toString('latin1');
  for (const s of secrets.never)
    if (s.length >= 8 && text.includes(s)) v.push('a configured secret was echoed');
  if (res.status >= 400) {
    for (const c of req.credentials)
      if (c.length >= 8 && text.includes(c)) v.push('the request credential was echoed in an error');
  }
  return v;
}

interface ErrorFields {
  code?: string;
  message?: string;
}

/** The `error` object of a spec envelope `{error: {message, type, code?, details?}}`, else undefined. */
function envelope(body: Buffer): ErrorFields | undefined {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: unknown };
    const e = parsed.error as { message?: unknown; type?: unknown; code?: unknown } | undefined;
    if (e === undefined || e === null || typeof e !== 'object') return undefined;
    if (typeof e.message !== 'string' || e.message === '') return undefined;
    if (e.code !== undefined && typeof e.code !== 'string') return undefined;
    return { code: e.code as string | undefined, message: e.message };
  } catch {
    return undefined;
  }
}

function preview(b: Buffer): string {
  const s = b.toString('utf8', 0, Math.min(b.length, 200));
  return JSON.stringify(s);
}

/** Secrets (and the run's credentials) found in the gateway's own log output. */
export function leakedInLogs(logs: string, values: string[]): string[] {
  return values.filter((s) => s.length >= 8 && logs.includes(s));
}
