import type { AuditEntry, Store } from '@trawl/platform';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';

/**
 * The gateway's writer of the audit log (docs/security.md).
 *
 * - `record`: one row now, for what an authenticated user did and for successful logins.
 * - `failure`: what an unauthenticated client can repeat at will (a wrong password, an unknown
 *   refresh token) is counted per (action, source address) and written as one row per window
 *   (`details.count`, the first usernames tried, the reasons), so that a client cannot bury the
 *   admins' actions under its own rows. At most `maxSources` sources get their own row per window;
 *   the rest share one row with `address` null. A window's rows are written when it ends and when
 *   the gateway stops; a crash loses at most that window's counts.
 * - Retention: rows older than `retentionDays` are purged hourly (0: never); the store moves the
 *   hash chain's anchor past them.
 */
export interface AuditTrail {
  record(
    request: FastifyRequest | null,
    e: Omit<AuditEntry, 'address' | 'request_id'>,
  ): Promise<void>;
  failure(request: FastifyRequest, e: { action: string; username?: string; reason: string }): void;
  /** Writes the current window's rows now. */
  flush(): Promise<void>;
  /** Starts the retention purge (after `onReady`). */
  start(): void;
  /** Stops the timers and writes the pending rows. */
  stop(): Promise<void>;
}

interface Bucket {
  action: string;
  address: string | null;
  requestId: string;
  count: number;
  first: number;
  last: number;
  usernames: Set<string>;
  reasons: Record<string, number>;
  sources?: Set<string>;
}

const MAX_USERNAMES = 10;
const MAX_USERNAME_CHARS = 64;
const MAX_COUNTED_SOURCES = 10_000;
const HOUR_MS = 3_600_000;

export function createAuditTrail(opts: {
  store: Store;
  logger: FastifyBaseLogger;
  now: () => Date;
  failureWindowSeconds: number;
  retentionDays: number;
  maxSources?: number;
}): AuditTrail {
  const { store, logger, now } = opts;
  const windowMs = Math.max(1, opts.failureWindowSeconds) * 1000;
  const maxSources = opts.maxSources ?? 100;
  let buckets = new Map<string, Bucket>();
  let windowTimer: NodeJS.Timeout | undefined;
  let retentionTimer: NodeJS.Timeout | undefined;
  let pending: Promise<unknown> = Promise.resolve();

  async function append(e: AuditEntry): Promise<void> {
    try {
      await store.audit.append(e);
    } catch (err) {
      logger.error({ err, action: e.action }, 'audit append failed');
    }
  }

  function rowOf(b: Bucket): AuditEntry {
    const details: Record<string, unknown> = {
      count: b.count,
      first_at: new Date(b.first).toISOString(),
      last_at: new Date(b.last).toISOString(),
      reasons: b.reasons,
    };
    if (b.usernames.size > 0) details.usernames = [...b.usernames];
    if (b.sources) details.sources = b.sources.size;
    return {
      actor: null,
      action: b.action,
      target: null,
      outcome: 'failure',
      address: b.address,
      request_id: b.requestId,
      details,
    };
  }

  function flush(): Promise<void> {
    if (windowTimer) clearTimeout(windowTimer);
    windowTimer = undefined;
    const done = buckets;
    buckets = new Map();
    const write = (async () => {
      for (const b of done.values()) await append(rowOf(b));
    })();
    pending = pending.then(() => write);
    return write;
  }

  async function purge(): Promise<void> {
    const before = new Date(now().getTime() - opts.retentionDays * 24 * HOUR_MS);
    try {
      const n = await store.audit.purge(before);
      if (n > 0) logger.info({ purged: n, before: before.toISOString() }, 'audit rows purged');
    } catch (err) {
      logger.warn({ err }, 'audit retention purge failed; retried in an hour');
    }
  }

  return {
    record(request, e) {
      return append({
        ...e,
        address: request?.ip ?? null,
        request_id: request ? String(request.id) : null,
      });
    },
    failure(request, e) {
      const t = now().getTime();
      let address: string | null = request.ip;
      let k = `${e.action}\u0000${address}`;
      let b = buckets.get(k);
      if (!b) {
        const own = [...buckets.values()].filter((x) => x.action === e.action).length;
        if (own >= maxSources) {
          address = null;
          k = `${e.action}\u0000*`;
          b = buckets.get(k);
        }
      }
      if (!b) {
        b = {
          action: e.action,
          address,
          requestId: String(request.id),
          count: 0,
          first: t,
          last: t,
          usernames: new Set(),
          reasons: {},
          ...(address === null ? { sources: new Set<string>() } : {}),
        };
        buckets.set(k, b);
      }
      b.count++;
      b.last = t;
      b.reasons[e.reason] = (b.reasons[e.reason] ?? 0) + 1;
      if (e.username !== undefined && b.usernames.size < MAX_USERNAMES) {
        b.usernames.add(e.username.slice(0, MAX_USERNAME_CHARS));
      }
      if (b.sources && b.sources.size < MAX_COUNTED_SOURCES) b.sources.add(request.ip);
      if (!windowTimer) {
        windowTimer = setTimeout(() => void flush(), windowMs);
        windowTimer.unref();
      }
    },
    flush,
    start() {
      if (opts.retentionDays <= 0 || retentionTimer) return;
      // first purge a minute after start (not in the way of start-up), then hourly
      retentionTimer = setTimeout(function tick() {
        void purge().finally(() => {
          if (retentionTimer) {
            retentionTimer = setTimeout(tick, HOUR_MS);
            retentionTimer.unref();
          }
        });
      }, 60_000);
      retentionTimer.unref();
    },
    async stop() {
      if (retentionTimer) clearTimeout(retentionTimer);
      retentionTimer = undefined;
      await flush();
      await pending;
    },
  };
}
