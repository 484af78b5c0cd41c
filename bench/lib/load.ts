import autocannon from 'autocannon';
import { request } from 'undici';
import type { LoadScenario } from './args.js';
import { runPaced } from './paced.js';
import { ProcSampler } from './proc-sampler.js';
import type { ProcessUsage, ScenarioResult } from './results.js';
import { scrapeRuntime, summarize } from './runtime-scrape.js';
import { LatencyRecorder } from './stats.js';

/**
 * One load measurement with autocannon: warm-up (discarded), then the measured window with the target's
 * processes sampled; latency comes from autocannon's per-response hrtime (recorded at µs resolution here),
 * and a few sample responses are checked for a real completion before and after.
 */

export const CHAT_PATH = '/v1/chat/completions';
const TOKEN_EVENT = '"content":"tok "';

/** Request body for a completion of `chunks` tokens (the mock caps its output at max_tokens). */
export function chatBody(stream: boolean, chunks: number): string {
  return JSON.stringify({
    model: 'mock-gpt',
    messages: [{ role: 'user', content: 'Say hello to the benchmark.' }],
    max_tokens: chunks,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  });
}

/** Whether a response body is a real completion of `chunks` tokens (pure; tested). */
export function checkCompletion(
  status: number,
  body: string,
  stream: boolean,
  chunks: number,
): string | undefined {
  if (status !== 200) return `status ${status}: ${body.slice(0, 160)}`;
  if (!stream) {
    try {
      const j = JSON.parse(body) as { object?: string; choices?: Array<{ message?: { content?: string } }> };
      if (j.object !== 'chat.completion') return `not a chat.completion: ${body.slice(0, 120)}`;
      if (j.choices?.[0]?.message?.content !== 'tok '.repeat(chunks)) return 'completion content differs';
      return undefined;
    } catch {
      return `not JSON: ${body.slice(0, 120)}`;
    }
  }
  let n = 0;
  for (let i = body.indexOf(TOKEN_EVENT); i !== -1; i = body.indexOf(TOKEN_EVENT, i + 1)) n++;
  if (n !== chunks) return `stream has ${n} token events, expected ${chunks}`;
  if (!body.trimEnd().endsWith('data: [DONE]')) return 'stream does not end with data: [DONE]';
  return undefined;
}

export interface LoadTarget {
  id: string;
  baseUrl: string;
  pid: number;
  headers(i: number, keyCount?: number): Record<string, string>;
  /** The target serves the gateway's /metrics: its loop delay and GC pauses are read around the window. */
  runtimeMetrics?: boolean;
}

async function sampleCheck(t: LoadTarget, s: LoadScenario, count: number): Promise<string | undefined> {
  const body = chatBody(s.stream, s.chunks);
  for (let i = 0; i < count; i++) {
    try {
      const r = await request(`${t.baseUrl}${CHAT_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...t.headers(i, s.keys) },
        body,
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
      });
      const problem = checkCompletion(r.statusCode, await r.body.text(), s.stream, s.chunks);
      if (problem !== undefined) return problem;
    } catch (err) {
      return `request failed: ${(err as Error).message}`;
    }
  }
  return undefined;
}

interface Run {
  durationS: number;
  ok: number;
  latency: LatencyRecorder;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  /** Paced runs: p99 lateness of request issue vs schedule, ms. */
  lateP99Ms?: number;
  /** Paced runs: requests not sent because the target was saturated. */
  missed?: number;
}

async function runOnce(t: LoadTarget, s: LoadScenario, durationS: number): Promise<Run> {
  if (s.rate !== undefined) {
    const r = await runPaced({
      url: t.baseUrl,
      path: CHAT_PATH,
      headers: (i) => t.headers(i, s.keys),
      body: chatBody(s.stream, s.chunks),
      rate: s.rate,
      connections: s.connections,
      durationS,
      timeoutMs: 10_000,
    });
    return r;
  }
  return runAutocannon(t, s, durationS);
}

function runAutocannon(t: LoadTarget, s: LoadScenario, durationS: number): Promise<Run> {
  const latency = new LatencyRecorder();
  const body = chatBody(s.stream, s.chunks);
  const keyCount = s.keys;
  let i = 0;
  // Keys scenarios rebuild each request (setupRequest) in both the 1-key and the n-key case, so the
  // client-side cost is the same in the two.
  const requests =
    keyCount !== undefined
      ? [
          {
            method: 'POST',
            path: CHAT_PATH,
            body,
            setupRequest: (req: object) => ({
              ...req,
              headers: { 'content-type': 'application/json', ...t.headers(i++, keyCount) },
            }),
          },
        ]
      : undefined;
  let ok = 0;
  return new Promise((resolve, reject) => {
    const inst = autocannon(
      {
        url: `${t.baseUrl}${CHAT_PATH}`,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...t.headers(0) },
        body,
        connections: s.connections,
        duration: durationS,
        timeout: 10,
        ...(s.rate !== undefined ? { overallRate: s.rate } : {}),
        ...(requests ? { requests } : {}),
      },
      (err, result) => {
        if (err) return reject(err);
        const statusCodes: Record<string, number> = {};
        for (const [code, v] of Object.entries(result.statusCodeStats)) statusCodes[code] = v.count;
        resolve({
          durationS: result.duration,
          ok,
          latency,
          errors: result.errors,
          timeouts: result.timeouts,
          non2xx: result.non2xx,
          statusCodes,
        });
      },
    );
    inst.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      if (status >= 200 && status < 300) {
        ok++;
        latency.record(ms);
      }
    });
  });
}

/** Warm-up, measure, check: a ScenarioResult (with `failed` set when the answers were not completions). */
export async function measureLoad(
  t: LoadTarget,
  s: LoadScenario,
  o: { durationS: number; warmupS: number },
): Promise<ScenarioResult> {
  const base: Omit<
    ScenarioResult,
    'ok' | 'rps' | 'latency' | 'non2xx' | 'errors' | 'timeouts' | 'statusCodes' | 'bodyCheck'
  > = {
    target: t.id,
    scenario: s.id,
    kind: 'load',
    connections: s.connections,
    ...(s.rate !== undefined ? { rate: s.rate } : {}),
    stream: s.stream,
    chunks: s.chunks,
    ...(s.keys !== undefined ? { keys: s.keys } : {}),
    durationS: o.durationS,
  };
  const before = await sampleCheck(t, s, 3);
  if (before !== undefined) {
    return {
      ...base,
      ok: 0,
      rps: 0,
      latency: new LatencyRecorder().summary(),
      non2xx: 0,
      errors: 0,
      timeouts: 0,
      statusCodes: {},
      bodyCheck: { ok: false, detail: before },
      failed: `sample request: ${before}`,
    };
  }
  if (o.warmupS > 0) await runOnce(t, s, o.warmupS);
  const scrapeBefore = t.runtimeMetrics ? await scrapeRuntime(t.baseUrl) : undefined;
  const sampler = new ProcSampler(t.pid);
  sampler.start();
  const run = await runOnce(t, s, o.durationS);
  const u = sampler.stop();
  const scrapeAfter = scrapeBefore ? await scrapeRuntime(t.baseUrl) : undefined;
  const after = await sampleCheck(t, s, 2);
  const usage: ProcessUsage = {
    cpuPercent: u.cpuPercent,
    cpuMsPer1k: run.ok > 0 ? Math.round((u.cpuS * 1e9) / run.ok) / 1000 : Number.NaN,
    rssStartMb: u.rssStartMb,
    rssPeakMb: u.rssPeakMb,
  };
  const result: ScenarioResult = {
    ...base,
    ok: run.ok,
    rps: Math.round((run.ok / Math.max(run.durationS, 0.001)) * 10) / 10,
    latency: run.latency.summary(),
    non2xx: run.non2xx,
    errors: run.errors,
    timeouts: run.timeouts,
    statusCodes: run.statusCodes,
    bodyCheck: after === undefined ? { ok: true, detail: 'ok' } : { ok: false, detail: after },
    usage,
    ...(run.lateP99Ms !== undefined ? { generatorLateP99Ms: run.lateP99Ms } : {}),
    ...(run.missed !== undefined ? { missed: run.missed } : {}),
    ...(scrapeBefore && scrapeAfter ? { runtime: summarize(scrapeBefore, scrapeAfter) } : {}),
  };
  const bad = run.non2xx + run.errors + run.timeouts;
  if (run.ok === 0)
    result.failed =
      Object.keys(run.statusCodes).length === 0 && run.errors === 0
        ? `no response completed within the ${o.durationS} s window (target saturated)`
        : `no 2xx answers (${JSON.stringify(run.statusCodes)}, ${run.errors} errors)`;
  else if (bad > run.ok * 0.01)
    result.failed = `${bad} of ${run.ok + bad} requests failed (non-2xx ${run.non2xx}, errors ${run.errors}, timeouts ${run.timeouts})`;
  else if (after !== undefined) result.failed = `sample request after the run: ${after}`;
  return result;
}
