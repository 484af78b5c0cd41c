import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort } from './global-setup.js';

const run = promisify(execFile);

/**
 * A throw-away 3-master Redis Cluster on loopback: three `redis-server --cluster-enabled yes` processes on
 * free ports (data and nodes.conf in a temp dir, nothing persisted), joined with `redis-cli --cluster
 * create --cluster-yes`. `stop()` kills them and removes the temp dir.
 */
export interface TestCluster {
  nodes: Array<{ host: string; port: number }>;
  stop(): Promise<void>;
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`Redis Cluster: timed out waiting for ${what}`);
}

async function ask(port: number, ...args: string[]): Promise<string> {
  const r = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  r.on('error', () => {});
  try {
    await r.connect();
    return String(await r.call(args[0]!, ...args.slice(1)));
  } finally {
    r.disconnect();
  }
}

export async function startRedisCluster(): Promise<TestCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-cluster-'));
  const procs: ChildProcess[] = [];
  const nodes: Array<{ host: string; port: number }> = [];
  const stop = async () => {
    for (const p of procs) p.kill('SIGKILL');
    await Promise.all(procs.map((p) => (p.exitCode === null ? new Promise((r) => p.once('exit', r)) : null)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const busPort = await freePort();
      const p = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--cluster-enabled',
          'yes',
          '--cluster-port',
          String(busPort),
          '--cluster-config-file',
          join(dir, `nodes-${port}.conf`),
          '--dir',
          dir,
          '--save',
          '',
          '--appendonly',
          'no',
        ],
        { stdio: 'ignore' },
      );
      procs.push(p);
      nodes.push({ host: '127.0.0.1', port });
    }
    for (const n of nodes)
      await waitFor(async () => (await ask(n.port, 'PING')) === 'PONG', `node ${n.port}`);
    await run(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...nodes.map((n) => `127.0.0.1:${n.port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
      {
        timeout: 30_000,
      },
    );
    for (const n of nodes) {
      await waitFor(
        async () => (await ask(n.port, 'CLUSTER', 'INFO')).includes('cluster_state:ok'),
        `cluster_state:ok on ${n.port}`,
      );
    }
    return { nodes, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
