import type { Cache } from './types.ts';

interface Entry {
  value: string;
  expiresAt: number | null;
}

/**
 * In-process cache: TTL per entry, bounded by `maxEntries` with least-recently-used eviction.
 * `hit()` is the same fixed window as the Redis adapter's (shared by every caller of this instance).
 */
export function createMemoryCache(opts: {
  maxEntries: number;
  prefix?: string;
  now?: () => number;
}): Cache {
  const prefix = opts.prefix ?? '';
  const now = opts.now ?? Date.now;
  const max = Math.max(1, opts.maxEntries);
  const map = new Map<string, Entry>();

  const live = (key: string): Entry | undefined => {
    const e = map.get(key);
    if (!e) return undefined;
    if (e.expiresAt !== null && e.expiresAt <= now()) {
      map.delete(key);
      return undefined;
    }
    // refresh recency
    map.delete(key);
    map.set(key, e);
    return e;
  };

  const put = (key: string, e: Entry): void => {
    map.delete(key);
    map.set(key, e);
    while (map.size > max) {
      const oldest = map.keys().next().value as string;
      map.delete(oldest);
    }
  };

  const ttl = (seconds: number | undefined): number | null =>
    seconds === undefined || seconds <= 0 ? null : now() + seconds * 1000;

  return {
    kind: 'memory',
    async get(key) {
      return live(prefix + key)?.value ?? null;
    },
    async set(key, value, ttlSeconds) {
      put(prefix + key, { value, expiresAt: ttl(ttlSeconds) });
    },
    async setIfAbsent(key, value, ttlSeconds) {
      if (live(prefix + key)) return false;
      put(prefix + key, { value, expiresAt: ttl(ttlSeconds) });
      return true;
    },
    async del(key) {
      map.delete(prefix + key);
    },
    async hit(key, windowMs) {
      const k = prefix + key;
      const e = live(k);
      if (!e) {
        put(k, { value: '1', expiresAt: now() + windowMs });
        return { count: 1, resetMs: windowMs };
      }
      const count = Number(e.value) + 1;
      e.value = String(count);
      if (e.expiresAt === null) e.expiresAt = now() + windowMs;
      return { count, resetMs: Math.max(0, e.expiresAt - now()) };
    },
    async ping() {
      return 0;
    },
    async close() {
      map.clear();
    },
  };
}
