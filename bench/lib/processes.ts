import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { request } from 'undici';

/** Child processes of a bench run: spawned with a bounded log tail, awaited until they answer, stopped by pid. */

export interface Child {
  readonly proc: ChildProcess;
  readonly pid: number;
  /** Last few KB of stdout+stderr, for failure messages. */
  tail(): string;
  stop(): Promise<void>;
}

const TAIL_BYTES = 4096;

export function startChild(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; ipc?: boolean } = {},
): Child {
  const proc = spawn(cmd, args, {
    env: opts.env ?? process.env,
    cwd: opts.cwd,
    stdio: opts.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const keep = (b: Buffer) => {
    log = (log + b.toString('utf8')).slice(-TAIL_BYTES);
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  if (proc.pid === undefined) throw new Error(`could not start ${cmd}`);
  return {
    proc,
    pid: proc.pid,
    tail: () => log.trim(),
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A free loopback port (bound then released; a small race is acceptable on a bench machine). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** Polls `url` until it answers with any HTTP status, or fails after `timeoutMs` (with the child's log). */
export async function waitForHttp(url: string, child: Child, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.proc.exitCode !== null)
      throw new Error(`process exited (${child.proc.exitCode}): ${child.tail()}`);
    try {
      const r = await request(url, { headersTimeout: 1000, bodyTimeout: 1000 });
      await r.body.dump();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`no answer from ${url} within ${timeoutMs} ms: ${child.tail()}`);
}
