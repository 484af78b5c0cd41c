import { type ChildProcess, spawn } from 'node:child_process';
import { freePort, redisAnswers } from '../lib/net.js';

/**
 * A redis-server of the chaos run's own (never the shared one on 6379): loopback, a free port, AOF with
 * `appendfsync always` in a temp folder, so a kill -9 and a restart lose no acknowledged write.
 */
export interface RedisProcess {
  readonly url: string;
  /** kill -9, then start again on the same port and folder (state comes back from the AOF). */
  crashAndRestart(downMs: number): Promise<void>;
  /** kill -9 (a no-op when it is not running). */
  stop(): Promise<void>;
  /** Start again after `stop()`, on the same port and folder (state comes back from the AOF). */
  start(): Promise<void>;
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
      if (await redisAnswers(url)) return;
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
    start,
  };
}
