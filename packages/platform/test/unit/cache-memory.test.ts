import { describe, expect, it } from 'vitest';
import { createMemoryCache } from '../../src/index.ts';
import { cacheConformance } from '../../src/testing/index.ts';

cacheConformance('memory', async () => {
  const cache = createMemoryCache({ maxEntries: 1000, prefix: 'p:' });
  return { cache, other: cache, cleanup: () => cache.close() };
});

describe('memory cache bound', () => {
  it('evicts the least recently used entry past maxEntries', async () => {
    const c = createMemoryCache({ maxEntries: 3 });
    await c.set('a', '1');
    await c.set('b', '2');
    await c.set('c', '3');
    await c.get('a'); // a is now the most recent
    await c.set('d', '4');
    expect(await c.get('b')).toBeNull();
    expect(await c.get('a')).toBe('1');
    expect(await c.get('c')).toBe('3');
    expect(await c.get('d')).toBe('4');
  });
});
