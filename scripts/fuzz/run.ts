import fc from 'fast-check';
import { checkAnswer, leakedInLogs } from './invariants.js';
import { rawRequest } from './raw-http.js';
import {
  documentedOperations,
  type FuzzMaterial,
  planArbitrary,
  renderRequest,
  type TokenMaterial,
  UWS_LIMITS,
} from './requests.js';
import { type FuzzEngine, type FuzzStore, type FuzzTarget, startFuzzTarget } from './target.js';

/**
 * One bounded fuzz run against one engine × store: start the target, fund an API key and mint a pool of
 * tokens, then send fast-check-generated requests until the time is up (or the first violation), checking
 * every answer (core invariants in invariants.ts) and that the process is alive; at the end the ledger's conservation check
 * and wallet solvency must pass and the logs must hold no secret. A failure reports the seed and path that
 * replay it (`npm run fuzz -- --seed S --path P --engine E --store X`).
 */

export interface FuzzRunOptions {
  engine: FuzzEngine;
  store: FuzzStore;
  seconds: number;
  seed?: number;
  /** fast-check replay path of a reported failure. */
  path?: string;
  /** Per-request bound for "answered or closed" (default 10 s). */
  requestTimeoutMs?: number;
  /** Survey mode: keep going after violations and report each distinct kind once (with an example). */
  survey?: boolean;
  /** Progress lines (default none). */
  log?: (line: string) => void;
}

export interface FuzzReport {
  engine: FuzzEngine;
  store: FuzzStore;
  seed: number;
  requests: number;
  byStatus: Record<string, number>;
  failure?: string;
  /** Survey mode: distinct violations (first line of each) → an example request and count. */
  violations?: Record<string, { count: number; example: string }>;
  money?: { audit: unknown; solvency: unknown };
}

export async function runFuzz(opts: FuzzRunOptions): Promise<FuzzReport> {
  const seed = opts.seed ?? (Date.now() ^ (Math.random() * 0x7fffffff)) >>> 0;
  const target = await startFuzzTarget({ engine: opts.engine, store: opts.store });
  const report: FuzzReport = { engine: opts.engine, store: opts.store, seed, requests: 0, byStatus: {} };
  try {
    const material = await prepareMaterial(target);
    const ops = documentedOperations();
    const never = [target.secrets.adminPassword, target.secrets.upstreamApiKey, target.secrets.seed];
    const plans = planArbitrary(ops, opts.engine === 'uws' ? UWS_LIMITS : {});
    const property = fc.asyncProperty(plans, async (plan) => {
      const req = renderRequest(plan, ops, material);
      const res = await rawRequest(req.bytes, {
        port: target.port,
        segments: req.segments,
        segmentDelayMs: req.segments > 1 ? 2 : 0,
        timeoutMs: opts.requestTimeoutMs ?? 10_000,
        // A client waits for its answer; only a deliberately incomplete request half-closes (like nginx, the
        // gateway treats a client's FIN before its answer as the client going away).
        endAfterWrite: !req.expectAnswer,
        stopAfterAnswer: true,
      });
      report.requests++;
      const key = String(res.status || (res.timedOut ? 'timeout' : 'closed'));
      report.byStatus[key] = (report.byStatus[key] ?? 0) + 1;
      const violations = checkAnswer(req, res, { never });
      if (!target.alive()) violations.push(`the gateway process died (${target.exitInfo()})`);
      if (violations.length > 0 && opts.survey) {
        report.violations ??= {};
        for (const v of violations) {
          const kind = v.replace(/\d+ ms/, 'N ms');
          const seen = report.violations[kind];
          if (seen) seen.count++;
          else report.violations[kind] = { count: 1, example: `${req.label} → ${preview(res.raw)}` };
        }
        return;
      }
      if (violations.length > 0) {
        const tail = target.logs().trim().split('\n').slice(-8).join('\n    ');
        throw new Error(
          `${req.label}\n  → ${res.status} ${preview(res.raw)}\n  ${violations.join('\n  ')}` +
            `\n  request head: ${preview(req.bytes.subarray(0, Math.max(0, req.bytes.indexOf('\r\n\r\n'))))}` +
            `\n  gateway log tail:\n    ${tail}`,
        );
      }
    });
    const result = await fc.check(property, {
      seed,
      ...(opts.path !== undefined ? { path: opts.path } : {}),
      numRuns: opts.path !== undefined ? 1 : 1_000_000,
      interruptAfterTimeLimit: opts.seconds * 1000,
      endOnFailure: true,
    });
    if (result.failed) {
      const err =
        result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
      report.failure = `seed ${result.seed}, path "${result.counterexamplePath}":\n${err}`;
      return report;
    }
    // Let the last calls settle before reading the money.
    await new Promise((r) => setTimeout(r, 500));
    report.money = await target.checkMoney();
    const leaks = leakedInLogs(target.logs(), [
      ...never,
      material.apiKey,
      ...material.tokens.flatMap((t) => t.proofs.map((p) => p.secret)),
    ]);
    if (leaks.length > 0) report.failure = `${leaks.length} secret value(s) found in the gateway logs`;
    if (!target.alive()) report.failure = `the gateway process died (${target.exitInfo()})`;
    opts.log?.(
      `${opts.engine}/${opts.store}: ${report.requests} requests ${JSON.stringify(report.byStatus)}`,
    );
    if (report.violations && !report.failure)
      report.failure = `${Object.keys(report.violations).length} kinds of violation`;
    return report;
  } catch (err) {
    report.failure = `harness error: ${(err as Error).stack ?? String(err)}`;
    return report;
  } finally {
    await target.close();
  }
}

/** A funded API key (POST /v1/wallet/create) and a pool of fresh tokens with their proofs. */
async function prepareMaterial(target: FuzzTarget): Promise<FuzzMaterial> {
  const { token } = await target.mintToken(2_000);
  const res = await fetch(`http://127.0.0.1:${target.port}/v1/wallet/create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ cashu_token: token }),
  });
  const created = (await res.json()) as { api_key?: string };
  if (res.status !== 201 && res.status !== 200) throw new Error(`wallet/create answered ${res.status}`);
  if (!created.api_key) throw new Error('wallet/create returned no api_key');
  const tokens: TokenMaterial[] = [];
  for (let i = 0; i < 6; i++) {
    const { mint, proofs } = await target.mintToken(5 + i);
    tokens.push({ mint, proofs });
  }
  return { apiKey: created.api_key, tokens, host: `127.0.0.1:${target.port}` };
}

function preview(raw: Buffer): string {
  return JSON.stringify(raw.toString('latin1', 0, Math.min(raw.length, 300)));
}
