/**
 * The cache adapter: Redis (ioredis) and in-process (TTL + size bound), one conformance suite.
 * Values are strings; callers serialise JSON. Every key is prefixed by the adapter's `prefix`.
 */
export interface Cache {
  readonly kind: 'redis' | 'memory';
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlSeconds?: number): Promise<void>;
  /** Sets only when absent; true when it was set (dedup, locks). */
  setIfAbsent(key: string, value: string, ttlSeconds: number): Promise<boolean>;
  del(key: string): Promise<void>;
  /**
   * Adds 1 to a counter in a fixed window that starts at its first hit; answers the count and the
   * ms left in the window (rate limiting shared across replicas).
   */
  hit(key: string, windowMs: number): Promise<{ count: number; resetMs: number }>;
  ping(): Promise<number>;
  close(): Promise<void>;
}
