import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { defineScriptSet, type LoadedScript, scriptOf } from '../../core/store/lua-scripts.js';

/**
 * How Lua reaches Redis (core/store/lua-scripts.ts): each call is an EVALSHA of the script's SHA-1, the scripts are
 * loaded when the client is ready, and a node without the script (NOSCRIPT) gets the call again as EVAL. No
 * `defineCommand`: ioredis copies every defined script onto each auto-pipeline it builds.
 */

const url = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const clients: Redis[] = [];
const keys: string[] = [];
afterAll(async () => {
  const c = new Redis(url);
  if (keys.length > 0) await c.del(...keys);
  c.disconnect();
  for (const x of clients) x.disconnect();
});

const client = (opts: { lazyConnect?: boolean } = {}): Redis => {
  const c = new Redis(url, { enableAutoPipelining: true, maxRetriesPerRequest: 1, ...opts });
  clients.push(c);
  return c;
};
/** A script no other test or process has loaded: its text carries a random tag. */
const fresh = (body: string): LoadedScript =>
  scriptOf('t', 'x', 1, 1, `-- ${randomBytes(8).toString('hex')}\n${body}`);
const key = () => {
  const k = `t-lua-${randomBytes(6).toString('hex')}`;
  keys.push(k);
  return k;
};
const INCR = "return redis.call('INCR', KEYS[1])";
/** Whether Redis's script cache holds `s`. */
const loaded = async (c: Redis, s: LoadedScript) => ((await c.script('EXISTS', s.sha)) as number[])[0] === 1;

describe('Lua scripts by SHA-1', () => {
  it('scripts defined on a ready client are loaded at once, before their first call', async () => {
    const c = client();
    await c.ping();
    const s = fresh(INCR);
    expect(await loaded(c, s)).toBe(false);
    const run = defineScriptSet(c, new Map([['x', s]]));
    // SCRIPT LOAD went out when the set was defined; this PING on the same connection answers after it.
    await c.ping();
    expect(await loaded(c, s)).toBe(true);
    const k = key();
    await expect(run('x', [k], [])).resolves.toBe(1);
    await expect(run('x', [k], [])).resolves.toBe(2);
  });

  it('a node without the script (NOSCRIPT) runs the call as EVAL, once, which loads it', async () => {
    const c = client({ lazyConnect: true });
    const s = fresh(INCR);
    const run = defineScriptSet(c, new Map([['x', s]]));
    // What a node restarted or flushed since the load looks like: the script was never loaded on it.
    c.removeAllListeners('ready');
    await c.connect();
    expect(await loaded(c, s)).toBe(false);
    const k = key();
    await expect(run('x', [k], [])).resolves.toBe(1); // applied once: NOSCRIPT ran nothing
    expect(await loaded(c, s)).toBe(true); // the EVAL loaded it: the next call's EVALSHA finds it
    await expect(run('x', [k], [])).resolves.toBe(2);
    expect(await c.get(k)).toBe('2');
  });

  it("a script's own error is the caller's, not retried", async () => {
    const c = client();
    await c.ping();
    const run = defineScriptSet(
      c,
      new Map([['x', fresh("redis.call('INCR', KEYS[1])\nreturn redis.error_reply('ERR boom')")]]),
    );
    const k = key();
    await expect(run('x', [k], [])).rejects.toThrow('boom');
    expect(await c.get(k)).toBe('1'); // ran once: a resend would have counted 2
  });

  it('the key count is checked before anything is sent', () => {
    const c = client({ lazyConnect: true });
    const run = defineScriptSet(c, new Map([['x', fresh(INCR)]]));
    expect(() => run('x', [], [])).toThrow('x takes 1 keys, got 0');
    expect(() => run('y' as 'x', [], [])).toThrow('unknown Lua script y');
  });

  it("ioredis's auto-pipelines carry no copy of the scripts, however many are defined", async () => {
    const c = client();
    await c.ping();
    const before = Object.keys(c.pipeline()).length;
    defineScriptSet(c, new Map(Array.from({ length: 60 }, (_, i) => [`s${i}`, fresh(INCR)] as const)));
    expect(Object.keys(c.pipeline()).length).toBe(before);
  });
});
