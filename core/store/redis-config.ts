/**
 * Which Redis the money store uses, read from the environment (docs: README "Scaling out"). Exactly one form:
 *
 * - `REDIS_URL`: one node (`redis://` or `rediss://`);
 * - `REDIS_CLUSTER_NODES`: comma-separated `host:port` seeds of a Redis Cluster;
 * - `REDIS_SENTINELS` + `REDIS_SENTINEL_NAME`: the master a Sentinel group names.
 *
 * Credentials and TLS (`REDIS_USERNAME`, `REDIS_PASSWORD`, `REDIS_TLS`) apply to every form and are never put
 * in an error message or a log line. `REDIS_MIN_REPLICA_ACKS` is how many replicas must hold a money write
 * before it counts as done (core/store/replica-acks.ts); unset = `auto`.
 */

export type RedisForm = 'single' | 'cluster' | 'sentinel';

export interface HostPort {
  host: string;
  port: number;
}

export interface RedisConfig {
  form: RedisForm;
  /** `single`: the URL (may hold credentials; never logged). */
  url?: string;
  /** `cluster`: the seed nodes; `sentinel`: the sentinels. */
  nodes?: HostPort[];
  /** `sentinel`: the master's name in the Sentinel group. */
  sentinelName?: string;
  username?: string;
  password?: string;
  tls: boolean;
  /** Replicas that must acknowledge a money write; `auto` = 1 on a master with replicas, 0 on one without. */
  minReplicaAcks: number | 'auto';
  /** How long a money write waits for those acknowledgements before it is a store failure. */
  replicaAckTimeoutMs: number;
}

export class RedisConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

const set = (env: Env, name: string): string | undefined => {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
};

const asWritten = (env: Env, name: string): string | undefined => (env[name] ? env[name] : undefined);

/** `host:port` list; the message names the variable, never its value. */
function hostPorts(env: Env, name: string): HostPort[] {
  const out: HostPort[] = [];
  for (const part of set(env, name)!.split(',')) {
    const s = part.trim();
    if (s === '') continue;
    const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(s);
    const port = m ? Number(m[2]) : 0;
    if (!m || port < 1 || port > 65535)
      throw new RedisConfigError(`${name} must be comma-separated host:port entries`);
    out.push({ host: m[1]!.replace(/^\[|\]$/g, ''), port });
  }
  if (out.length === 0) throw new RedisConfigError(`${name} must name at least one host:port`);
  return out;
}

function nonNegativeInt(env: Env, name: string): number | undefined {
  const raw = set(env, name);
  if (raw === undefined) return undefined;
  const v = Number(raw);
  if (!Number.isInteger(v) || v < 0) throw new RedisConfigError(`${name} must be a whole number >= 0`);
  return v;
}

/** The configured Redis, or undefined when none is (the embedded SQLite store is used then). */
export function readRedisConfig(env: Env): RedisConfig | undefined {
  const url = set(env, 'REDIS_URL');
  const clusterNodes = set(env, 'REDIS_CLUSTER_NODES');
  const sentinels = set(env, 'REDIS_SENTINELS');
  const sentinelName = set(env, 'REDIS_SENTINEL_NAME');
  const given = [
    url && 'REDIS_URL',
    clusterNodes && 'REDIS_CLUSTER_NODES',
    sentinels && 'REDIS_SENTINELS',
  ].filter((x): x is string => typeof x === 'string');
  if (given.length > 1) {
    throw new RedisConfigError(
      `${given.join(' and ')} are all set: set exactly one Redis form (REDIS_URL for one node, REDIS_CLUSTER_NODES for a Redis Cluster, REDIS_SENTINELS with REDIS_SENTINEL_NAME for a Sentinel-managed master)`,
    );
  }
  if (sentinelName !== undefined && sentinels === undefined)
    throw new RedisConfigError('REDIS_SENTINEL_NAME is set without REDIS_SENTINELS');
  if (sentinels !== undefined && sentinelName === undefined)
    throw new RedisConfigError(
      'REDIS_SENTINELS needs REDIS_SENTINEL_NAME (the master name the sentinels monitor)',
    );
  const password = asWritten(env, 'REDIS_PASSWORD');
  const acks = nonNegativeInt(env, 'REDIS_MIN_REPLICA_ACKS');
  const timeout = nonNegativeInt(env, 'REDIS_REPLICA_ACK_TIMEOUT_MS') ?? 1000;
  if (timeout < 1) throw new RedisConfigError('REDIS_REPLICA_ACK_TIMEOUT_MS must be >= 1');
  const tlsRaw = set(env, 'REDIS_TLS');
  if (tlsRaw !== undefined && !/^(1|0|true|false|yes|no|on|off)$/i.test(tlsRaw))
    throw new RedisConfigError('REDIS_TLS must be true or false');
  if (given.length === 0) {
    for (const n of ['REDIS_USERNAME', 'REDIS_PASSWORD', 'REDIS_MIN_REPLICA_ACKS', 'REDIS_TLS'])
      if (set(env, n) !== undefined)
        throw new RedisConfigError(
          `${n} is set but no Redis is (REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS)`,
        );
    return undefined;
  }
  if (url !== undefined && !/^rediss?:\/\//.test(url))
    throw new RedisConfigError('REDIS_URL must be a redis:// or rediss:// URL');
  const common = {
    ...(set(env, 'REDIS_USERNAME') !== undefined ? { username: set(env, 'REDIS_USERNAME')! } : {}),
    // A password is taken as written (spaces included), only an empty one means none.
    ...(password !== undefined ? { password } : {}),
    tls: tlsRaw !== undefined && /^(1|true|yes|on)$/i.test(tlsRaw),
    minReplicaAcks: acks ?? ('auto' as const),
    replicaAckTimeoutMs: timeout,
  };
  if (url !== undefined) return { form: 'single', url, ...common };
  if (clusterNodes !== undefined)
    return { form: 'cluster', nodes: hostPorts(env, 'REDIS_CLUSTER_NODES'), ...common };
  return {
    form: 'sentinel',
    nodes: hostPorts(env, 'REDIS_SENTINELS'),
    sentinelName: sentinelName!,
    ...common,
  };
}

/** What may be shown of the configuration (console, logs): the form and the addresses, no credentials. */
export function describeRedis(c: RedisConfig | undefined): string | null {
  if (c === undefined) return null;
  if (c.form === 'single') {
    try {
      const u = new URL(c.url!);
      return `single ${u.protocol}//${u.host}`;
    } catch {
      return 'single';
    }
  }
  const list = c.nodes!.map((n) => `${n.host}:${n.port}`).join(',');
  return c.form === 'cluster' ? `cluster ${list}` : `sentinel ${c.sentinelName} via ${list}`;
}
