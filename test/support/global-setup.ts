import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { freePort, redisAnswers } from '../../scripts/lib/net.js';
import { until } from './until.js';

/**
 * Makes a Redis server available to the suites as TEST_REDIS_URL: REDIS_URL when set, else the one on
 * 127.0.0.1:6379 when it answers, else a `redis-server` from PATH started here on a free loopback port
 * (nothing on disk) and stopped at teardown. Suites use their own random key prefix and clean up.
 */
let child: ChildProcess | undefined;

export { freePort };

export default async function setup(): Promise<() => Promise<void>> {
  const candidates = [process.env.TEST_REDIS_URL, process.env.REDIS_URL, 'redis://127.0.0.1:6379'];
  for (const url of candidates) {
    if (url && (await redisAnswers(url))) {
      process.env.TEST_REDIS_URL = url;
      return async () => {};
    }
  }
  if (spawnSync('redis-server', ['--version']).status !== 0) {
    throw new Error('No Redis answers (REDIS_URL, 127.0.0.1:6379) and no redis-server on PATH to start one');
  }
  const port = await freePort();
  child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
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
