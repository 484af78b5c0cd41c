import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import type { HostPort } from '../../core/store/redis-config.js';
import { freePort } from './net.js';

const run = promisify(execFile);

/**
 * Throw-away Redis topologies on loopback built from Debian's `redis-server` (tests, the chaos run, the
 * bench): a Redis Cluster (3 masters, with or without one replica each) and a Sentinel set-up (a master, one
 * replica, three sentinels: `redis-server --sentinel`). Nothing is persisted; every process and the temp dir
 * go at `stop()`. Each node can be SIGKILLed and restarted (same port, same nodes.conf), as a supervisor
 * would, to test failover.
 *
 * Cluster bus ports are given explicitly (`--cluster-port`, a free port) instead of the default port + 10000,
 * which would not exist above 55535.
 */

export interface RedisTopology {
  form: 'cluster' | 'sentinel';
  /** Seeds (cluster: the first masters) or the sentinels. */
  nodes: HostPort[];
  /** The gateway's environment for this topology (REDIS_CLUSTER_NODES, or REDIS_SENTINELS + NAME). */
  env: Record<string, string>;
  /** Every data node's port. */
  dataPorts(): number[];
  /** The data node ports that are masters now (asked of the live nodes). */
  masters(): Promise<number[]>;
  kill(port: number): Promise<void>;
  restart(port: number): Promise<void>;
  /**
   * Freezes a node (SIGSTOP) without closing its connections: it answers nothing, and a master still counts
   * a frozen replica as in sync until its replication timeout. `resume` (SIGCONT) lets it catch up.
   */
  pause(port: number): void;
  resume(port: number): void;
  /** Waits until every slot (cluster) or the master (sentinel) is served again and writes reach a replica. */
  waitHealthy(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** Backwards name: the cluster helper's result. */
export type TestCluster = RedisTopology;

export async function waitFor(
  check: () => Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`Redis topology: timed out waiting for ${what}`);
}

/** One command on a fresh connection to `port` (no retries), as a string. */
export async function ask(port: number, ...args: string[]): Promise<string> {
  const r = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1000,
  });
  r.on('error', () => {});
  try {
    await r.connect();
    const v = await r.call(args[0]!, ...args.slice(1));
    return Array.isArray(v) ? JSON.stringify(v) : String(v);
  } finally {
    r.disconnect();
  }
}

/**
 * Loopback ports for one topology, each handed out once: the kernel may give a just-closed port back, and two
 * nodes (or a node and its bus) on one port leave one of them unable to start.
 */
function portPicker(): () => Promise<number> {
  const taken = new Set<number>();
  return async () => {
    for (;;) {
      const port = await freePort();
      if (!taken.has(port)) {
        taken.add(port);
        return port;
      }
    }
  };
}

class Processes {
  readonly dir = mkdtempSync(join(tmpdir(), 'gw-redis-'));
  private readonly procs = new Map<number, ChildProcess>();
  private readonly argv = new Map<number, string[]>();

  start(port: number, args: string[]): void {
    this.argv.set(port, args);
    this.procs.set(port, spawn('redis-server', args, { stdio: 'ignore' }));
  }
  async kill(port: number): Promise<void> {
    const p = this.procs.get(port);
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const gone = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await gone;
  }
  restart(port: number): void {
    this.start(port, this.argv.get(port)!);
  }
  signal(port: number, signal: 'SIGSTOP' | 'SIGCONT'): void {
    const p = this.procs.get(port);
    if (!p || p.exitCode !== null || p.signalCode !== null) throw new Error(`node ${port} is not running`);
    p.kill(signal);
  }
  async stop(): Promise<void> {
    await Promise.all([...this.procs.keys()].map((p) => this.kill(p)));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

// Nothing on disk; a replica syncs at once (the default waits 5 s for more replicas to share one transfer).
const EPHEMERAL = [
  '--bind',
  '127.0.0.1',
  '--save',
  '',
  '--appendonly',
  'no',
  '--repl-diskless-sync-delay',
  '0',
];

/** The master has a replica that is in sync (state=online), so WAIT 1 can succeed. */
const replicaOnline = (info: string) => /^slave\d+:.*state=online/m.test(info);

/**
 * A 3-master Redis Cluster; `replicas: 1` adds a replica to each (6 nodes). `nodeTimeoutMs` is the
 * cluster-node-timeout: a master silent that long is failed over to its replica.
 */
export async function startRedisCluster(
  opts: { replicas?: 0 | 1; nodeTimeoutMs?: number } = {},
): Promise<RedisTopology> {
  const replicas = opts.replicas ?? 0;
  const ps = new Processes();
  const nextPort = portPicker();
  const ports: number[] = [];
  try {
    for (let i = 0; i < 3 * (1 + replicas); i++) {
      const port = await nextPort();
      const bus = await nextPort();
      ps.start(port, [
        '--port',
        String(port),
        ...EPHEMERAL,
        '--cluster-enabled',
        'yes',
        '--cluster-port',
        String(bus),
        '--cluster-config-file',
        join(ps.dir, `nodes-${port}.conf`),
        '--cluster-node-timeout',
        String(opts.nodeTimeoutMs ?? 2000),
        // A replica may always take over, however long it was cut off (loopback tests kill at will).
        '--cluster-replica-validity-factor',
        '0',
        '--dir',
        ps.dir,
      ]);
      ports.push(port);
    }
    for (const p of ports) await waitFor(async () => (await ask(p, 'PING')) === 'PONG', `node ${p}`);
    await run(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...ports.map((p) => `127.0.0.1:${p}`),
        '--cluster-replicas',
        String(replicas),
        '--cluster-yes',
      ],
      { timeout: 60_000 },
    );
    const topo: RedisTopology = {
      form: 'cluster',
      nodes: ports.slice(0, 3).map((port) => ({ host: '127.0.0.1', port })),
      env: { REDIS_CLUSTER_NODES: ports.map((p) => `127.0.0.1:${p}`).join(',') },
      dataPorts: () => [...ports],
      async masters() {
        for (const p of ports) {
          const text = await ask(p, 'CLUSTER', 'NODES').catch(() => '');
          if (text === '') continue;
          return text
            .split('\n')
            .filter((l) => /\bmaster\b/.test(l.split(' ')[2] ?? '') && !/fail/.test(l.split(' ')[2] ?? ''))
            .map((l) => Number(/:(\d+)@/.exec(l)?.[1]));
        }
        return [];
      },
      kill: (port) => ps.kill(port),
      pause: (port) => ps.signal(port, 'SIGSTOP'),
      resume: (port) => ps.signal(port, 'SIGCONT'),
      async restart(port) {
        ps.restart(port);
        await waitFor(async () => (await ask(port, 'PING')) === 'PONG', `node ${port} back`);
      },
      async waitHealthy(timeoutMs = 30_000) {
        await waitFor(
          async () => {
            for (const p of ports) {
              const info = await ask(p, 'CLUSTER', 'INFO').catch(() => '');
              if (info !== '' && !info.includes('cluster_state:ok')) return false;
            }
            const masters = await topo.masters();
            if (masters.length !== 3) return false;
            if (replicas === 0) return true;
            for (const m of masters) {
              if (!replicaOnline(await ask(m, 'INFO', 'replication'))) return false;
            }
            return true;
          },
          'a healthy cluster',
          timeoutMs,
        );
      },
      stop: () => ps.stop(),
    };
    await topo.waitHealthy(60_000);
    return topo;
  } catch (err) {
    await ps.stop();
    throw err;
  }
}

/** The master name the Sentinel set-up monitors. */
export const SENTINEL_MASTER = 'gwmaster';

/**
 * A Sentinel set-up: a master, one replica and three sentinels (quorum 2) that fail the master over after
 * `downAfterMs` of silence.
 */
export async function startRedisSentinel(opts: { downAfterMs?: number } = {}): Promise<RedisTopology> {
  const ps = new Processes();
  const nextPort = portPicker();
  try {
    const master = await nextPort();
    const replica = await nextPort();
    ps.start(master, ['--port', String(master), ...EPHEMERAL, '--dir', ps.dir]);
    ps.start(replica, [
      '--port',
      String(replica),
      ...EPHEMERAL,
      '--dir',
      ps.dir,
      '--replicaof',
      '127.0.0.1',
      String(master),
    ]);
    const data = [master, replica];
    for (const p of data) await waitFor(async () => (await ask(p, 'PING')) === 'PONG', `node ${p}`);
    await waitFor(
      async () => /connected_slaves:1/.test(await ask(master, 'INFO', 'replication')),
      'the replica to attach',
    );
    const sentinels: number[] = [];
    for (let i = 0; i < 3; i++) {
      const port = await nextPort();
      const conf = join(ps.dir, `sentinel-${port}.conf`);
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${ps.dir}`,
          `logfile ${join(ps.dir, `sentinel-${port}.log`)}`,
          `sentinel monitor ${SENTINEL_MASTER} 127.0.0.1 ${master} 2`,
          `sentinel down-after-milliseconds ${SENTINEL_MASTER} ${opts.downAfterMs ?? 1000}`,
          // A split vote retries after twice this (the default, 3 minutes, would stall a test run).
          `sentinel failover-timeout ${SENTINEL_MASTER} 3000`,
          `sentinel parallel-syncs ${SENTINEL_MASTER} 1`,
          '',
        ].join('\n'),
      );
      ps.start(port, [conf, '--sentinel']);
      sentinels.push(port);
    }
    const currentMaster = async (): Promise<number> => {
      for (const s of sentinels) {
        const a = await ask(s, 'SENTINEL', 'get-master-addr-by-name', SENTINEL_MASTER).catch(() => '');
        if (a !== '') return Number((JSON.parse(a) as string[])[1]);
      }
      return 0;
    };
    const topo: RedisTopology = {
      form: 'sentinel',
      nodes: sentinels.map((port) => ({ host: '127.0.0.1', port })),
      env: {
        REDIS_SENTINELS: sentinels.map((p) => `127.0.0.1:${p}`).join(','),
        REDIS_SENTINEL_NAME: SENTINEL_MASTER,
      },
      dataPorts: () => [...data],
      async masters() {
        const m = await currentMaster();
        return m === 0 ? [] : [m];
      },
      kill: (port) => ps.kill(port),
      pause: (port) => ps.signal(port, 'SIGSTOP'),
      resume: (port) => ps.signal(port, 'SIGCONT'),
      async restart(port) {
        ps.restart(port);
        await waitFor(async () => (await ask(port, 'PING')) === 'PONG', `node ${port} back`);
      },
      async waitHealthy(timeoutMs = 30_000) {
        await waitFor(
          async () => {
            const m = await currentMaster();
            if (m === 0) return false;
            const info = await ask(m, 'INFO', 'replication');
            if (!/role:master/.test(info) || !replicaOnline(info)) return false;
            // Every sentinel knows the other two (a failover needs a majority of them to agree).
            for (const s of sentinels) {
              const others = await ask(s, 'SENTINEL', 'sentinels', SENTINEL_MASTER);
              if ((JSON.parse(others) as unknown[]).length < 2) return false;
            }
            return true;
          },
          'a healthy Sentinel set-up',
          timeoutMs,
        );
      },
      stop: () => ps.stop(),
    };
    await topo.waitHealthy(60_000);
    return topo;
  } catch (err) {
    await ps.stop();
    throw err;
  }
}
