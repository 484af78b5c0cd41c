import type { UpstreamResponse, UpstreamSink } from '../upstream/upstream-response.js';

/**
 * The answer of another node paid from the operator's wallet (`"payment": "cashu"` or `"cashu-balance"`), as this
 * gateway relays it: without what is the operator's business — the node's change (`X-Cashu` head, `: x-cashu`
 * SSE comment), change it could not make (`X-Cashu-Change`, `: x-cashu-change`) and its own cost (`X-Node-Cost`
 * head, the `x-node-cost` block of a JSON answer, `: x-node-cost` SSE comment) — which are read on the way and
 * reported once when the answer ends, whichever way it ends. The user sees only this gateway's own cost.
 */

/** What the node's answer said about the payment, reported once at its end. */
export interface NodeAnswerEnd {
  /** The change token (head or SSE comment). Bearer money: never log it. */
  change: string | undefined;
  /** msats the node could not make change for (`X-Cashu-Change: pending; msat=…`), or undefined. */
  pendingMsat: number | undefined;
  /** The node's own cost of the call as it states it (msats), or undefined when it stated none. */
  costMsat: number | undefined;
  /** The body ended normally (false: aborted or broken). */
  complete: boolean;
}

/** The node's headers this gateway does not pass on. */
const NODE_HEADERS = new Set(['x-cashu', 'x-cashu-change', 'x-node-cost']);

const COST_COMMENT = Buffer.from(': x-node-cost ');
const CHANGE_COMMENT = Buffer.from(': x-cashu ');
const CHANGE_PENDING_COMMENT = Buffer.from(': x-cashu-change ');
const LF = 0x0a;
const COLON = 0x3a;

function first(h: Readonly<Record<string, string | string[]>> | undefined, name: string): string | undefined {
  const v = h?.[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The change token in an answer's head (`X-Cashu`), or undefined. */
export function changeHeader(h: Readonly<Record<string, string | string[]>> | undefined): string | undefined {
  const s = first(h, 'x-cashu');
  return typeof s === 'string' && s.startsWith('cashu') ? s.trim() : undefined;
}

/** `X-Cashu-Change: pending; msat=N` → N (0 when it names no amount); undefined without the header. */
export function pendingHeader(
  h: Readonly<Record<string, string | string[]>> | undefined,
): number | undefined {
  const s = first(h, 'x-cashu-change');
  if (typeof s !== 'string') return undefined;
  const m = /msat=(\d+)/.exec(s);
  return m ? Number(m[1]) : 0;
}

/** `X-Node-Cost: N` (msats) → N. */
function costHeader(h: Readonly<Record<string, string | string[]>>): number | undefined {
  const s = first(h, 'x-node-cost');
  return typeof s === 'string' && /^\d{1,15}$/.test(s.trim()) ? Number(s.trim()) : undefined;
}

/** The `msats` of a cost block (`{"msats": N, …}`), or undefined. */
function blockMsat(block: unknown): number | undefined {
  const m = (block as { msats?: unknown } | null)?.msats;
  return typeof m === 'number' && Number.isSafeInteger(m) && m >= 0 ? m : undefined;
}

/** A JSON answer without the node's `x-node-cost` block, and that block's msats (a body that is not a JSON
 *  object passes unchanged). */
function withoutNodeCost(body: Buffer): { body: Buffer; costMsat: number | undefined } {
  try {
    const doc = JSON.parse(body.toString('utf8')) as unknown;
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc) || !('x-node-cost' in doc)) {
      return { body, costMsat: undefined };
    }
    const costMsat = blockMsat((doc as Record<string, unknown>)['x-node-cost']);
    delete (doc as Record<string, unknown>)['x-node-cost'];
    return { body: Buffer.from(JSON.stringify(doc)), costMsat };
  } catch {
    return { body, costMsat: undefined };
  }
}

/**
 * `up` as relayed: the node's headers and cost block or comments taken out; `onEnd` called exactly once, when the
 * body ends, fails, or the answer is aborted. A JSON answer is held whole to take its cost block out (the meter
 * holds such an answer anyway).
 */
export function nodeAnswer(up: UpstreamResponse, onEnd: (end: NodeAnswerEnd) => void): UpstreamResponse {
  const ct = up.headers['content-type'];
  const sse = typeof ct === 'string' && ct.includes('text/event-stream');
  const json = !sse && typeof ct === 'string' && /\bjson\b/i.test(ct);
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(up.headers)) {
    if (k === 'content-length' && json) continue; // the node's cost block is taken out of the body
    if (!NODE_HEADERS.has(k)) headers[k] = v;
  }
  const headChange = changeHeader(up.headers);
  const headPending = pendingHeader(up.headers);
  let costMsat = costHeader(up.headers);
  const filter = sse ? new ChangeCommentFilter() : undefined;
  const held: Buffer[] | undefined = json ? [] : undefined;
  let ended = false;
  const end = (complete: boolean) => {
    if (ended) return;
    ended = true;
    onEnd({
      change: headChange ?? filter?.change,
      pendingMsat: headPending ?? filter?.pending,
      costMsat: filter?.costMsat ?? costMsat,
      complete,
    });
  };
  return {
    status: up.status,
    headers,
    get finished() {
      return up.finished;
    },
    pause: () => up.pause(),
    resume: () => up.resume(),
    abort() {
      up.abort();
      end(false);
    },
    pipe(sink: UpstreamSink) {
      up.pipe({
        onData(chunk) {
          if (held !== undefined) {
            held.push(chunk);
            return;
          }
          const out = filter ? filter.push(chunk) : chunk;
          if (out.length > 0) sink.onData(out);
        },
        onEnd() {
          let rest: Buffer | undefined;
          if (held !== undefined) {
            const taken = withoutNodeCost(Buffer.concat(held));
            rest = taken.body;
            costMsat = taken.costMsat ?? costMsat;
          } else rest = filter?.end();
          if (rest !== undefined && rest.length > 0) sink.onData(rest);
          end(true);
          sink.onEnd();
        },
        onError(err) {
          end(false);
          sink.onError(err);
        },
      });
    },
  };
}

/**
 * Removes the node's change comment lines (`: x-cashu <token>`, `: x-cashu-change …`) and its cost comment
 * (`: x-node-cost {…}`), with the blank line after each, from an SSE body, passing every other byte through as it
 * arrives: only a comment line (one starting with `:`) is held until its end.
 */
export class ChangeCommentFilter {
  change: string | undefined;
  pending: number | undefined;
  /** The `msats` of the node's cost comment, once seen. */
  costMsat: number | undefined;
  private atLineStart = true;
  private comment: Buffer[] | null = null;
  private dropBlank = false;

  push(chunk: Buffer): Buffer {
    const out: Buffer[] = [];
    let i = 0;
    while (i < chunk.length) {
      if (this.comment !== null) {
        const nl = chunk.indexOf(LF, i);
        if (nl < 0) {
          this.comment.push(chunk.subarray(i));
          break;
        }
        this.comment.push(chunk.subarray(i, nl + 1));
        i = nl + 1;
        const line = Buffer.concat(this.comment);
        this.comment = null;
        this.atLineStart = true;
        if (!this.take(line)) out.push(line);
        continue;
      }
      if (this.atLineStart && this.dropBlank) {
        this.dropBlank = false;
        if (chunk[i] === LF) {
          i++;
          continue;
        }
        if (chunk[i] === 0x0d && chunk[i + 1] === LF) {
          i += 2;
          continue;
        }
      }
      if (this.atLineStart && chunk[i] === COLON) {
        this.comment = [];
        continue;
      }
      const nl = chunk.indexOf(LF, i);
      if (nl < 0) {
        out.push(chunk.subarray(i));
        this.atLineStart = false;
        break;
      }
      out.push(chunk.subarray(i, nl + 1));
      this.atLineStart = true;
      i = nl + 1;
    }
    return out.length === 1 ? out[0]! : Buffer.concat(out);
  }

  /** The body ended: a comment line without its newline is passed on (or taken). */
  end(): Buffer | undefined {
    if (this.comment === null) return undefined;
    const line = Buffer.concat(this.comment);
    this.comment = null;
    return this.take(line) ? undefined : line;
  }

  /** A change (or the node's cost) comment line: remembered, and dropped (true) with the blank line after it. */
  private take(line: Buffer): boolean {
    if (startsWith(line, COST_COMMENT)) {
      // The node's cost block: the operator's business, not relayed; its msats are the call's cost there.
      try {
        this.costMsat = blockMsat(JSON.parse(line.subarray(COST_COMMENT.length).toString('utf8')));
      } catch {
        // A cost comment that is not JSON states no cost.
      }
    } else if (startsWith(line, CHANGE_PENDING_COMMENT)) {
      const m = /msat=(\d+)/.exec(line.toString('utf8'));
      this.pending = m ? Number(m[1]) : 0;
    } else if (startsWith(line, CHANGE_COMMENT)) {
      this.change = line.subarray(CHANGE_COMMENT.length).toString('utf8').trim();
    } else return false;
    this.dropBlank = true;
    return true;
  }
}

function startsWith(b: Buffer, prefix: Buffer): boolean {
  return b.length >= prefix.length && b.subarray(0, prefix.length).equals(prefix);
}
