/**
 * Redis topologies for the tests: a Redis Cluster (3 masters, `{ replicas: 1 }` for 3 replicas too) and a
 * Sentinel set-up, built from Debian's `redis-server` on loopback, with SIGKILL and restart per node. They
 * live in scripts/lib/redis-topology.ts because the chaos run and the bench build the same ones.
 */
export {
  type RedisTopology,
  startRedisCluster,
  startRedisSentinel,
  type TestCluster,
} from '../../scripts/lib/redis-topology.js';
