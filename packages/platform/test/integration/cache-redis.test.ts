import { describe, expect, it } from 'vitest';
import { createRedisCache, createRedisClient } from '../../src/index.ts';
import { cacheConformance, testRedis } from '../../src/testing/index.ts';

cacheConformance('Redis', async () => {
  const a = testRedis();
  const b = testRedis();
  // the second client shares the first one's prefix: another replica
  const other = createRedisCache({ client: b.client, prefix: a.prefix });
  return {
    cache: a.cache,
    other,
    async cleanup() {
      await a.cleanup();
      await b.cleanup();
    },
  };
});

describe('Redis cache specifics', () => {
  it('keeps every key under its prefix and cleans up', async () => {
    const r = testRedis();
    await r.cache.set('x', '1', 60);
    expect(await r.client.get(`${r.prefix}x`)).toBe('1');
    await r.cleanup();
    const check = testRedis();
    try {
      expect(await check.client.exists(`${r.prefix}x`)).toBe(0);
    } finally {
      await check.cleanup();
    }
  });

  it('reports an unreachable Redis as a transient error', async () => {
    const client = createRedisClient('redis://127.0.0.1:1/0');
    client.on('error', () => {});
    const cache = createRedisCache({ client, prefix: 'x:', ownsClient: true });
    try {
      await expect(cache.get('a')).rejects.toMatchObject({ code: 'TRAWL_ERR_CACHE_UNAVAILABLE' });
    } finally {
      client.disconnect();
    }
  });
});
