import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
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

/**
 * `--pin` (bench/lib/args.ts): the CPUs the measured target runs on, and those of everything else of the run
 * (the load generator — the bench process itself —, the mock upstream, a local Redis), as `taskset` lists.
 */
export interface Pinning {
  target: string;
  rest: string;
}

let pinning: Pinning | null = null;

/** The split for `cpuCount` CPUs: the target alone on CPU 0, the rest on the others (null below 2 CPUs). */
export function pinningFor(cpuCount: number): Pinning | null {
  if (cpuCount < 2) return null;
  return { target: '0', rest: cpuCount === 2 ? '1' : `1-${cpuCount - 1}` };
}

/** From now on children start pinned (targets on `p.target`, `role: 'rest'` children on `p.rest`). */
export function pinChildren(p: Pinning | null): void {
  pinning = p;
}

/** The command that starts `cmd` on the CPUs of its role: `taskset -c <cpus> cmd …` when pinning is on. */
export function pinnedCommand(
  cmd: string,
  args: string[],
  role: 'target' | 'rest',
  p: Pinning | null = pinning,
): [string, string[]] {
  if (p === null) return [cmd, args];
  return ['taskset', ['-c', role === 'target' ? p.target : p.rest, cmd, ...args]];
}

/** Moves a running process and all its threads to `cpus` (`taskset -a -p`); answers the list it had before. */
export function pinProcess(pid: number, cpus: string): string {
  const before = execFileSync('taskset', ['-c', '-p', String(pid)], { encoding: 'utf8' });
  execFileSync('taskset', ['-a', '-c', '-p', cpus, String(pid)], { stdio: 'ignore' });
  // "pid 123's current affinity list: 0,1"
  return before.trim().split(': ').pop() ?? '';
}

export function startChild(
  cmdIn: string,
  argsIn: string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; ipc?: boolean; role?: 'target' | 'rest' } = {},
): Child {
  // taskset execs the command: the pid stays the command's own.
  const [cmd, args] = pinnedCommand(cmdIn, argsIn, opts.role ?? 'target');
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
