import {
  addedLatency,
  type BenchReport,
  NGINX,
  PORTKEY,
  rpsRatio,
  type ScenarioResult,
  type TargetEvaluation,
} from './results.js';
import { gcOver5msText, gcPausesText } from './runtime-scrape.js';

/** Markdown rendering of a bench report (pure; tested). The README section is pasted from `latest.md`. */

const fmt = (v: number | undefined, digits = 2): string =>
  v === undefined || v === null || Number.isNaN(v) ? '–' : v.toFixed(digits);
const fmtX = (v: number | undefined): string => (v === undefined ? '–' : `${v.toFixed(2)}×`);
const signed = (v: number | undefined): string =>
  v === undefined || v === null || Number.isNaN(v) ? '–' : `${v >= 0 ? '+' : ''}${v.toFixed(3)}`;

function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

function label(report: BenchReport, id: string): string {
  return report.targets.find((t) => t.id === id)?.label ?? id;
}

function scenarioLabel(r: ScenarioResult): string {
  const kind = r.stream ? `stream ${r.chunks} chunks` : 'non-stream';
  const load = r.rate !== undefined ? `${r.rate} req/s` : `c=${r.connections}`;
  const keys = r.keys === undefined ? '' : r.keys === 1 ? ', 1 hot key' : `, ${r.keys} keys`;
  return `${kind}, ${load}${keys}`;
}

function problems(r: ScenarioResult): string {
  const parts: string[] = [];
  if (r.non2xx > 0) parts.push(`${r.non2xx} non-2xx`);
  if (r.errors > 0) parts.push(`${r.errors} errors`);
  if (r.timeouts > 0) parts.push(`${r.timeouts} timeouts`);
  if (r.missed !== undefined && r.missed > 0) parts.push(`rate not sustained: ${r.missed} requests not sent`);
  if (!r.bodyCheck.ok) parts.push(`body: ${r.bodyCheck.detail}`);
  return parts.length === 0 ? 'ok' : parts.join(', ');
}

/** One row per load result (failed ones say why instead of numbers). */
export function loadTable(report: BenchReport): string {
  const rows: string[][] = [];
  for (const r of report.results) {
    if (r.kind !== 'load') continue;
    if (r.failed !== undefined) {
      rows.push([
        label(report, r.target),
        scenarioLabel(r),
        'FAILED',
        '–',
        '–',
        '–',
        '–',
        '–',
        '–',
        '–',
        '–',
        '–',
        '–',
        r.failed,
      ]);
      continue;
    }
    const added = addedLatency(report.results, r);
    rows.push([
      label(report, r.target),
      scenarioLabel(r),
      fmt(r.rps, 0),
      fmt(r.latency.p50, 3),
      fmt(r.latency.p90, 3),
      fmt(r.latency.p99, 3),
      signed(added?.p50),
      signed(added?.p99),
      fmtX(r.target === NGINX ? undefined : rpsRatio(report.results, r, NGINX)),
      fmtX(r.target === PORTKEY ? undefined : rpsRatio(report.results, r, PORTKEY)),
      fmt(r.usage?.cpuPercent, 0),
      fmt(r.usage?.cpuMsPer1k, 1),
      fmt(r.usage?.rssPeakMb, 0),
      problems(r),
    ]);
  }
  return table(
    [
      'Target',
      'Scenario',
      'req/s',
      'p50 ms',
      'p90 ms',
      'p99 ms',
      '+p50 ms',
      '+p99 ms',
      '× nginx',
      '× Portkey',
      'CPU %',
      'CPU ms/1k req',
      'RSS MB',
      'Errors',
    ],
    rows,
  );
}

/** The gateway's event-loop delay and GC pauses in each measured window that has them (from its /metrics). */
export function runtimeTable(report: BenchReport): string {
  const rows = report.results
    .filter((r) => r.runtime !== undefined && r.failed === undefined)
    .map((r) => {
      const rt = r.runtime!;
      return [
        label(report, r.target),
        scenarioLabel(r),
        fmt(r.latency.p99, 3),
        String(rt.loopSamples),
        `≤ ${fmt(rt.loopDelayP99Ms, 1)}`,
        `≤ ${fmt(rt.loopDelayMaxMs, 1)}`,
        gcPausesText(rt),
        gcOver5msText(rt),
        `≤ ${fmt(rt.gcLongestMs, 1)}`,
      ];
    });
  return table(
    [
      'Target',
      'Scenario',
      'p99 ms',
      'loop samples',
      'loop delay p99 ms',
      'loop delay max ms',
      'GC pauses',
      'GC > 5 ms',
      'longest GC ms',
    ],
    rows,
  );
}

export function streamsTable(report: BenchReport): string {
  const rows = report.results
    .filter((r) => r.kind === 'streams')
    .map((r) => {
      const s = r.streams;
      if (r.failed !== undefined || s === undefined)
        return [label(report, r.target), 'FAILED', '–', '–', '–', '–', '–', r.failed ?? 'no result'];
      return [
        label(report, r.target),
        `${s.peakOpen}/${s.requested}`,
        `${s.completed} ok, ${s.failed} failed`,
        fmt(s.rssBeforeMb, 0),
        fmt(s.rssPeakMb, 0),
        fmt(s.rssGrowthMb, 1),
        `${fmt(s.firstByte.p50, 3)} / ${fmt(s.firstByte.p99, 3)}`,
        s.settled === undefined ? 'n/a' : `${s.settled.ok ? 'yes' : 'NO'}: ${s.settled.detail}`,
      ];
    });
  return table(
    [
      'Target',
      'Open at peak',
      'Streams',
      'RSS before MB',
      'RSS peak MB',
      'RSS growth MB',
      'First byte p50 / p99 ms',
      'Settled',
    ],
    rows,
  );
}

export function breakdownTable(report: BenchReport): string {
  const rows = report.breakdown.map((b) => [
    label(report, b.target),
    String(b.calls),
    fmt(b.admissionMs, 3),
    fmt(b.upstreamWaitMs, 3),
    fmt(b.relayMs, 3),
    fmt(b.settleMs, 3),
    fmt(b.totalMs, 3),
    fmt(b.cpuMsPerCall, 3),
  ]);
  return table(
    [
      'Target',
      'Calls',
      'Admission ms',
      'Upstream wait ms',
      'Relay to client ms',
      'Settle ms',
      'Total ms',
      'Gateway CPU ms/call',
    ],
    rows,
  );
}

export function evaluationTable(evals: TargetEvaluation[]): string {
  return table(
    ['Target', 'Goal', 'Measured', 'Result'],
    evals.map((e) => [
      e.description,
      e.goal,
      e.measured,
      e.pass === null ? 'NOT MEASURED' : e.pass ? 'PASS' : 'FAIL',
    ]),
  );
}

/** The whole markdown document written to bench/results/latest.md. */
export function renderMarkdown(report: BenchReport): string {
  const m = report.machine;
  const versions = Object.entries(report.versions)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  const skipped = report.targets.filter((t) => t.skipped !== undefined);
  const parts = [
    `# Benchmark results (${report.mode} run, ${report.startedAt})`,
    '',
    `Machine: ${m.cpuModel}, ${m.cores} cores, ${m.memGb} GB RAM, ${m.os}. Versions: ${versions}.`,
    `Each measurement: ${report.warmupS} s warm-up (discarded), then ${report.durationS} s measured; loopback only; ` +
      'the load generator, the mock upstream and the target share the same cores.',
    '',
    '## Targets (PASS / FAIL in this run)',
    '',
    evaluationTable(report.evaluations),
    '',
    '## Throughput and latency',
    '',
    '`+p50`/`+p99`: added over the bare mock upstream in the same scenario. `× nginx`/`× Portkey`: requests/s ratio. ' +
      'CPU and RSS are the target process(es) only, sampled from /proc.',
    '',
    loadTable(report),
    '',
  ];
  if (report.results.some((r) => r.runtime !== undefined)) {
    parts.push(
      '## Event-loop delay and GC pauses (gateway /metrics, measured window)',
      '',
      'Read from `gateway_event_loop_delay_seconds` (a sample every 5 ms) and `nodejs_gc_duration_seconds` before and after ' +
        'the window; each figure is the upper bound of the histogram bucket it falls in.',
      '',
      runtimeTable(report),
      '',
    );
  }
  if (report.results.some((r) => r.kind === 'streams')) {
    parts.push('## Concurrent open streams', '', streamsTable(report), '');
  }
  if (report.breakdown.length > 0) {
    parts.push('## Per-stage time of one paid call (concurrency 1, means)', '', breakdownTable(report), '');
  }
  if (skipped.length > 0) {
    parts.push('## Skipped targets', '', ...skipped.map((t) => `- ${t.label}: ${t.skipped}`), '');
  }
  if (report.notes.length > 0) parts.push('## Notes', '', ...report.notes.map((n) => `- ${n}`), '');
  return parts.join('\n');
}
