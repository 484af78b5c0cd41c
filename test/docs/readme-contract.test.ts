import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import { ERRORS } from '../../core/errors.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
// config.ts reads the environment, the Redis forms through core/store/redis-config.ts.
const configSource = ['../../core/config.ts', '../../core/store/redis-config.ts']
  .map((f) => readFileSync(new URL(f, import.meta.url), 'utf8'))
  .join('\n');

const otelSource = ['../../core/otel-tracing.ts', '../../core/trace-context.ts']
  .map((f) => readFileSync(new URL(f, import.meta.url), 'utf8'))
  .join('\n');

function tableRows(heading: string): string[][] {
  const start = readme.indexOf(`## ${heading}`);
  expect(start, `README has a "${heading}" section`).toBeGreaterThanOrEqual(0);
  const rest = readme.slice(start).split('\n').slice(1);
  const end = rest.findIndex((l) => l.startsWith('## '));
  return (end < 0 ? rest : rest.slice(0, end))
    .filter((l) => l.startsWith('| `'))
    .map((l) =>
      l
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim()),
    );
}

describe('README stays true to the code', () => {
  it('documents exactly the environment variables config.ts reads', () => {
    const read = new Set([...configSource.matchAll(/\(env, '([A-Z0-9_]+)'/g)].map((m) => m[1]));
    const documented = new Set(tableRows('Configuration').map((r) => r[0]!.replaceAll('`', '')));
    // The standard OpenTelemetry variables are read by core/otel-tracing.ts and core/trace-context.ts (the SDK's own names), not config.ts:
    // each one documented must be one that module reads.
    const otel = new Set([...otelSource.matchAll(/env\.(OTEL_[A-Z0-9_]+)/g)].map((m) => m[1]));
    const documentedOtel = [...documented].filter((v) => v.startsWith('OTEL_'));
    expect(documentedOtel.length).toBeGreaterThan(0);
    for (const v of documentedOtel)
      expect(otel.has(v), `${v} is read by core/otel-tracing.ts or core/trace-context.ts`).toBe(true);
    expect([...documented].filter((v) => !v.startsWith('OTEL_')).sort()).toEqual([...read].sort());
  });

  it('documents every error code with its status, and no other', () => {
    const rows = tableRows('Errors');
    const documented = new Map(rows.map((r) => [r[0]!.replaceAll('`', ''), Number(r[1])]));
    const catalogue = new Map(Object.entries(ERRORS).map(([code, def]) => [code, def.status]));
    expect(documented).toEqual(catalogue);
  });

  it('states the defaults that config.ts applies', () => {
    const cfg = loadConfig({});
    const defaults = new Map(tableRows('Configuration').map((r) => [r[0]!.replaceAll('`', ''), r[1]!]));
    expect(defaults.get('PORT')).toBe(`\`${cfg.port}\``);
    expect(defaults.get('HOST')).toBe(`\`${cfg.host}\``);
    expect(defaults.get('MAX_BODY_BYTES')).toBe(`\`${cfg.maxBodyBytes}\``);
    expect(defaults.get('PIPELINE')).toBe(`\`${cfg.pipeline.join(',')}\``);
    expect(defaults.get('RATE_LIMIT_CONCURRENT')).toBe(`\`${cfg.limits.concurrent}\``);
    expect(defaults.get('EXCHANGE_FEE')).toBe(`\`${cfg.pricing.exchangeFee}\``);
    expect(defaults.get('UPSTREAM_PROVIDER_FEE')).toBe(`\`${cfg.pricing.upstreamProviderFee}\``);
  });
});
