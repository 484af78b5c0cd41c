import type { BenchReport } from './results.js';

/**
 * A hand-written SVG line chart (no chart dependency): growth curves of the run, one panel per metric.
 * Pure functions; the runner writes the result to bench/results/latest.svg.
 */

export interface Series {
  name: string;
  points: Array<[number, number]>;
}

export interface Panel {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  logX?: boolean;
}

const W = 460;
const H = 300;
const M = { l: 60, r: 12, t: 28, b: 44 };
const COLORS = [
  '#1f77b4',
  '#d62728',
  '#2ca02c',
  '#ff7f0e',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#17becf',
  '#7f7f7f',
];

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Round-ish tick values covering [0, max]. */
export function niceTicks(max: number, count = 5): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((f) => f * mag).find((s) => s >= raw) ?? raw;
  const ticks: number[] = [];
  for (let v = 0; v <= max + step * 0.001; v += step) ticks.push(Math.round(v * 1e6) / 1e6);
  if (ticks[ticks.length - 1]! < max) ticks.push(Math.round((ticks[ticks.length - 1]! + step) * 1e6) / 1e6);
  return ticks;
}

/** One panel as an SVG `<g>` translated to (x, y). */
export function panelSvg(p: Panel, x: number, y: number): string {
  const xs = p.series.flatMap((s) => s.points.map((pt) => pt[0]));
  const ys = p.series.flatMap((s) => s.points.map((pt) => pt[1])).filter((v) => Number.isFinite(v));
  const out: string[] = [`<g transform="translate(${x},${y})">`];
  out.push(
    `<text x="${W / 2}" y="16" text-anchor="middle" font-size="13" font-weight="bold">${esc(p.title)}</text>`,
  );
  if (xs.length === 0 || ys.length === 0) {
    out.push(`<text x="${W / 2}" y="${H / 2}" text-anchor="middle" font-size="12">no data</text></g>`);
    return out.join('');
  }
  const xDomain = [...new Set(xs)].sort((a, b) => a - b);
  const tx = (v: number): number => {
    const lo = xDomain[0]!;
    const hi = xDomain[xDomain.length - 1]!;
    const f = p.logX
      ? hi === lo
        ? 0.5
        : Math.log(v / lo) / Math.log(hi / lo)
      : hi === lo
        ? 0.5
        : (v - lo) / (hi - lo);
    return M.l + f * (W - M.l - M.r);
  };
  const yTicks = niceTicks(Math.max(...ys));
  const yMax = yTicks[yTicks.length - 1]!;
  const ty = (v: number): number => H - M.b - (v / yMax) * (H - M.t - M.b);
  out.push(`<line x1="${M.l}" y1="${H - M.b}" x2="${W - M.r}" y2="${H - M.b}" stroke="#333"/>`);
  out.push(`<line x1="${M.l}" y1="${M.t}" x2="${M.l}" y2="${H - M.b}" stroke="#333"/>`);
  for (const t of yTicks) {
    const yy = ty(t).toFixed(1);
    out.push(`<line x1="${M.l}" y1="${yy}" x2="${W - M.r}" y2="${yy}" stroke="#eee"/>`);
    out.push(
      `<text x="${M.l - 4}" y="${yy}" text-anchor="end" dominant-baseline="middle" font-size="10">${t}</text>`,
    );
  }
  for (const v of xDomain) {
    out.push(
      `<text x="${tx(v).toFixed(1)}" y="${H - M.b + 14}" text-anchor="middle" font-size="10">${v}</text>`,
    );
  }
  out.push(
    `<text x="${(M.l + W - M.r) / 2}" y="${H - 8}" text-anchor="middle" font-size="11">${esc(p.xLabel)}</text>`,
  );
  out.push(
    `<text transform="translate(14,${(M.t + H - M.b) / 2}) rotate(-90)" text-anchor="middle" font-size="11">${esc(p.yLabel)}</text>`,
  );
  p.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]!;
    const pts = s.points.filter((pt) => Number.isFinite(pt[1])).sort((a, b) => a[0] - b[0]);
    if (pts.length === 0) return;
    const d = pts
      .map((pt, j) => `${j === 0 ? 'M' : 'L'}${tx(pt[0]).toFixed(1)},${ty(pt[1]).toFixed(1)}`)
      .join(' ');
    out.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="2"/>`);
    for (const pt of pts)
      out.push(`<circle cx="${tx(pt[0]).toFixed(1)}" cy="${ty(pt[1]).toFixed(1)}" r="2.5" fill="${color}"/>`);
    const ly = M.t + 4 + i * 13;
    out.push(`<rect x="${M.l + 8}" y="${ly}" width="10" height="3" fill="${color}"/>`);
    out.push(`<text x="${M.l + 22}" y="${ly + 4}" font-size="10">${esc(s.name)}</text>`);
  });
  out.push('</g>');
  return out.join('');
}

/** Panels laid out two per row. */
export function renderSvg(panels: Panel[], title: string): string {
  const cols = 2;
  const rows = Math.max(1, Math.ceil(panels.length / cols));
  const width = cols * W;
  const height = rows * H + 30;
  const body = panels.map((p, i) => panelSvg(p, (i % cols) * W, 30 + Math.floor(i / cols) * H)).join('\n');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${width / 2}" y="20" text-anchor="middle" font-size="15" font-weight="bold">${esc(title)}</text>`,
    body,
    '</svg>',
    '',
  ].join('\n');
}

/** Growth curves of a report: req/s and p99 vs concurrency (non-stream), and vs stream length. */
export function reportPanels(report: BenchReport): Panel[] {
  const label = (id: string) => report.targets.find((t) => t.id === id)?.label ?? id;
  const ok = report.results.filter((r) => r.failed === undefined && r.kind === 'load');
  const byTarget = (
    pred: (r: (typeof ok)[number]) => boolean,
    x: (r: (typeof ok)[number]) => number,
    y: (r: (typeof ok)[number]) => number,
  ) => {
    const map = new Map<string, Array<[number, number]>>();
    for (const r of ok.filter(pred)) {
      const list = map.get(r.target) ?? [];
      list.push([x(r), y(r)]);
      map.set(r.target, list);
    }
    return [...map].filter(([, pts]) => pts.length > 1).map(([t, points]) => ({ name: label(t), points }));
  };
  const conc = (r: (typeof ok)[number]) =>
    !r.stream && r.rate === undefined && /^chat-c\d+$/.test(r.scenario);
  const len = (r: (typeof ok)[number]) => r.stream && /^stream(50-c64|-len-\d+)$/.test(r.scenario);
  return [
    {
      title: 'Non-stream: requests/s vs concurrency',
      xLabel: 'concurrent connections',
      yLabel: 'req/s',
      logX: true,
      series: byTarget(
        conc,
        (r) => r.connections,
        (r) => r.rps,
      ),
    },
    {
      title: 'Non-stream: p99 latency vs concurrency',
      xLabel: 'concurrent connections',
      yLabel: 'p99 ms',
      logX: true,
      series: byTarget(
        conc,
        (r) => r.connections,
        (r) => r.latency.p99,
      ),
    },
    {
      title: 'Streams (c=64): requests/s vs length',
      xLabel: 'chunks per stream',
      yLabel: 'req/s',
      logX: true,
      series: byTarget(
        len,
        (r) => r.chunks,
        (r) => r.rps,
      ),
    },
    {
      title: 'Streams (c=64): p99 latency vs length',
      xLabel: 'chunks per stream',
      yLabel: 'p99 ms',
      logX: true,
      series: byTarget(
        len,
        (r) => r.chunks,
        (r) => r.latency.p99,
      ),
    },
  ];
}
