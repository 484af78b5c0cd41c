/**
 * `npm run demo [-- --port 8000 --mint-port 3338 --upstream-port 8001 --sats 1000]`
 *
 * The whole local stack in one command: the dev Cashu mint (scripts/dev-mint.ts), the mock model provider
 * (bench/upstream/mock-upstream.ts) and the gateway (built like `npm start`, SQLite store in a fresh temporary
 * folder). Waits until each answers, funds a key with a token of the dev mint, and prints the URLs, the key and
 * `curl` lines to try. Ctrl-C or SIGTERM stops all three: each runs in its own process group, and the whole group
 * is signalled (children included), then the temporary folder is removed. Logs: `<folder>/<name>.log`.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { getEncodedToken, Wallet } from '@cashu/cashu-ts';
import { projectRoot } from '../core/openapi/document.js';
import { waitReady } from './lib/wait-ready.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '8000' },
    'mint-port': { type: 'string', default: '3338' },
    'upstream-port': { type: 'string', default: '8001' },
    sats: { type: 'string', default: '1000' },
  },
});
const port = Number(values.port);
const mintPort = Number(values['mint-port']);
const upstreamPort = Number(values['upstream-port']);
const sats = Number(values.sats);
if (![port, mintPort, upstreamPort, sats].every((n) => Number.isInteger(n) && n > 0)) {
  console.error('--port, --mint-port, --upstream-port and --sats must be positive integers');
  process.exit(2);
}

const root = projectRoot();
const dir = mkdtempSync(join(tmpdir(), 'gateway-demo-'));
const mintUrl = `http://127.0.0.1:${mintPort}`;
const upstreamUrl = `http://127.0.0.1:${upstreamPort}/v1`;
const gatewayUrl = `http://127.0.0.1:${port}`;
const children: Array<{ name: string; child: ChildProcess; exited: Promise<void> }> = [];
let stopping = false;
let stopped: Promise<never> | undefined;

/** A child in its own process group (detached), its output in `<dir>/<name>.log`. */
function start(name: string, args: string[], env: Record<string, string> = {}): void {
  const log = openSync(join(dir, `${name}.log`), 'a');
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', log, log],
    detached: true,
  });
  closeSync(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  children.push({ name, child, exited });
  child.once('exit', (code, signal) => {
    if (stopping) return;
    console.error(`${name} exited (code ${code}, signal ${signal}); its log:\n${tail(name)}`);
    void stop(1);
  });
}

function tail(name: string): string {
  try {
    return readFileSync(join(dir, `${name}.log`), 'utf8')
      .split('\n')
      .slice(-30)
      .join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * Signals each child's whole process group, waits up to 10 s for the exits, then SIGKILLs what is left; once,
 * however many signals come (Ctrl-C reaches this process from the terminal and again from npm, which forwards it).
 */
function stop(code: number): Promise<never> {
  stopped ??= stopAll(code);
  return stopped;
}

async function stopAll(code: number): Promise<never> {
  stopping = true;
  const signal = (c: ChildProcess, s: NodeJS.Signals) => {
    try {
      if (c.pid !== undefined) process.kill(-c.pid, s);
    } catch {
      // the group is gone already
    }
  };
  for (const { child } of children) signal(child, 'SIGTERM');
  const all = Promise.all(children.map((c) => c.exited));
  const late = await Promise.race([all.then(() => false), new Promise((r) => setTimeout(r, 10_000, true))]);
  if (late) for (const { child } of children) signal(child, 'SIGKILL');
  for (const { child } of children) signal(child, 'SIGKILL'); // workers or grandchildren left in a group
  rmSync(dir, { recursive: true, force: true });
  console.error('demo stopped: dev mint, mock provider and gateway');
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

async function ready(what: string, url: string, name: string): Promise<void> {
  const late = await waitReady([url], { timeoutMs: 120_000 });
  if (late.length > 0) {
    console.error(`${what} did not answer at ${url} (${late[0]!.last}); its log:\n${tail(name)}`);
    await stop(1);
  }
}

console.error(`starting the dev mint, the mock provider and the gateway (logs in ${dir}) …`);
start('dev-mint', ['--import', 'tsx', 'scripts/dev-mint.ts', '--port', String(mintPort)]);
start('mock-provider', [
  '--import',
  'tsx',
  'bench/upstream/mock-upstream.ts',
  '--port',
  String(upstreamPort),
]);
// The gateway as `npm start` runs it: dist/, rebuilt only when the sources changed.
const build = spawnSync(process.execPath, ['scripts/build.mjs', '--if-changed'], {
  cwd: root,
  stdio: 'inherit',
});
if (build.status !== 0) {
  console.error('the build failed (npm run build shows why)');
  await stop(1);
}
start('gateway', ['dist/core/main.js'], {
  PORT: String(port),
  HOST: '127.0.0.1',
  DATA_DIR: join(dir, 'data'),
  CASHU_MINTS: mintUrl,
  UPSTREAM_BASE_URL: upstreamUrl,
});
await ready('the dev mint', `${mintUrl}/v1/info`, 'dev-mint');
await ready('the mock provider', `${upstreamUrl}/models`, 'mock-provider');
await ready('the gateway', `${gatewayUrl}/readyz`, 'gateway');

let apiKey: string;
try {
  const wallet = new Wallet(mintUrl, { unit: 'sat' });
  await wallet.loadMint();
  const quote = await wallet.createMintQuoteBolt11(sats);
  const proofs = await wallet.mintProofsBolt11(sats, quote);
  const token = getEncodedToken({ mint: mintUrl, unit: 'sat', proofs });
  const r = await fetch(`${gatewayUrl}/v1/wallet/create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ cashu_token: token }),
  });
  const body = (await r.json()) as { api_key?: string };
  if (!r.ok || !body.api_key)
    throw new Error(`POST /v1/wallet/create answered ${r.status}: ${JSON.stringify(body)}`);
  apiKey = body.api_key;
} catch (err) {
  console.error(`could not fund a key: ${err instanceof Error ? err.message : String(err)}`);
  await stop(1);
}

console.log(`dev mint       ${mintUrl}        (fake Lightning: quotes are paid at once)
mock provider  ${upstreamUrl}
gateway        ${gatewayUrl}        (SQLite store in ${join(dir, 'data')})
key            ${apiKey!}        (${sats} sats: ${sats * 1000} msats)

Try:
  KEY=${apiKey!}
  curl -s ${gatewayUrl}/v1/chat/completions -H "authorization: Bearer $KEY" -H 'content-type: application/json' \\
    -d '{"model":"mock-gpt","messages":[{"role":"user","content":"hi"}]}'
  curl -s ${gatewayUrl}/v1/wallet/balance -H "authorization: Bearer $KEY"
  curl -s ${gatewayUrl}/v1/models
  TOKEN=$(npm run -s token -- 500 --mint ${mintUrl}); curl -s ${gatewayUrl}/v1/wallet/topup -H "authorization: Bearer $KEY" \\
    -H 'content-type: application/json' -d "{\\"cashu_token\\":\\"$TOKEN\\"}"

Ctrl-C stops all three.`);
