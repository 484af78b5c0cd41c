import { Cluster, type Redis } from 'ioredis';

/**
 * Deletes every key matching `pattern` (`<prefix>:*`, say) from a Redis server, or from every master of a
 * Cluster: SCAN rounds of `count` keys, each round's keys unlinked in one pipeline of one-key commands (valid on
 * a Cluster node, whatever slots the keys are in). For tests and benches that clean up the prefix they wrote
 * under. Bounded: at most `maxRounds` SCAN rounds a node. Returns how many keys were deleted.
 */
export async function deleteKeys(
  client: Redis | Cluster,
  pattern: string,
  { count = 1000, maxRounds = 100_000 }: { count?: number; maxRounds?: number } = {},
): Promise<number> {
  let deleted = 0;
  for (const node of client instanceof Cluster ? client.nodes('master') : [client]) {
    let cursor = '0';
    for (let round = 0; round < maxRounds; round++) {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', count);
      if (keys.length > 0) {
        for (const [err] of (await node.pipeline(keys.map((k) => ['unlink', k])).exec()) ?? [])
          if (err) throw err;
        deleted += keys.length;
      }
      cursor = next;
      if (cursor === '0') break;
    }
  }
  return deleted;
}
