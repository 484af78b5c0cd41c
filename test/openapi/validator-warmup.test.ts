import { describe, expect, it } from 'vitest';
import { listOperations } from '../../core/openapi/document.js';
import { validatorCompiled, warmRequestValidators } from '../../core/openapi/validators.js';
import { PAID_ROUTES } from '../../core/paid-routes.js';
import { until } from '../support/until.js';

describe('request validators compiled ahead of the first request', () => {
  it('the paid routes at once, every other documented operation in later turns, and stop halts the rest', async () => {
    const now = PAID_ROUTES.filter((r) => !r.multipart);
    const others = listOperations().filter(
      (op) => !now.some((r) => r.path === op.path && r.method === op.method.toUpperCase()),
    );
    expect(others.length).toBeGreaterThan(20);
    for (const r of now) expect(validatorCompiled(r.method, r.path)).toBe(false);
    const stop = warmRequestValidators(now);
    // Synchronously: the paid routes, and nothing else yet (the rest waits for later turns).
    for (const r of now) expect(validatorCompiled(r.method, r.path), r.path).toBe(true);
    expect(others.filter((op) => validatorCompiled(op.method, op.path))).toEqual([]);
    // A few turns later: more of them, one per turn; stop, and nothing more is compiled.
    await until('some operations to be compiled in the background', () =>
      others.some((op) => validatorCompiled(op.method, op.path)),
    );
    stop();
    const compiled = others.filter((op) => validatorCompiled(op.method, op.path)).length;
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(others.filter((op) => validatorCompiled(op.method, op.path)).length).toBe(compiled);
    expect(compiled).toBeLessThan(others.length);
    // Started again, it finishes every one.
    const stop2 = warmRequestValidators([]);
    await until('every operation to be compiled', () =>
      others.every((op) => validatorCompiled(op.method, op.path)),
    );
    stop2();
  });
});
