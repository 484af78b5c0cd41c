import type { Cluster, Redis } from 'ioredis';
import type { ObjectKind, ObjectOwners, OwnedObject } from './types.js';

/**
 * Redis ownership records. Cluster-safe: every command touches one key. The record lives in the object's own
 * slot (`<p>:obj:{<id>}`, SET NX: the first owner wins); the per-key list is a sorted set in the key's slot
 * (`<p>:objs:{<keyId>}:<kind>`, score = creation time). A list entry whose record is gone is skipped by the
 * reader (`get` is the authority), so the two writes need no transaction.
 */
export class RedisObjectOwners implements ObjectOwners {
  constructor(
    private readonly redis: Redis | Cluster,
    private readonly prefix: string,
  ) {}

  private objKey(id: string): string {
    return `${this.prefix}:obj:{${id}}`;
  }
  private listKey(keyId: string, kind: ObjectKind): string {
    return `${this.prefix}:objs:{${keyId}}:${kind}`;
  }

  async record(o: OwnedObject): Promise<void> {
    const set = await this.redis.set(this.objKey(o.id), JSON.stringify(o), 'NX');
    if (set === 'OK') await this.redis.zadd(this.listKey(o.keyId, o.kind), o.createdAtMs, o.id);
  }

  async get(id: string): Promise<OwnedObject | null> {
    const raw = await this.redis.get(this.objKey(id));
    return raw === null ? null : (JSON.parse(raw) as OwnedObject);
  }

  async list(keyId: string, kind: ObjectKind, limit: number, after?: string): Promise<string[]> {
    if (limit < 1) return [];
    const key = this.listKey(keyId, kind);
    if (after === undefined) return this.redis.zrevrange(key, 0, limit - 1);
    // By score, not rank: objects recorded or forgotten meanwhile shift ranks, never scores. ZREVRANGEBYSCORE
    // orders equal scores by member, descending: the SQLite store's order.
    const score = await this.redis.zscore(key, after);
    if (score === null) return [];
    const ties = (await this.redis.zrevrangebyscore(key, score, score)).filter((id) => id < after);
    if (ties.length >= limit) return ties.slice(0, limit);
    const older = await this.redis.zrevrangebyscore(
      key,
      `(${score}`,
      '-inf',
      'LIMIT',
      0,
      limit - ties.length,
    );
    return [...ties, ...older];
  }

  async annotate(id: string, meta: string): Promise<void> {
    // One writer per object (the request that created it), so read-modify-write needs no transaction; XX never
    // brings back a record forgotten meanwhile.
    const o = await this.get(id);
    if (o === null) return;
    await this.redis.set(this.objKey(id), JSON.stringify({ ...o, meta }), 'XX');
  }

  async forget(o: Pick<OwnedObject, 'id' | 'kind' | 'keyId'>): Promise<void> {
    await this.redis.del(this.objKey(o.id));
    await this.redis.zrem(this.listKey(o.keyId, o.kind), o.id);
  }
}
