import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { freePort, redisAnswers } from '../../scripts/lib/net.js';
import { until } from './until.js';

/**
 * Makes a Redis server available to the suites as TEST_REDIS_URL: that variable when it is set and answers;
 * else a `redis-server` from PATH started here on a free loopback port (nothing on disk) and stopped at
 * teardown; else REDIS_URL or 127.0.0.1:6379 when one answers. A private server first: the suites sum,
 * audit and clean up by key prefix, and on a shared server whatever else it holds (millions of keys left by
 * a benchmark) would make every prefix scan slow. Suites use their own random key prefix and clean up.
 */
let child: ChildProcess | undefined;

export { freePort };

export default async function setup(): Promise<() => Promise<void>> {
  const chosen = process.env.TEST_REDIS_URL;
  if (chosen && (await redisAnswers(chosen))) return async () => {};
  if (spawnSync('redis-server', ['--version']).status === 0) {
    const port = await freePort();
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    const url = `redis://127.0.0.1:${port}`;
    await until('redis-server answers', () => redisAnswers(url), 5_000, 50).catch(() => {
      throw new Error('Started redis-server but it does not answer');
    });
    process.env.TEST_REDIS_URL = url;
    return async () => {
      child?.kill('SIGTERM');
    };
  }
  for (const url of [process.env.REDIS_URL, 'redis://127.0.0.1:6379']) {
    if (url && (await redisAnswers(url))) {
      process.env.TEST_REDIS_URL = url;
      return async () => {};
    }
  }
  throw new Error('No redis-server on PATH to start, and no Redis answers (TEST_REDIS_URL, REDIS_URL, 6379)');
}
