import { Agent, request } from 'undici';
import { CHAT_PATH, chatBody, checkCompletion, type LoadTarget } from './load.js';
import { ProcSampler } from './proc-sampler.js';
import type { ScenarioResult, StreamsResult } from './results.js';
import { LatencyRecorder } from './stats.js';

/**
 * Memory and first byte with many concurrent streams:
 * 1. first byte: `firstByteCalls` sequential streamed completions (10 chunks); time to the first body byte;
 * 2. hold: `count` streamed completions opened at once (their own connections) while the mock upstream
 *    paces its chunks (`chunkDelayMs`), so they stay open together; the target's RSS is sampled throughout;
 * 3. settle: the caller's check that every stream was charged once (gateway targets).
 */

export interface StreamsOptions {
  count: number;
  chunks: number;
  firstByteCalls: number;
  /** Headers of the hold phase's requests (gateway: a fresh account's key). */
  holdHeaders: Record<string, string>;
  /** Switches the upstream pacing on (hold phase) and off again. */
  pace(chunkDelayMs: number): Promise<void>;
  chunkDelayMs: number;
  verifySettled?: (calls: number) => Promise<{ ok: boolean; detail: string }>;
  timeoutMs: number;
}

async function firstByte(t: LoadTarget, calls: number, agent: Agent): Promise<LatencyRecorder> {
  const rec = new LatencyRecorder();
  const body = chatBody(true, 10);
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    const r = await request(`${t.baseUrl}${CHAT_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...t.headers(i) },
      body,
      dispatcher: agent,
    });
    let first = true;
    let text = '';
    for await (const chunk of r.body) {
      if (first) {
        rec.record(performance.now() - t0);
        first = false;
      }
      text += chunk.toString();
    }
    const problem = checkCompletion(r.statusCode, text, true, 10);
    if (problem !== undefined) throw new Error(`first-byte request: ${problem}`);
  }
  return rec;
}

export async function measureStreams(t: LoadTarget, o: StreamsOptions): Promise<ScenarioResult> {
  const agent = new Agent({
    connections: null,
    pipelining: 1,
    headersTimeout: o.timeoutMs,
    bodyTimeout: o.timeoutMs,
  });
  const base = {
    target: t.id,
    scenario: 'open-streams',
    kind: 'streams' as const,
    connections: o.count,
    stream: true,
    chunks: o.chunks,
    durationS: 0,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    statusCodes: {} as Record<string, number>,
  };
  try {
    await firstByte(t, 20, agent); // warm-up: connections, JIT, pools
    const fb = await firstByte(t, o.firstByteCalls, agent);
    await o.pace(o.chunkDelayMs);
    const sampler = new ProcSampler(t.pid, 100);
    sampler.start();
    const t0 = performance.now();
    let open = 0;
    let peakOpen = 0;
    let completed = 0;
    let failed = 0;
    let firstProblem: string | undefined;
    const body = chatBody(true, o.chunks);
    const one = async () => {
      try {
        const r = await request(`${t.baseUrl}${CHAT_PATH}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...o.holdHeaders },
          body,
          dispatcher: agent,
        });
        base.statusCodes[r.statusCode] = (base.statusCodes[r.statusCode] ?? 0) + 1;
        open++;
        if (open > peakOpen) peakOpen = open;
        let text = '';
        try {
          for await (const chunk of r.body) text += chunk.toString();
        } finally {
          open--;
        }
        const problem = checkCompletion(r.statusCode, text, true, o.chunks);
        if (problem === undefined) completed++;
        else {
          failed++;
          firstProblem ??= problem;
        }
      } catch (err) {
        failed++;
        base.errors++;
        firstProblem ??= (err as Error).message;
      }
    };
    await Promise.all(Array.from({ length: o.count }, one));
    const u = sampler.stop();
    await o.pace(0);
    const durationS = (performance.now() - t0) / 1000;
    const streams: StreamsResult = {
      requested: o.count,
      peakOpen,
      completed,
      failed,
      rssBeforeMb: u.rssStartMb,
      rssPeakMb: u.rssPeakMb,
      rssGrowthMb: Math.round((u.rssPeakMb - u.rssStartMb) * 10) / 10,
      firstByte: fb.summary(),
    };
    if (o.verifySettled) {
      await new Promise((r) => setTimeout(r, 500)); // settle runs after the response ended
      streams.settled = await o.verifySettled(completed);
    }
    const result: ScenarioResult = {
      ...base,
      durationS: Math.round(durationS * 10) / 10,
      ok: completed,
      rps: Math.round((completed / durationS) * 10) / 10,
      latency: fb.summary(),
      non2xx: Object.entries(base.statusCodes)
        .filter(([c]) => !c.startsWith('2'))
        .reduce((a, [, n]) => a + n, 0),
      bodyCheck:
        firstProblem === undefined ? { ok: true, detail: 'ok' } : { ok: false, detail: firstProblem },
      usage: {
        cpuPercent: u.cpuPercent,
        cpuMsPer1k: Number.NaN,
        rssStartMb: u.rssStartMb,
        rssPeakMb: u.rssPeakMb,
      },
      streams,
    };
    if (failed > 0) result.failed = `${failed} of ${o.count} streams failed: ${firstProblem}`;
    return result;
  } catch (err) {
    await o.pace(0).catch(() => undefined);
    return {
      ...base,
      ok: 0,
      rps: 0,
      latency: new LatencyRecorder().summary(),
      bodyCheck: { ok: false, detail: (err as Error).message },
      failed: (err as Error).message,
    };
  } finally {
    await agent.close();
  }
}
