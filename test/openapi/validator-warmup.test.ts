import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
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
    // Later turns: one operation per turn (not all at once); stopped at the turn that looked up the first
    // of them, nothing more is looked up.
    const compiledNow = () => others.filter((op) => validatorCompiled(op.method, op.path)).length;
    for (let turn = 0; turn < 500 && compiledNow() === 0; turn++) await new Promise((r) => setImmediate(r));
    stop();
    const compiled = compiledNow();
    expect(compiled).toBe(1);
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

  it('compiles nothing while a request is in flight, the rest once idle; stop ends the wait', async () => {
    // A fresh module: the test above left its validators compiled.
    vi.resetModules();
    const v = await import('../../core/openapi/validators.js');
    const all = listOperations();
    const compiled = () => all.filter((op) => v.validatorCompiled(op.method, op.path)).length;
    let busy = true;
    let looks = 0;
    const stop = v.warmRequestValidators([], () => {
      looks++;
      // Busy at first; then idle until the last one is compiled, and busy again from that moment on.
      return busy || compiled() === all.length;
    });
    await sleep(12 * v.WARM_IDLE_RETRY_MS); // a negative over a window: it keeps looking, compiles nothing
    expect(compiled()).toBe(0);
    expect(looks).toBeGreaterThan(1);
    busy = false;
    await until('every operation to be compiled once idle', () => compiled() === all.length);
    // Done: with nothing left it no longer looks, though busy (no timer left polling under steady traffic).
    await sleep(2 * v.WARM_IDLE_RETRY_MS);
    const done = looks;
    await sleep(12 * v.WARM_IDLE_RETRY_MS);
    expect(looks).toBe(done);
    stop();
    // Stopped while waiting for an idle moment: nothing is compiled after.
    vi.resetModules();
    const w = await import('../../core/openapi/validators.js');
    let busy2 = true;
    const stop2 = w.warmRequestValidators([], () => busy2);
    await sleep(3 * w.WARM_IDLE_RETRY_MS);
    stop2();
    busy2 = false;
    await sleep(12 * w.WARM_IDLE_RETRY_MS);
    expect(all.filter((op) => w.validatorCompiled(op.method, op.path))).toEqual([]);
  });
});
