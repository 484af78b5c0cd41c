import { Pool } from 'undici';
import { CHAT_PATH, chatBody, checkCompletion } from '../lib/load.js';
import { dueCount } from '../lib/paced.js';
import { LatencyRecorder, type LatencySummary } from '../lib/stats.js';

/**
 * The soak's load: paid chat calls issued open-loop at a fixed rate, each at its own due time (t0 + i/rate,
 * the rule of bench/lib/paced.ts), streamed and not mixed in a fixed share, rotating over many keys, for a
 * fixed duration. Unlike `runPaced` it is read while it runs: `takeWindow()` returns what was answered since
 * the previous read (the soak samples every 10 s), and every answer is checked to be a real completion (a
 * stream cut after its 200 head counts as a failure, not as a success).
 */

/** Tokens per completion (streamed or not): small, so the soak measures the per-call work, not bytes. */
export const SOAK_CHUNKS = 8;

export interface MixedLoadOptions {
  baseUrl: string;
  /** Bearer credentials; call i uses keys[i % keys.length]. */
  keys: string[];
  rate: number;
  durationS: number;
  /** Fraction of calls that stream (0–1), spread evenly over the sequence. */
  streamShare: number;
  connections: number;
  timeoutMs: number;
  /** Bound on calls in flight (default 4 × connections): a target that falls behind cannot grow a backlog. */
  maxInFlight?: number;
}

export interface LoadCounts {
  /** Calls issued. */
  sent: number;
  /** Answered 200 with a complete body (counted only when the body was read to the end and checked). */
  ok: number;
  okStreams: number;
  /** Answered with another status. */
  non2xx: number;
  /** Answered 200 but the body was not the expected completion (cut, wrong content). */
  badBodies: number;
  /** Transport errors (reset, refused). */
  errors: number;
  timeouts: number;
  /** Not issued because `maxInFlight` calls were already waiting (the target could not keep the rate). */
  missed: number;
  statusCodes: Record<string, number>;
}

export interface LoadWindow extends LoadCounts {
  /** Seconds this window covers. */
  seconds: number;
  latency: LatencySummary;
}

const emptyCounts = (): LoadCounts => ({
  sent: 0,
  ok: 0,
  okStreams: 0,
  non2xx: 0,
  badBodies: 0,
  errors: 0,
  timeouts: 0,
  missed: 0,
  statusCodes: {},
});

function add(into: LoadCounts, from: LoadCounts): void {
  into.sent += from.sent;
  into.ok += from.ok;
  into.okStreams += from.okStreams;
  into.non2xx += from.non2xx;
  into.badBodies += from.badBodies;
  into.errors += from.errors;
  into.timeouts += from.timeouts;
  into.missed += from.missed;
  for (const [code, n] of Object.entries(from.statusCodes))
    into.statusCodes[code] = (into.statusCodes[code] ?? 0) + n;
}

/** Whether call `i` streams, for a stream share `share`: exactly ⌊n·share⌋ of the first n calls (pure; tested). */
export function streams(i: number, share: number): boolean {
  return Math.floor((i + 1) * share) > Math.floor(i * share);
}

export class MixedLoad {
  private readonly pool: Pool;
  private readonly bodies: { stream: string; plain: string };
  private readonly headers: Array<Record<string, string>>;
  private readonly inflight = new Set<Promise<void>>();
  private window = emptyCounts();
  private windowLatency = new LatencyRecorder();
  private windowStart = 0;
  private readonly total = emptyCounts();
  private readonly totalLatency = new LatencyRecorder();
  private t0 = 0;
  private sentIndex = 0;
  private done: Promise<void> | undefined;
  private stopRequested = false;

  constructor(private readonly o: MixedLoadOptions) {
    if (o.keys.length === 0) throw new Error('the soak needs at least one key');
    this.pool = new Pool(o.baseUrl, {
      connections: o.connections,
      pipelining: 1,
      headersTimeout: o.timeoutMs,
      bodyTimeout: o.timeoutMs,
    });
    this.bodies = { stream: chatBody(true, SOAK_CHUNKS), plain: chatBody(false, SOAK_CHUNKS) };
    this.headers = o.keys.map((k) => ({ 'content-type': 'application/json', authorization: `Bearer ${k}` }));
  }

  /** Starts issuing calls; resolves `finished()` once the last one is answered. */
  start(): void {
    this.t0 = performance.now();
    this.windowStart = this.t0;
    const planned = Math.round(this.o.rate * this.o.durationS);
    this.done = new Promise<void>((resolve) => {
      const tick = () => {
        const due = this.stopRequested
          ? this.sentIndex
          : Math.min(planned, dueCount(performance.now() - this.t0, this.o.rate));
        while (this.sentIndex < due) this.fire(this.sentIndex++);
        if (this.sentIndex >= planned || this.stopRequested) resolve();
        else setTimeout(tick, 1); // ≈1 ms ticks, as runPaced: a busy loop would steal a core from the target
      };
      tick();
    }).then(async () => {
      await Promise.all(this.inflight);
      await this.pool.close();
    });
  }

  /** Issues no more calls (those in flight finish). */
  stop(): void {
    this.stopRequested = true;
  }

  /** Resolves when every call has been issued and answered (or failed), and the connections are closed. */
  finished(): Promise<void> {
    if (!this.done) throw new Error('the load was not started');
    return this.done;
  }

  /** What was answered since the previous call (or the start), and starts a new window. */
  takeWindow(): LoadWindow {
    const now = performance.now();
    const w: LoadWindow = {
      ...this.window,
      seconds: (now - this.windowStart) / 1000,
      latency: this.windowLatency.summary(),
    };
    add(this.total, this.window);
    this.window = emptyCounts();
    this.windowLatency = new LatencyRecorder(4096);
    this.windowStart = now;
    return w;
  }

  /** Everything so far (the windows taken plus the current one), with latency over the whole run. */
  totals(): LoadWindow {
    const all = emptyCounts();
    add(all, this.total);
    add(all, this.window);
    return { ...all, seconds: (performance.now() - this.t0) / 1000, latency: this.totalLatency.summary() };
  }

  private fire(i: number): void {
    const w = this.window;
    if (this.inflight.size >= (this.o.maxInFlight ?? this.o.connections * 4)) {
      w.missed++;
      return;
    }
    w.sent++;
    const stream = streams(i, this.o.streamShare);
    const start = performance.now();
    const p = this.pool
      .request({
        method: 'POST',
        path: CHAT_PATH,
        headers: this.headers[i % this.headers.length]!,
        body: stream ? this.bodies.stream : this.bodies.plain,
      })
      .then(async (r) => {
        const text = await r.body.text();
        // Counted in the window current when the answer ends (the windows partition the answers).
        const c = this.window;
        c.statusCodes[r.statusCode] = (c.statusCodes[r.statusCode] ?? 0) + 1;
        if (r.statusCode !== 200) {
          c.non2xx++;
          return;
        }
        if (checkCompletion(r.statusCode, text, stream, SOAK_CHUNKS) !== undefined) {
          c.badBodies++;
          return;
        }
        c.ok++;
        if (stream) c.okStreams++;
        const ms = performance.now() - start;
        this.windowLatency.record(ms);
        this.totalLatency.record(ms);
      })
      .catch((err: { code?: string }) => {
        if (err.code === 'UND_ERR_HEADERS_TIMEOUT' || err.code === 'UND_ERR_BODY_TIMEOUT')
          this.window.timeouts++;
        else this.window.errors++;
      })
      .finally(() => this.inflight.delete(p));
    this.inflight.add(p);
  }
}
