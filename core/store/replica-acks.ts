import { Cluster, Command, type Redis } from 'ioredis';
import { GatewayError } from '../errors.js';

/**
 * The replica-acknowledgement rule for money writes. Redis replicates asynchronously: a master that
 * answered a money script and died before a replica had it would take that write with it when a replica is
 * promoted (a charge silently undone, or a credit that vanishes). So after each money write the caller waits
 * with `WAIT <n> <timeout>` on the connection that made the write (WAIT counts the replicas holding
 * everything that connection wrote so far): fewer than `n` in time is a store failure (503
 * `store_unavailable`), never "probably done".
 *
 * `n` is `REDIS_MIN_REPLICA_ACKS`; `auto` (the default) asks each master how many replicas it has in sync
 * (INFO replication, re-read every few seconds and after a failed wait) and waits for one when it has any,
 * for none when it has none (a lone Redis, or a promoted replica whose old master has not come back yet).
 *
 * WAIT blocks its connection until it returns, so the commands pipelined behind it on the shared connection
 * wait for the replica round trip too; on loopback that is a fraction of a millisecond (docs/benchmarks.md).
 */

export type RedisClient = Redis | Cluster;

const REPLICAS_TTL_MS = 5000;

export class ReplicaAcks {
  private readonly replicas = new Map<string, { n: number; at: number }>();

  constructor(
    private readonly client: RedisClient,
    private readonly min: number | 'auto',
    private readonly timeoutMs: number,
  ) {
    // A Sentinel client that reconnected may be talking to another master now: ask it again.
    if (!(client instanceof Cluster)) client.on('ready', () => this.replicas.clear());
  }

  /** Resolves once `key`'s master has the writes this process made to it on `min` replicas; else throws. */
  async after(key: string): Promise<void> {
    if (this.min === 0) return;
    const node = this.nodeFor(key);
    if (node === undefined) throw new GatewayError('store_unavailable', { message: 'No master for the key' });
    const need = await this.needed(node);
    if (need === 0) return;
    let got: number;
    try {
      got = Number(await node.wait(need, this.timeoutMs));
    } catch (err) {
      throw new GatewayError('store_unavailable', { cause: err });
    }
    if (got < need) {
      this.replicas.delete(nodeName(node));
      throw new GatewayError('store_unavailable', {
        message: `A money write reached ${got} of ${need} replicas within ${this.timeoutMs} ms`,
      });
    }
  }

  /** The connection to the master holding `key`: the one client, or the cluster's node for its slot. */
  private nodeFor(key: string): Redis | undefined {
    if (!(this.client instanceof Cluster)) return this.client;
    const slot = new Command('get', [key]).getSlot();
    const owner = this.client.slots[slot]?.[0];
    return this.client.nodes('master').find((n) => nodeName(n) === owner);
  }

  private async needed(node: Redis): Promise<number> {
    if (this.min !== 'auto') return this.min;
    const name = nodeName(node);
    const known = this.replicas.get(name);
    if (known !== undefined && Date.now() - known.at < REPLICAS_TTL_MS) return known.n;
    let info: string;
    try {
      info = await node.info('replication');
    } catch (err) {
      throw new GatewayError('store_unavailable', { cause: err });
    }
    // Only replicas in sync count: one still loading its first copy (a restarted node) cannot acknowledge yet.
    const n = Math.min(1, onlineReplicas(info));
    this.replicas.set(name, { n, at: Date.now() });
    return n;
  }
}

/** Replicas of an INFO replication answer that are in sync (`state=online`). */
export function onlineReplicas(info: string): number {
  return (info.match(/^slave\d+:.*state=online/gm) ?? []).length;
}

function nodeName(n: Redis): string {
  return `${n.options.host}:${n.options.port}`;
}
