import type { Cache } from '@trawl/platform';

/** Where a retriever keeps its sync tokens (one per mailbox). */
export interface SyncStateStore {
  get(key: string): Promise<string | null>;
  set(key: string, value: string | null): Promise<void>;
}

/** Sync tokens outlive a restart by far less than this: Graph and Gmail expire theirs sooner. */
const TOKEN_TTL_SECONDS = 30 * 24 * 3600;

/**
 * Sync tokens in the shared cache (Redis in scale-out mode, as the mail orchestrator keeps its
 * delivery state; in-process in embedded mode). Losing one is safe: the retriever then syncs the
 * watched folder in full, which holds only mail not yet acked (acked mail was moved out of it).
 */
export function cacheSyncStore(cache: Cache, prefix: string): SyncStateStore {
  return {
    get: (key) => cache.get(`${prefix}${key}`),
    set: (key, value) =>
      value === null
        ? cache.del(`${prefix}${key}`)
        : cache.set(`${prefix}${key}`, value, TOKEN_TTL_SECONDS),
  };
}

/** Sync tokens in this process only (tests; a retriever without a cache). */
export function memorySyncStore(): SyncStateStore & { values: Map<string, string> } {
  const values = new Map<string, string>();
  return {
    values,
    get: async (key) => values.get(key) ?? null,
    set: async (key, value) => {
      if (value === null) values.delete(key);
      else values.set(key, value);
    },
  };
}
