import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startChild, waitForHttp } from '../lib/processes.js';
import type { RunningTarget } from './types.js';

/**
 * nginx `proxy_pass` to the mock upstream with a keep-alive upstream pool: the reference for a pure proxy.
 * Debian's binary runs as a non-daemon child with a generated config and every path in a temp dir.
 */

export const NGINX_BIN = '/usr/sbin/nginx';

export function nginxVersion(): string | undefined {
  if (!existsSync(NGINX_BIN)) return undefined;
  try {
    // nginx -v writes to stderr
    const out = execFileSync(NGINX_BIN, ['-v'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return out.trim() || undefined;
  } catch (err) {
    const e = err as { stderr?: string };
    return e.stderr?.trim().replace(/^nginx version: nginx\//, '');
  }
}

/** The generated nginx.conf (exported for the test). */
export function nginxConfig(o: { dir: string; port: number; upstreamPort: number; workers: number }): string {
  return `worker_processes ${o.workers};
daemon off;
pid ${o.dir}/nginx.pid;
error_log ${o.dir}/error.log warn;
events { worker_connections 8192; }
http {
  access_log off;
  client_body_temp_path ${o.dir}/body;
  proxy_temp_path ${o.dir}/proxy;
  fastcgi_temp_path ${o.dir}/fastcgi;
  uwsgi_temp_path ${o.dir}/uwsgi;
  scgi_temp_path ${o.dir}/scgi;
  keepalive_requests 1000000;
  upstream mock {
    server 127.0.0.1:${o.upstreamPort};
    keepalive 512;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:${o.port};
    location / {
      proxy_pass http://mock;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      # streamed completions must reach the client as they come, like the gateway relays them
      proxy_buffering off;
    }
  }
}
`;
}

export async function startNginx(upstreamPort: number, workers: number): Promise<RunningTarget> {
  if (!existsSync(NGINX_BIN))
    throw new SkipTarget(`${NGINX_BIN} not found: install it with \`apt-get install nginx\``);
  const dir = mkdtempSync(join(tmpdir(), 'bench-nginx-'));
  mkdirSync(join(dir, 'logs'));
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, nginxConfig({ dir, port, upstreamPort, workers }));
  const child = startChild(NGINX_BIN, ['-p', dir, '-c', conf, '-e', join(dir, 'error.log')]);
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${baseUrl}/v1/models`, child);
  } catch (err) {
    await child.stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    baseUrl,
    pid: child.pid,
    headers: () => ({}),
    async stop() {
      await child.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Thrown when a target cannot run on this machine (reported as skipped, with the reason). */
export class SkipTarget extends Error {}
