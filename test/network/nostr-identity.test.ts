import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as nip19 from 'nostr-tools/nip19';
import { verifyEvent } from 'nostr-tools/pure';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultNodeId, parseListing, signListing } from '../../core/network/listing.js';
import { loadNodeIdentity, nostrSecretRedisKey, parseNsec } from '../../core/network/nostr-identity.js';
import { openStore, type StoreConnection } from '../../core/store/connection.js';

// secp256k1's generator: secret key 1 has the public key G.x.
const SK1_HEX = `${'0'.repeat(63)}1`;
const G_X = '79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798';

describe('NOSTR_NSEC', () => {
  it('reads nsec1… and 64 hex characters to the same key', async () => {
    const nsec = nip19.nsecEncode(Buffer.from(SK1_HEX, 'hex'));
    const a = await loadNodeIdentity(undefined, nsec);
    const b = await loadNodeIdentity(undefined, SK1_HEX);
    expect(a.pubkey).toBe(G_X);
    expect(b.pubkey).toBe(G_X);
    expect(a.npub).toBe(nip19.npubEncode(G_X));
    expect(a.source).toBe('config');
  });

  it('refuses a bad key naming the variable, never echoing the value', () => {
    for (const bad of ['nsec1qqqq', 'zz'.repeat(32), '0'.repeat(64), 'npub1xyz']) {
      let message = '';
      try {
        parseNsec(bad);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/^NOSTR_NSEC /);
      expect(message).not.toContain(bad);
    }
  });

  it('never serialises the secret', async () => {
    const id = await loadNodeIdentity(undefined, SK1_HEX);
    const json = JSON.stringify({ id });
    expect(json).toContain(G_X);
    expect(json).not.toContain(SK1_HEX);
    expect(json).not.toContain('secretKey');
  });
});

describe.each(['sqlite', 'redis'] as const)('a key made once in the %s store', (kind) => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-nid-'));
  const prefix = `tnid${randomBytes(5).toString('hex')}`;
  const open = (): StoreConnection =>
    kind === 'redis'
      ? openStore({ redisUrl: process.env.TEST_REDIS_URL!, redisPrefix: prefix })
      : openStore({ dataDir: dir });
  const conns: StoreConnection[] = [];
  // The store's Redis client queues nothing while connecting: wait until it is ready.
  const ready = async (c: StoreConnection) => {
    if (c.kind === 'redis' && c.redis.status !== 'ready')
      await new Promise((resolve) => c.redis.once('ready', resolve));
  };

  afterAll(async () => {
    const c = conns[0];
    if (c?.kind === 'redis') await c.redis.del(nostrSecretRedisKey(prefix));
    await Promise.all(conns.map((x) => x.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('is the same for processes racing to make it and after a restart', async () => {
    for (let i = 0; i < 4; i++) conns.push(open());
    await Promise.all(conns.map(ready));
    // Four connections (as four processes would) race to make the key: one wins, all read the winner's.
    const ids = await Promise.all(conns.map((c) => loadNodeIdentity(c, undefined)));
    expect(new Set(ids.map((i) => i.pubkey)).size).toBe(1);
    expect(ids[0]!.source).toBe('store');
    const again = open();
    conns.push(again);
    await ready(again);
    expect((await loadNodeIdentity(again, undefined)).pubkey).toBe(ids[0]!.pubkey);
    // NOSTR_NSEC wins over the stored key.
    expect((await loadNodeIdentity(again, SK1_HEX)).pubkey).toBe(G_X);
  });
});

describe('the listing event', () => {
  it('is a signed kind-38421 event with d, u, mint and version tags and name/about content', async () => {
    const id = await loadNodeIdentity(undefined, SK1_HEX);
    const ev = signListing(
      id,
      {
        nodeId: defaultNodeId(id.pubkey),
        urls: ['https://a.example', 'http://b.example.onion'],
        mints: ['https://mint.example'],
        version: '1.2.3',
        name: 'N',
        about: 'A',
      },
      1_800_000_000,
    );
    expect(verifyEvent({ ...ev })).toBe(true);
    expect(ev).toMatchObject({
      kind: 38421,
      pubkey: G_X,
      created_at: 1_800_000_000,
      tags: [
        ['d', '79be667ef9dc'],
        ['u', 'https://a.example'],
        ['u', 'http://b.example.onion'],
        ['mint', 'https://mint.example'],
        ['version', '1.2.3'],
      ],
      content: '{"name":"N","about":"A"}',
    });
    expect(parseListing(ev)).toEqual({
      pubkey: G_X,
      nodeId: '79be667ef9dc',
      urls: ['https://a.example', 'http://b.example.onion'],
      mints: ['https://mint.example'],
      version: '1.2.3',
      name: 'N',
      about: 'A',
      createdAt: 1_800_000_000,
    });
    // A changed tag breaks the signature: discovery ignores it.
    // (A JSON copy, as a relay delivers it: nostr-tools caches a verification on the object it signed.)
    const copy = () => JSON.parse(JSON.stringify(ev)) as typeof ev;
    expect(parseListing({ ...copy(), tags: [...ev.tags, ['u', 'https://evil.example']] })).toBeUndefined();
    expect(parseListing({ ...copy(), kind: 1 })).toBeUndefined();
    expect(parseListing({ ...copy(), content: '{}' })).toBeUndefined();
  });
});
