import type { Cache, Store } from '@trawl/platform';
import type { FastifyBaseLogger } from 'fastify';
import { databaseDown } from '../errors.ts';

/**
 * Revocation that takes effect at once (docs/security.md). Every access token carries the user's
 * `auth_version` at issue; every request compares it with the current one, read from the cache
 * (Redis in scale-out mode, shared by the replicas; the in-process cache in embedded mode) and,
 * on a miss, from the database. Disabling, deleting, demoting a user or changing their password
 * moves the version on in the database and writes the new one to the cache, so the next request
 * with an older token is refused by every replica.
 *
 * Cache value: the version, or `-` for a user who is gone or disabled. A reader fills a missing
 * entry with setIfAbsent and a change overwrites it with set: a reader that read the database
 * before a change cannot put the old version back over the new one.
 */
export interface AccessVersions {
  /** The version a token must carry now; null: the user has no access (gone or disabled). */
  current(username: string): Promise<number | null>;
  /** After a change of the user in the database: publishes their new version to every replica. */
  changed(username: string, log?: FastifyBaseLogger): Promise<void>;
  /**
   * Calls `listener` after each `changed(username)` on this replica (an open event stream checks
   * its access again at once); answers the function that stops it.
   */
  onChange(username: string, listener: () => void): () => void;
}

const NONE = '-';
const key = (username: string) => `authv:${username}`;

export function createAccessVersions(opts: {
  cache: Cache;
  users: Store['users'];
  /** How long an entry lives in the cache (bounds how long a lost change could linger). */
  ttlSeconds?: number;
}): AccessVersions {
  const { cache, users } = opts;
  const ttl = Math.max(1, opts.ttlSeconds ?? 300);
  const encode = (v: number | null) => (v === null ? NONE : String(v));
  const decode = (s: string): number | null => (s === NONE ? null : Number(s));

  async function fromDatabase(username: string): Promise<number | null> {
    try {
      return await users.accessVersion(username);
    } catch (err) {
      throw databaseDown(err);
    }
  }

  async function lookup(username: string): Promise<number | null> {
    let cached: string | null;
    try {
      cached = await cache.get(key(username));
    } catch {
      // The cache is down: the database answers (slower, still correct).
      return fromDatabase(username);
    }
    if (cached !== null) return decode(cached);
    const v = await fromDatabase(username);
    await cache.setIfAbsent(key(username), encode(v), ttl).catch(() => undefined);
    return v;
  }

  // Requests of one user that arrive while a lookup of theirs is in flight share its answer (one
  // cache read for a burst): the answer is at most one cache round trip old.
  const inFlight = new Map<string, Promise<number | null>>();
  const listeners = new Map<string, Set<() => void>>();

  return {
    current(username) {
      let p = inFlight.get(username);
      if (!p) {
        p = lookup(username).finally(() => inFlight.delete(username));
        inFlight.set(username, p);
      }
      return p;
    },
    async changed(username, log) {
      const v = await fromDatabase(username);
      inFlight.delete(username); // requests from now on read the new entry
      try {
        await cache.set(key(username), encode(v), ttl);
      } catch (err) {
        // Other replicas may answer from the old entry until it expires (ttl): say so loudly.
        log?.error(
          { err, username },
          'could not publish a user change to the cache; older tokens work until the entry expires',
        );
        await cache.del(key(username)).catch(() => undefined);
      }
      for (const l of [...(listeners.get(username) ?? [])]) l();
    },
    onChange(username, listener) {
      let set = listeners.get(username);
      if (!set) {
        set = new Set();
        listeners.set(username, set);
      }
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0 && listeners.get(username) === set) listeners.delete(username);
      };
    },
  };
}
