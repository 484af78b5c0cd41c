import { type ChildProcess, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { projectRoot } from '../../core/openapi/document.js';

/**
 * The gateway as its own OS process (`node --import tsx core/main.ts`, or the build named by GATEWAY_ENTRY), for tools that must watch it live,
 * die and restart: the fuzzer and the chaos run. The environment is the caller's, minus anything that would
 * point the child at the caller's own store, mint or provider, plus `env`.
 */

export interface GatewayProcess {
  readonly port: number;
  readonly pid: number | undefined;
  /** Everything the process wrote to stdout/stderr so far (start-up needs LOG_LEVEL info or lower: the port is read from the "gateway listening" line). */
  logs(): string;
  alive(): boolean;
  /** Exit code/signal once it ended. */
  exitInfo(): string | undefined;
  /**
   * Closes this side's reading ends of the process's stdout and stderr, as when the supervisor that read them
   * has exited: the process's later writes there fail with EPIPE. `logs()` stops growing.
   */
  dropOutput(): void;
  /** Sends `signal` and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Resolves with the exit info when the process ends. */
  readonly exited: Promise<string>;
}

export async function spawnGateway(env: Record<string, string>, startMs = 60_000): Promise<GatewayProcess> {
  const root = projectRoot();
  // GATEWAY_ENTRY (set by the full test command after `npm run build`): the built gateway, which starts on a
  // second of CPU less than the sources through tsx.
  const built = process.env.GATEWAY_ENTRY;
  const args = built ? [resolve(root, built)] : ['--import', 'tsx', join(root, 'core', 'main.ts')];
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: root,
    env: { ...inheritedEnv(process.env), NODE_ENV: 'test', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  let exit: string | undefined;
  const exited = new Promise<string>((resolve) => {
    child.on('exit', (code, signal) => {
      exit = `exit code ${code}, signal ${signal}`;
      resolve(exit);
    });
  });
  child.stdout?.on('data', (d: Buffer) => out.push(d));
  child.stderr?.on('data', (d: Buffer) => out.push(d));
  const logs = () => Buffer.concat(out).toString('utf8');
  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    if (exit !== undefined) return;
    child.kill(signal);
    await exited;
  };
  const until = Date.now() + startMs;
  for (;;) {
    const m = /"port":(\d+)[^\n]*gateway listening/.exec(logs());
    if (m) {
      return {
        port: Number(m[1]),
        pid: child.pid,
        logs,
        alive: () => exit === undefined,
        exitInfo: () => exit,
        kill,
        dropOutput: () => {
          child.stdout?.destroy();
          child.stderr?.destroy();
        },
        exited,
      };
    }
    if (exit !== undefined || Date.now() > until) {
      await kill();
      const why = exit ?? 'no "gateway listening" line in time';
      throw new Error(`the gateway did not start (${why})\n--- output ---\n${logs().slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The caller's environment without variables that would point the child at the caller's own services. */
function inheritedEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) continue;
    if (/^(REDIS_|DATA_DIR|CASHU_|PIPELINE|ADMIN_|UPSTREAM_|MODELS_PATH|FIXED_|BTC_|PORT$|HOST$)/.test(k)) {
      continue;
    }
    out[k] = v;
  }
  return out;
}
