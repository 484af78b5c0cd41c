import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { freePort, startChild, waitForHttp } from '../lib/processes.js';
import type { RunningTarget } from './types.js';

/**
 * Portkey's open-source gateway (`@portkey-ai/gateway`, its Node server build) pointed at the mock upstream
 * per request with `x-portkey-provider: openai` + `x-portkey-custom-host`. Its server cannot be told a bind
 * address, so a preload pins listens to 127.0.0.1 (bench/support/loopback-preload.mjs).
 */

const require = createRequire(import.meta.url);

function packageDir(): string {
  return dirname(require.resolve('@portkey-ai/gateway/package.json'));
}

export function portkeyVersion(): string {
  return (JSON.parse(readFileSync(join(packageDir(), 'package.json'), 'utf8')) as { version: string })
    .version;
}

export async function startPortkey(upstreamUrl: string): Promise<RunningTarget> {
  const port = await freePort();
  const child = startChild(
    process.execPath,
    [
      '--import',
      './bench/support/loopback-preload.mjs',
      join(packageDir(), 'build/start-server.js'),
      `--port=${port}`,
      '--headless',
    ],
    { env: { ...process.env, NODE_ENV: 'production' } },
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${baseUrl}/`, child);
  } catch (err) {
    await child.stop();
    throw err;
  }
  const headers = {
    authorization: 'Bearer sk-bench-not-a-real-key',
    'x-portkey-provider': 'openai',
    'x-portkey-custom-host': upstreamUrl,
  };
  return { baseUrl, pid: child.pid, headers: () => headers, stop: () => child.stop() };
}
