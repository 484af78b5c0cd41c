import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../core/openapi/document.js';
import { freePort } from '../../scripts/lib/net.js';
import { until } from '../support/until.js';

/**
 * The README's walkthroughs, each run whole as a newcomer pastes it: the fenced block after each
 * `<!-- walkthrough: name -->` (blocks sharing a name run in order, in one shell) runs in `bash` in a fresh copy of
 * the repository (its files as they are now, git-initialised, node_modules linked, dist built once), with the
 * README's ports swapped for free ones so the suite runs beside others (two walkthroughs at a time), under a time
 * limit. Each must print the
 * values the README says it prints, and leave `git status` clean (what it makes is ignored or under data/).
 * Whatever a block left running is stopped afterwards by its process group (and the cluster's daemons by port).
 */

const root = projectRoot();
const readme = readFileSync(join(root, 'README.md'), 'utf8');

/** name → its blocks' text, in README order. */
function walkthroughs(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const re = /<!-- walkthrough: ([a-z0-9-]+) -->\n```sh\n([\s\S]*?)\n```/g;
  for (const m of readme.matchAll(re)) out.set(m[1]!, [...(out.get(m[1]!) ?? []), m[2]!]);
  return out;
}

interface Case {
  /** The ports the README's block uses; each is replaced by a free one (cluster ports: port + 10000 free too). */
  ports: number[];
  clusterPorts?: number[];
  /** What the output must show (after the same port substitution). */
  expect: RegExp[];
  timeoutMs: number;
}

const CASES: Record<string, Case> = {
  'try-it-locally': {
    ports: [3338, 8001, 8000],
    expect: [
      /"api_key":"sk-[^"]+","balance":1000000/,
      /"x-node-cost":\{"sats":1,"msats":1000,/,
      /"balance":999000/,
      /"cashu_token":"cashuB[^"]+","amount":999,"mint":"http:\/\/127\.0\.0\.1:3338","unit":"sat","balance":0\}/,
    ],
    timeoutMs: 120_000,
  },
  'lightning-address-refund': {
    ports: [3342, 3341, 8005, 8004, 8006],
    expect: [
      /"refund_address":"alice@127\.0\.0\.1:8004"/,
      /"amount_msats":990000,"fee_msats":0,"fee_reserve_msats":10000/,
    ],
    timeoutMs: 120_000,
  },
  'lightning-and-foreign-mint': {
    ports: [3340, 3339, 8003, 8002],
    expect: [
      /"status":"pending","amount_sats":1000,"invoice":"lnbcrt/,
      /"status":"issued","amount_sats":1000,[^\n]*"msats":1000000,"api_key":"sk-/,
      /"old_balance":1000000,"added_amount":497000,[^\n]*"msats":497000,"fee_msats":3000,"swapped_from":"http:\/\/127\.0\.0\.1:3339"/,
    ],
    timeoutMs: 150_000,
  },
  'on-the-network': {
    ports: [7777, 3343, 8007, 8008, 8009],
    expect: [
      /\[\["d","one"\],\["u","http:\/\/127\.0\.0\.1:8008"\],\["mint","http:\/\/127\.0\.0\.1:3343"\]/,
      /http:\/\/127\.0\.0\.1:8008 +Prepaid Model Gateway +http:\/\/127\.0\.0\.1:3343 +\d+ +mock-gpt .* ok\n/,
      /http:\/\/127\.0\.0\.1:8009 +Prepaid Model Gateway +http:\/\/127\.0\.0\.1:3343 +\d+ +mock-gpt .* ok\n/,
      /"base_url": "http:\/\/127\.0\.0\.1:8008\/v1"[\s\S]*"payment": "cashu"/,
    ],
    timeoutMs: 180_000,
  },
  reselling: {
    ports: [3344, 8011, 8010, 9000],
    expect: [
      /"x-node-cost":\{"sats":5,"msats":5000,/,
      /gateway_upstream_paid_msats_total\{provider="node-b"\} 1000\n/,
      /\{"mode":"auto","prompt_msats":\d+,"completion_msats":\d+,"request_msats":\d+\}/,
      /gateway_node_topups_total\{[^}]*provider="node-b"[^}]*result="ok"[^}]*\} 1\n/,
    ],
    timeoutMs: 240_000,
  },
  'redis-cluster': {
    ports: [3345, 8013, 8012, 8014],
    clusterPorts: [7000, 7001, 7002, 7003, 7004, 7005],
    expect: [
      /"status":"ready".*"redis":\{"form":"cluster","nodes":6,"answering":6\}/,
      /"balance":100000/,
      /"ok": true/,
    ],
    timeoutMs: 240_000,
  },
};

const FORBIDDEN = [
  /BTC price ticker failed/,
  /released what stopped processes held/,
  /\n\s+at .*\(.*:\d+:\d+\)/,
];

/** A free port whose cluster bus port (+10000) is free too. */
async function clusterPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const p = 20_000 + Math.floor(Math.random() * 30_000);
    if (taken.has(p) || taken.has(p + 10_000)) continue;
    if ((await canListen(p)) && (await canListen(p + 10_000))) return p;
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** The environment of a newcomer's shell: no gateway settings, no test or npm variables from this run. */
function shellEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined) continue;
    if (
      /^(REDIS_|DATA_DIR|CASHU_|PIPELINE|ADMIN_|UPSTREAM_|MODELS_PATH|FIXED_|BTC_|PORT$|HOST$|NOSTR_|NODE_|LOG_|GATEWAY_|TEST_|VITEST|npm_)/.test(
        k,
      )
    )
      continue;
    out[k] = v;
  }
  return out;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' });
}

let base: string;
let template: string;

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'readme-walkthroughs-'));
  template = join(base, 'template');
  // The repository's files as they are now (tracked and new, not ignored), then git-initialised: `git status` in
  // a copy shows exactly what a walkthrough left behind.
  const files = git(root, 'ls-files', '-co', '--exclude-standard', '-z').split('\0').filter(Boolean);
  for (const f of files) {
    mkdirSync(join(template, dirname(f)), { recursive: true });
    try {
      cpSync(join(root, f), join(template, f));
    } catch {
      // deleted in the working tree but still tracked
    }
  }
  symlinkSync(join(root, 'node_modules'), join(template, 'node_modules'));
  try {
    cpSync(join(root, 'dist'), join(template, 'dist'), { recursive: true });
  } catch {
    // not built yet: built below
  }
  execFileSync(process.execPath, ['scripts/build.mjs', '--if-changed'], { cwd: template, stdio: 'ignore' });
  git(template, 'init', '-q');
  git(template, 'add', '-A');
  git(template, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'base', '--no-gpg-sign');
  expect(git(template, 'status', '--porcelain')).toBe('');
}, 300_000);

afterAll(() => {
  if (base) rmSync(base, { recursive: true, force: true });
});

describe('README walkthroughs', () => {
  const found = walkthroughs();

  it('every walkthrough the README marks is tested here, and every one tested is in the README', () => {
    expect([...found.keys()].sort()).toEqual(Object.keys(CASES).sort());
  });

  for (const [name, c] of Object.entries(CASES)) {
    it.concurrent(
      `${name}: runs pasted whole, prints what the README says, leaves git status clean`,
      () =>
        inSlot(async () => {
          const blocks = found.get(name);
          expect(blocks, `README has no "<!-- walkthrough: ${name} -->" block`).toBeDefined();
          let script = blocks!.join('\n');
          const map = new Map<number, number>();
          for (const p of c.ports) {
            expect(script, `${name} uses port ${p}`).toMatch(new RegExp(`\\b${p}\\b`));
            let q = await freePort();
            while (taken.has(q)) q = await freePort();
            taken.add(q);
            map.set(p, q);
          }
          for (const p of c.clusterPorts ?? []) {
            const q = await clusterPort(taken);
            taken.add(q);
            taken.add(q + 10_000);
            map.set(p, q);
          }
          const swap = (text: string) => text.replace(/\b\d{4}\b/g, (d) => String(map.get(Number(d)) ?? d));
          script = swap(script);

          const dir = join(base, name);
          cpSync(template, dir, { recursive: true, verbatimSymlinks: true });
          const file = join(base, `${name}.sh`);
          writeFileSync(file, script);
          const out: Buffer[] = [];
          const child = spawn('bash', [file], { cwd: dir, env: shellEnv(), detached: true });
          child.stdout.on('data', (d: Buffer) => out.push(d));
          child.stderr.on('data', (d: Buffer) => out.push(d));
          const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
          const timedOut = await Promise.race([
            exited.then(() => false),
            new Promise<boolean>((r) => setTimeout(r, c.timeoutMs, true)),
          ]);
          await stopGroup(child.pid!);
          for (const p of c.clusterPorts ?? []) shutdownRedis(map.get(p)!);
          const output = Buffer.concat(out).toString('utf8');
          expect(timedOut, `${name} did not finish within ${c.timeoutMs} ms:\n${output.slice(-6000)}`).toBe(
            false,
          );
          for (const e of c.expect) {
            const want = new RegExp(swap(e.source), e.flags);
            expect(output, `${name} did not print ${want}:\n${output.slice(-6000)}`).toMatch(want);
          }
          // Messages a newcomer should not meet on a healthy local run: ticker failures under fixed (or pinned)
          // pricing, a restart warning about releases that released nothing, a raw stack.
          for (const f of FORBIDDEN) expect(output, `${name} printed ${f}`).not.toMatch(f);
          expect(
            git(dir, 'status', '--porcelain', '--untracked-files=all'),
            `${name} left files git sees`,
          ).toBe('');
          rmSync(dir, { recursive: true, force: true });
        }),
      // The walkthrough's own limit runs from its start (above); this one also covers the wait for a slot.
      WAIT_FOR_SLOT_MS + c.timeoutMs + 60_000,
    );
  }
});

/**
 * Two walkthroughs at a time: each mostly waits on the servers it starts, and a pair takes about the time of the
 * longer one. Their ports are distinct (`taken`, shared), each runs in its own copy of the repository.
 */
const SLOTS = 2;
const WAIT_FOR_SLOT_MS = 600_000;
const taken = new Set<number>();
let busy = 0;
const waiting: (() => void)[] = [];
async function inSlot<T>(fn: () => Promise<T>): Promise<T> {
  while (busy >= SLOTS) await new Promise<void>((r) => waiting.push(r));
  busy++;
  try {
    return await fn();
  } finally {
    busy--;
    waiting.shift()?.();
  }
}

/** SIGTERM to what the walkthrough left in its process group, then SIGKILL after 30 s (a gateway's grace). */
async function stopGroup(pgid: number): Promise<void> {
  const alive = () => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(-pgid, 'SIGTERM');
  await until('the process group gone', () => !alive(), 30_000, 100).catch(() => undefined);
  if (alive()) process.kill(-pgid, 'SIGKILL');
}

function shutdownRedis(port: number): void {
  try {
    execFileSync('redis-cli', ['-p', String(port), 'shutdown', 'nosave'], { stdio: 'ignore', timeout: 5000 });
  } catch {
    // not running (the walkthrough's teardown stopped it)
  }
}
