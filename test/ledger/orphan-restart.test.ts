import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, spawnGateway } from '../../scripts/lib/gateway-process.js';
import { until } from '../support/until.js';

/**
 * A clean restart on the same store: the stopped process held nothing, so the new one notes it at info level
 * ("forgot stopped processes") and does not warn "released what stopped processes held" (a warning is for a
 * process that died holding money: test/ledger/orphan-report.test.ts).
 */
describe('restart on the same SQLite store after a clean stop', () => {
  const dir = mkdtempSync(join(tmpdir(), 'orphan-restart-'));
  let gw: GatewayProcess | undefined;
  afterAll(async () => {
    await gw?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('logs the forgotten process at info, no warning', async () => {
    const env = { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir, ORPHAN_RELEASE_MS: '300', LOG_LEVEL: 'info' };
    const first = await spawnGateway(env);
    await first.kill('SIGTERM');
    expect(first.exitInfo()).toBe('exit code 0, signal null');
    gw = await spawnGateway(env);
    // The first process's heartbeat is older than 300 ms at the latest on the second's next beat (every 100 ms).
    await until(
      'the stopped process is forgotten',
      () => gw!.logs().includes('forgot stopped processes'),
      20_000,
    );
    const line = gw
      .logs()
      .split('\n')
      .find((l) => l.includes('forgot stopped processes'))!;
    expect(JSON.parse(line)).toMatchObject({ level: 30, processes: 1, released: 0 });
    expect(gw.logs()).not.toContain('released what stopped processes held');
  }, 90_000);
});
