import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, type StoreConnection } from '../../core/store/connection.js';
import { loadSettings, saveSettings } from '../../core/store/settings-store.js';
import { dropStore } from '../support/dev-mint.js';

/**
 * Persisted operator settings: a save merges into what is stored in one atomic step, so two processes (here
 * two connections) changing different settings keep both; values round-trip exactly (no float rounding of
 * large integers); null is kept as a value.
 */
const conns: StoreConnection[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const c of conns) await dropStore(c);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function ready(c: StoreConnection): Promise<StoreConnection> {
  if (c.kind === 'redis' && c.redis.status !== 'ready') {
    await new Promise((resolve) => c.redis.once('ready', resolve));
  }
  return c;
}

async function pair(kind: 'sqlite' | 'redis'): Promise<[StoreConnection, StoreConnection]> {
  if (kind === 'redis') {
    const url = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
    const prefix = `set${randomBytes(5).toString('hex')}`;
    const a = openStore({ redisUrl: url, redisPrefix: prefix });
    const b = openStore({ redisUrl: url, redisPrefix: prefix });
    conns.push(a, b);
    return [await ready(a), await ready(b)];
  }
  const dir = mkdtempSync(join(tmpdir(), 'gw-settings-'));
  dirs.push(dir);
  const a = openStore({ dataDir: dir, sqliteFile: 's.db' });
  const b = openStore({ dataDir: dir, sqliteFile: 's.db' });
  conns.push(a, b);
  return [a, b];
}

describe.each(['sqlite', 'redis'] as const)('settings store on %s', (kind) => {
  it('merges concurrent saves of different settings from two connections; nothing is lost', async () => {
    const [a, b] = await pair(kind);
    expect(await loadSettings(a)).toEqual({});
    await Promise.all([
      saveSettings(a, { node_name: 'A', exchange_fee: 1.01 }),
      saveSettings(b, { child_key_cost_msats: 999_999_999_999_999, fixed_per_1k_input_tokens: null }),
      saveSettings(a, { node_description: 'from a' }),
      saveSettings(b, { node_npub: 'npub1b' }),
    ]);
    const expected = {
      node_name: 'A',
      exchange_fee: 1.01,
      child_key_cost_msats: 999_999_999_999_999,
      fixed_per_1k_input_tokens: null,
      node_description: 'from a',
      node_npub: 'npub1b',
    };
    expect(await loadSettings(a)).toEqual(expected);
    expect(await loadSettings(b)).toEqual(expected);
    // A later save of one field changes only that field.
    await saveSettings(b, { node_name: 'B' });
    expect(await loadSettings(a)).toEqual({ ...expected, node_name: 'B' });
  });

  it('an empty patch writes nothing', async () => {
    const [a] = await pair(kind);
    await saveSettings(a, {});
    expect(await loadSettings(a)).toEqual({});
  });
});

it('Redis: settings saved by an older version (one JSON string) are still read; newer fields win', async () => {
  const [a] = await pair('redis');
  if (a.kind !== 'redis') throw new Error('redis expected');
  await a.redis.set(`${a.prefix}:admin:settings`, JSON.stringify({ node_name: 'old', exchange_fee: 1.2 }));
  expect(await loadSettings(a)).toEqual({ node_name: 'old', exchange_fee: 1.2 });
  await saveSettings(a, { node_name: 'new' });
  expect(await loadSettings(a)).toEqual({ node_name: 'new', exchange_fee: 1.2 });
});
