import type { Redis } from 'ioredis';
import { createRedisCache, createRedisClient } from '../cache/redis-cache.ts';
import type { Cache } from '../cache/types.ts';
import { testUrls, uniqueSuffix } from './infra.ts';

export interface TestRedis {
  cache: Cache;
  client: Redis;
  prefix: string;
  /** Deletes every key under the prefix and quits the client. */
  cleanup(): Promise<void>;
}

/** A Redis client and cache on the local test Redis, under a unique key prefix. */
export function testRedis(): TestRedis {
  const client = createRedisClient(testUrls().redisUrl);
  const prefix = `trawl-test:${uniqueSuffix()}:`;
  return {
    client,
    prefix,
    cache: createRedisCache({ client, prefix }),
    async cleanup() {
      await deleteByPrefix(client, prefix);
      await client.quit().catch(() => undefined);
    },
  };
}

export async function deleteByPrefix(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) await client.del(...keys);
  } while (cursor !== '0');
}
