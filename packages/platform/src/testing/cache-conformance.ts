import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cache } from '../cache/types.ts';

export interface CacheTarget {
  cache: Cache;
  /** A second cache on the same store with the same prefix (another replica). */
  other: Cache;
  cleanup(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The cache conformance suite: Redis and the in-process cache must both pass it. */
export function cacheConformance(name: string, makeTarget: () => Promise<CacheTarget>): void {
  describe(`cache conformance: ${name}`, () => {
    let t: CacheTarget;
    beforeAll(async () => {
      t = await makeTarget();
    });
    afterAll(async () => {
      await t?.cleanup();
    });

    it('gets, sets, overwrites and deletes', async () => {
      expect(await t.cache.get('k1')).toBeNull();
      await t.cache.set('k1', 'v1');
      expect(await t.cache.get('k1')).toBe('v1');
      expect(await t.other.get('k1')).toBe('v1');
      await t.cache.set('k1', '{"a":1}');
      expect(await t.cache.get('k1')).toBe('{"a":1}');
      await t.cache.del('k1');
      expect(await t.cache.get('k1')).toBeNull();
      await t.cache.del('never-set');
    });

    it('expires entries after their TTL', async () => {
      await t.cache.set('ttl', 'x', 0.15);
      await t.cache.set('keep', 'y', 60);
      expect(await t.cache.get('ttl')).toBe('x');
      await sleep(400);
      expect(await t.cache.get('ttl')).toBeNull();
      expect(await t.cache.get('keep')).toBe('y');
    });

    it('setIfAbsent sets once, then again after expiry', async () => {
      expect(await t.cache.setIfAbsent('lock', 'a', 0.15)).toBe(true);
      expect(await t.other.setIfAbsent('lock', 'b', 0.15)).toBe(false);
      expect(await t.cache.get('lock')).toBe('a');
      await sleep(400);
      expect(await t.other.setIfAbsent('lock', 'b', 10)).toBe(true);
      expect(await t.cache.get('lock')).toBe('b');
    });

    it('lets exactly one of many concurrent setIfAbsent win', async () => {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 ? t.cache : t.other).setIfAbsent('race', String(i), 10),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('counts hits in a fixed window shared by replicas', async () => {
      const a = await t.cache.hit('rl', 300);
      const b = await t.other.hit('rl', 300);
      const c = await t.cache.hit('rl', 300);
      expect([a.count, b.count, c.count]).toEqual([1, 2, 3]);
      for (const x of [a, b, c]) {
        expect(x.resetMs).toBeGreaterThan(0);
        expect(x.resetMs).toBeLessThanOrEqual(300);
      }
      // a fixed window: later hits do not extend it
      expect(c.resetMs).toBeLessThanOrEqual(a.resetMs);
      await sleep(450);
      const d = await t.other.hit('rl', 300);
      expect(d.count).toBe(1);
    });

    it('counts concurrent hits without losing any', async () => {
      const rs = await Promise.all(
        Array.from({ length: 50 }, (_, i) => (i % 2 ? t.cache : t.other).hit('burst', 10_000)),
      );
      expect(rs.map((r) => r.count).sort((x, y) => x - y)).toEqual(
        Array.from({ length: 50 }, (_, i) => i + 1),
      );
    });

    it('keeps keys of different names apart', async () => {
      await t.cache.set('a:1', 'one');
      await t.cache.set('a:2', 'two');
      expect(await t.cache.get('a:1')).toBe('one');
      expect(await t.cache.get('a:2')).toBe('two');
    });

    it('answers ping', async () => {
      expect(await t.cache.ping()).toBeGreaterThanOrEqual(0);
    });
  });
}
