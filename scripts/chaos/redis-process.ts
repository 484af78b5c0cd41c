import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

/**
 * A redis-server of the chaos run's own (never the shared one on 6379): loopback, a free port, AOF with
 * `appendfsync always` in a temp folder, so a kill -9 and a restart lose no acknowledged write.
 */
export interface RedisProcess {
  readonly url: string;
  /** kill -9, then start again on the same port and folder (state comes back from the AOF). */
  crashAndRestart(downMs: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedisProcess(dir: string): Promise<RedisProcess> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
      ],
      { stdio: 'ignore' },
    );
    for (let i = 0; i < 200; i++) {
      if (await answers(url)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('redis-server did not answer');
  };
  const kill = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const done = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await done;
  };
  await start();
  return {
    url,
    async crashAndRestart(downMs) {
      await kill();
      await new Promise((r) => setTimeout(r, downMs));
      await start();
    },
    stop: kill,
  };
}

async function answers(url: string): Promise<boolean> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  r.on('error', () => {});
  try {
    await r.connect();
    return (await r.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}
