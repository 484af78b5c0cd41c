import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { projectRoot } from '../../core/openapi/document.js';
import { freePort } from '../../scripts/lib/net.js';
import { until } from '../support/until.js';

/**
 * `npm run demo` starts the dev mint, the mock provider and the gateway, prints a funded key that pays a call
 * (the openai SDK), and on SIGTERM to npm stops all three (their ports free again, its temporary store gone).
 * The dev mint and the mock provider started through npm (`mint:dev`, `upstream:mock`) end with npm: `kill $!`
 * in a shell stops them.
 */

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

function env(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !/^(npm_|VITEST|TEST_|NODE_ENV$|GATEWAY_)/.test(k)) out[k] = v;
  }
  return out;
}

function exited(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null
    ? Promise.resolve(child.exitCode)
    : new Promise((r) => child.once('exit', r));
}

describe('npm run demo', () => {
  let child: ChildProcess | undefined;
  afterEach(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await exited(child);
    }
    child = undefined;
  });

  it.each([
    ['Ctrl-C (SIGINT to the terminal process group)', 'group'],
    ['SIGTERM to npm', 'npm'],
  ] as const)(
    'serves a paid call with the key it prints; %s stops all three and removes its store',
    async (_how, target) => {
      const [port, mintPort, upstreamPort] = [await freePort(), await freePort(), await freePort()];
      child = spawn(
        'npm',
        [
          'run',
          'demo',
          '--',
          '--port',
          `${port}`,
          '--mint-port',
          `${mintPort}`,
          '--upstream-port',
          `${upstreamPort}`,
        ],
        // Its own process group, as a shell in a terminal gives a foreground job: Ctrl-C signals the whole group.
        { cwd: projectRoot(), env: env(), detached: true },
      );
      let out = '';
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
      });
      child.stderr?.on('data', (d: Buffer) => {
        out += d.toString();
      });
      await until('the demo prints its key', () => out.includes('Ctrl-C stops all three.'), 240_000, 200);
      const key = /KEY=(sk-\S+)/.exec(out)?.[1];
      const store = /SQLite store in (\S+)\)/.exec(out)?.[1];
      expect(key).toBeDefined();
      expect(out).toContain(`gateway        http://127.0.0.1:${port}`);
      expect(out).toContain(`(1000 sats: 1000000 msats)`);
      const openai = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: key! });
      const r = await openai.chat.completions.create({
        model: 'mock-gpt',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(r.choices[0]?.message.content).toBeTruthy();
      const balance = (await (
        await fetch(`http://127.0.0.1:${port}/v1/wallet/balance`, {
          headers: { authorization: `Bearer ${key}` },
        })
      ).json()) as { balance: number };
      expect(balance.balance).toBe(999_000);

      if (target === 'group') process.kill(-child.pid!, 'SIGINT');
      else child.kill('SIGTERM');
      expect(await exited(child)).toBe(0);
      for (const p of [port, mintPort, upstreamPort]) expect(await canListen(p), `port ${p} free`).toBe(true);
      expect(existsSync(store!)).toBe(false);
      expect(out).toContain('demo stopped: dev mint, mock provider and gateway');
    },
    300_000,
  );

  it.each([
    ['mint:dev', '/v1/info'],
    ['upstream:mock', '/v1/models'],
  ])(
    'npm run %s ends with npm (SIGTERM to npm frees the port)',
    async (script, path) => {
      const port = await freePort();
      child = spawn('npm', ['run', script, '--', '--port', `${port}`], { cwd: projectRoot(), env: env() });
      await until(
        `${script} answers`,
        async () => {
          try {
            return (await fetch(`http://127.0.0.1:${port}${path}`)).ok;
          } catch {
            return false;
          }
        },
        60_000,
        100,
      );
      child.kill('SIGTERM');
      await exited(child);
      await until(`${script}'s port free`, () => canListen(port), 10_000, 50);
    },
    90_000,
  );
});
