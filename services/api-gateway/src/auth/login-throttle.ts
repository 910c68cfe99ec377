import { createHash } from 'node:crypto';
import { backoffDelay } from '@trawl/contracts';
import type { Cache } from '@trawl/platform';

/**
 * Slows down repeated failed logins for one (username, address), whether or not rate limiting is on:
 * after `free` failures within the window, each further failure locks the pair out for an
 * exponentially growing time (1 s, 2 s, 4 s, … capped at `maxSeconds`). State lives in the cache, so
 * every replica sees it. A successful login clears the failures.
 */
export interface LoginThrottle {
  /** Seconds the pair must still wait; 0 when it may try now. */
  check(username: string, address: string): Promise<number>;
  failed(username: string, address: string): Promise<void>;
  succeeded(username: string, address: string): Promise<void>;
}

export function createLoginThrottle(opts: {
  cache: Cache;
  free?: number;
  maxSeconds?: number;
  windowSeconds?: number;
  now?: () => number;
}): LoginThrottle {
  const free = opts.free ?? 5;
  const maxSeconds = opts.maxSeconds ?? 300;
  const windowMs = (opts.windowSeconds ?? 900) * 1000;
  const now = opts.now ?? Date.now;
  const id = (u: string, a: string) =>
    createHash('sha256').update(`${u.toLowerCase()}\u0000${a}`).digest('base64url').slice(0, 32);

  return {
    async check(username, address) {
      const until = await opts.cache.get(`login:lock:${id(username, address)}`);
      if (!until) return 0;
      const left = Number(until) - now();
      return left > 0 ? Math.ceil(left / 1000) : 0;
    },
    async failed(username, address) {
      const k = id(username, address);
      const { count } = await opts.cache.hit(`login:fail:${k}`, windowMs);
      if (count < free) return;
      // 1 s at the first failure past the free ones, doubling, at most maxSeconds
      const seconds = backoffDelay(count - free + 1, { initialMs: 1, maxMs: maxSeconds });
      await opts.cache.set(`login:lock:${k}`, String(now() + seconds * 1000), seconds);
    },
    async succeeded(username, address) {
      const k = id(username, address);
      await opts.cache.del(`login:fail:${k}`);
      await opts.cache.del(`login:lock:${k}`);
    },
  };
}
