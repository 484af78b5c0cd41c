import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockUpstream, startMockUpstream } from '../../bench/upstream/mock-upstream.js';
import { heapSnapshotSignal, signalsKept, stopSignals } from '../../core/shutdown.js';
import { type GatewayProcess, spawnGateway } from '../../scripts/lib/gateway-process.js';
import { until } from '../support/until.js';

/**
 * The signals an operator sends a live gateway besides SIGTERM/SIGINT (graceful-shutdown.test.ts): SIGHUP
 * re-reads models.json (README, docs/pricing.md) and leaves the process serving, alone and under WORKERS=2
 * (the primary passes it to the workers); Node's heap-snapshot signal (`--heapsnapshot-signal=SIGUSR2`, the
 * documented way to take a snapshot of a live process) writes its snapshot and the process goes on.
 * close-with-grace, which runs the graceful shutdown, listens to both by default: each of them used to shut
 * the gateway down.
 */

describe('which signals do not shut the gateway down', () => {
  it('finds the heap-snapshot signal on the command line and in NODE_OPTIONS, in every spelling', () => {
    expect(heapSnapshotSignal([], '')).toBeUndefined();
    expect(heapSnapshotSignal(['--heapsnapshot-signal=SIGUSR2'], '')).toBe('SIGUSR2');
    expect(heapSnapshotSignal(['--heapsnapshot-signal', 'SIGUSR1'], '')).toBe('SIGUSR1');
    expect(heapSnapshotSignal([], '--max-old-space-size=512 --heapsnapshot_signal=SIGUSR2')).toBe('SIGUSR2');
    // The command line comes after NODE_OPTIONS, and its value wins (as in Node).
    expect(heapSnapshotSignal(['--heapsnapshot-signal=SIGUSR1'], '--heapsnapshot-signal=SIGUSR2')).toBe(
      'SIGUSR1',
    );
    expect(heapSnapshotSignal(['--heap-prof'], '--inspect')).toBeUndefined();
  });

  it('keeps SIGHUP always, and the heap-snapshot signal when there is one', () => {
    expect(signalsKept(undefined)).toEqual(['SIGHUP']);
    expect(signalsKept('SIGUSR2')).toEqual(['SIGHUP', 'SIGUSR2']);
    expect(signalsKept('SIGHUP')).toEqual(['SIGHUP']);
  });

  it('stops on SIGTERM, SIGINT, SIGQUIT and SIGUSR2, less the kept ones', () => {
    expect(stopSignals(['SIGHUP'])).toEqual(['SIGTERM', 'SIGINT', 'SIGQUIT', 'SIGUSR2']);
    expect(stopSignals(['SIGHUP', 'SIGUSR2'])).toEqual(['SIGTERM', 'SIGINT', 'SIGQUIT']);
  });
});

describe('signals sent to a running gateway process', () => {
  let up: MockUpstream;
  const dirs: string[] = [];
  const spawned: GatewayProcess[] = [];
  const dir = (prefix: string) => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
  const start = async (env: Record<string, string> = {}): Promise<GatewayProcess> => {
    const gw = await spawnGateway({
      HOST: '127.0.0.1',
      PORT: '0',
      PIPELINE: 'relay',
      UPSTREAM_BASE_URL: up.url,
      DATA_DIR: dir('gw-signals-data-'),
      MODELS_PATH: join(import.meta.dirname, '..', '..', 'docs', 'models.example.json'),
      LOG_LEVEL: 'info',
      ...env,
    });
    spawned.push(gw);
    return gw;
  };
  const healthz = async (gw: GatewayProcess) =>
    (await fetch(`http://127.0.0.1:${gw.port}/healthz`, { headers: { connection: 'close' } })).status;
  const count = (text: string, needle: string) => text.split(needle).length - 1;
  /** Under WORKERS=2: waits until both workers have answered; their pids. */
  const bothWorkers = async (gw: GatewayProcess): Promise<Set<number>> => {
    const pids = new Set<number>();
    await until(
      'both workers answer',
      async () => {
        const r = await fetch(`http://127.0.0.1:${gw.port}/healthz`, { headers: { connection: 'close' } });
        pids.add(((await r.json()) as { pid: number }).pid);
        return pids.size >= 2;
      },
      20_000,
      50,
    );
    return pids;
  };

  beforeAll(async () => {
    up = await startMockUpstream();
  });
  afterAll(async () => {
    await Promise.allSettled(spawned.map((g) => g.kill('SIGKILL')));
    await up?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('a SIGTERM sent the moment the process announces it listens is a graceful stop, not a kill', async () => {
    // A supervisor (or a test: spawnGateway) signals as soon as it reads "gateway listening". A preload sends
    // the process SIGTERM from inside the write of that line: a signal a process sends itself is delivered
    // before kill() returns, so without a handler installed by then the default action ends it at once.
    const preload = join(dir('gw-signals-preload-'), 'term-on-listening.mjs');
    writeFileSync(
      preload,
      `const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, ...rest) => {
  const done = write(chunk, ...rest);
  if (String(chunk).includes('gateway listening')) process.kill(process.pid, 'SIGTERM');
  return done;
};
`,
    );
    const gw = await start({ NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${preload}` });
    expect(await gw.exited).toBe('exit code 0, signal null');
    expect(gw.logs()).toContain('"signal":"SIGTERM"');
    expect(gw.logs()).toContain('shut down cleanly');
  }, 60_000);

  it('SIGHUP re-reads models.json and the process goes on serving', async () => {
    const gw = await start();
    const before = count(gw.logs(), 'models.json reloaded');
    process.kill(gw.pid!, 'SIGHUP');
    // Nothing changed the file, so the watcher has nothing to re-read: the reload is the signal's.
    await until(
      'the reload on SIGHUP',
      async () => count(gw.logs(), 'models.json reloaded') > before,
      10_000,
      50,
    );
    expect(await healthz(gw)).toBe(200);
    expect(gw.alive()).toBe(true);
    expect(gw.logs()).not.toContain('shutting down');
    await gw.kill('SIGTERM');
    expect(gw.exitInfo()).toBe('exit code 0, signal null');
  }, 60_000);

  it('WORKERS=2: SIGHUP to the primary reaches both workers; none stops or is replaced', async () => {
    const gw = await start({ WORKERS: '2' });
    const pids = await bothWorkers(gw);
    const before = count(gw.logs(), 'models.json reloaded');
    process.kill(gw.pid!, 'SIGHUP');
    await until(
      'both workers reloaded',
      async () => count(gw.logs(), 'models.json reloaded') >= before + 2,
      10_000,
      50,
    );
    for (const pid of pids) expect(() => process.kill(pid, 0)).not.toThrow();
    expect(await healthz(gw)).toBe(200);
    expect(gw.logs()).not.toContain('a worker died');
    expect(gw.logs()).not.toContain('stopping the workers');
    await gw.kill('SIGTERM');
    expect(gw.exitInfo()).toBe('exit code 0, signal null');
  }, 60_000);

  it('WORKERS=2: SIGUSR2 or SIGQUIT to the primary drains the workers as SIGTERM does, as one process does', async () => {
    for (const signal of ['SIGUSR2', 'SIGQUIT'] as const) {
      const gw = await start({ WORKERS: '2' });
      await bothWorkers(gw);
      process.kill(gw.pid!, signal);
      // Its default action would end the primary at once (and the workers with it, without a drain).
      expect(await gw.exited).toBe('exit code 0, signal null');
      expect(gw.logs()).toContain(`"signal":"${signal}"`);
      expect(count(gw.logs(), 'shut down cleanly')).toBe(2);
      expect(gw.logs()).toContain('all workers stopped');
    }
  }, 90_000);

  it('the heap-snapshot signal writes a snapshot and the process goes on serving', async () => {
    const snaps = dir('gw-signals-snap-');
    const gw = await start({
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${snaps}`,
    });
    process.kill(gw.pid!, 'SIGUSR2');
    const written = () => readdirSync(snaps).filter((f) => f.endsWith('.heapsnapshot'));
    await until('the snapshot file', async () => written().length === 1, 20_000, 50);
    // Written synchronously on the main thread: an answer means the snapshot is done.
    await until(
      'an answer after the snapshot',
      async () => (await healthz(gw).catch(() => 0)) === 200,
      30_000,
      100,
    );
    expect(gw.alive()).toBe(true);
    expect(gw.logs()).not.toContain('shutting down');
    await gw.kill('SIGTERM');
    expect(gw.exitInfo()).toBe('exit code 0, signal null');
  }, 90_000);
});
