import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { listOperations, projectRoot } from '../../core/openapi/document.js';
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

  it('stopped during its wait for an idle moment, it leaves the process’s immediates working', async () => {
    // In a process of its own: the fault this guards against (clearImmediate() given the wait's Timeout) leaves
    // Node's count of pending immediates one short, after which a setImmediate() callback waits for the next one
    // and the loop spins; ioredis flushes its auto-pipeline on setImmediate, so each Redis command of that
    // process took ~85 ms. Not something to leave behind in this test worker.
    const probe = `
      const v = await import(new URL('core/openapi/validators.ts', 'file://' + process.cwd() + '/').href);
      const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
      // Always busy: once busy() has answered, the warm-up waits on its Timeout, and stop() clears that.
      let looks = 0;
      const stop = v.warmRequestValidators([], () => { looks++; return true; });
      while (looks === 0) await sleep(1);
      stop();
      const first = await new Promise((r) => { setImmediate(() => r('immediate')); setTimeout(() => r('timeout'), 500); });
      const cpu0 = process.cpuUsage();
      await sleep(300);
      const cpu = process.cpuUsage(cpu0);
      console.log(JSON.stringify({ first, idleCpuMs: Math.round((cpu.user + cpu.system) / 1000) }));
      process.exit(0);
    `;
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', probe],
        { cwd: projectRoot(), timeout: 20_000 },
        (err, stdout) => (err ? reject(err) : resolve(stdout)),
      ),
    );
    const r = JSON.parse(out.trim()) as { first: string; idleCpuMs: number };
    // The immediate runs at the next turn, before a 500 ms timer; 300 ms of idling costs next to no CPU
    // (with the fault: 'timeout', and ~300 ms, the loop spinning).
    expect(r.first).toBe('immediate');
    expect(r.idleCpuMs).toBeLessThan(150);
  }, 30_000);
});
