import { backoffDelay } from '@trawl/contracts';
import { Redis } from 'ioredis';
import { cacheUnavailable } from '../errors.ts';
import { errorInfo, type PlatformLogger } from '../logger.ts';
import type { Cache } from './types.ts';

// Fixed window: the first hit starts the window (PEXPIRE), later hits only count. A key left without
// expiry (e.g. written by something else) gets one, so a window can never last forever.
const HIT_SCRIPT = `
local c = redis.call('INCR', KEYS[1])
if c == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local t = redis.call('PTTL', KEYS[1])
if t < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); t = tonumber(ARGV[1]) end
return {c, t}
`;

/** How long a cache command may wait for Redis's answer before it fails (`commandTimeoutMs`). */
const REDIS_COMMAND_TIMEOUT_MS = 1000;
/** Reconnect delays: 200 ms after the first failed attempt, doubling, at most 3 s. */
const REDIS_RECONNECT = { initialMs: 200, maxMs: 3000 };

/**
 * A Redis client configured to fail fast while Redis is down (callers fall back or answer 503).
 * - Commands wait in ioredis's offline queue only during the client's first connection attempt (so
 *   code may use a new client at once); from the first `ready` or `close` on, a command issued
 *   while the connection is not ready is rejected at once (`enableOfflineQueue` turned off) instead
 *   of waiting for a reconnect, and commands in flight when the connection drops are rejected
 *   (`maxRetriesPerRequest: 0`). Reconnection goes on in the background (`retryStrategy`); commands
 *   succeed again as soon as the connection is ready.
 * - A Redis that accepts connections but does not answer: a command fails after `commandTimeoutMs`
 *   (`commandTimeout`) and the connection is dropped after as long without data (`socketTimeout`),
 *   so the commands after it fail at once while the client reconnects.
 * `autoPipelining`: commands issued in the same event-loop turn leave in one write (ioredis
 * auto-pipelining), e.g. the status-cache writes of the jobs an orchestrator finishes together.
 * Connection errors are logged through `logger`: one warning when the connection is lost (not one per
 * reconnect attempt) and one line when it is back; without a logger they are dropped (ioredis would
 * otherwise print "Unhandled error event" to stderr at every attempt).
 */
export function createRedisClient(
  url: string,
  opts: {
    connectionName?: string;
    autoPipelining?: boolean;
    commandTimeoutMs?: number;
    logger?: PlatformLogger;
  } = {},
): Redis {
  const timeoutMs = opts.commandTimeoutMs ?? REDIS_COMMAND_TIMEOUT_MS;
  return queueOnlyWhileFirstConnecting(
    new Redis(url, {
      enableOfflineQueue: true,
      maxRetriesPerRequest: 0,
      commandTimeout: timeoutMs,
      socketTimeout: timeoutMs,
      connectTimeout: 5000,
      retryStrategy: (times) => backoffDelay(times + 1, REDIS_RECONNECT),
      ...(opts.connectionName === undefined ? {} : { connectionName: opts.connectionName }),
      ...(opts.autoPipelining === true ? { enableAutoPipelining: true } : {}),
    }),
    opts.logger,
    opts.connectionName ?? 'redis',
  );
}

/** One warning per outage and one line when the connection is back (see createRedisClient). */
function logConnection(client: Redis, logger: PlatformLogger | undefined, name: string): void {
  let down = false;
  client.on('error', (err: Error) => {
    if (down) return;
    down = true;
    logger?.warn({ connection: name, err: errorInfo(err) }, 'redis unavailable; reconnecting');
  });
  client.on('ready', () => {
    if (!down) return;
    down = false;
    logger?.info({ connection: name }, 'redis connection restored');
  });
}

/**
 * Turns the client's offline queue off once its first connection attempt has ended (ready, or
 * closed). ioredis reads `options.enableOfflineQueue` at each command; `duplicate()` copies the
 * options, so a duplicate starts with its own queue on and the same rule.
 */
function queueOnlyWhileFirstConnecting(
  client: Redis,
  logger: PlatformLogger | undefined,
  name: string,
): Redis {
  logConnection(client, logger, name);
  const failFast = () => {
    client.options.enableOfflineQueue = false;
  };
  client.once('ready', failFast);
  client.once('close', failFast);
  const duplicate = client.duplicate.bind(client);
  client.duplicate = (override) =>
    queueOnlyWhileFirstConnecting(
      duplicate({ ...override, enableOfflineQueue: true }),
      logger,
      name,
    );
  return client;
}

async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw cacheUnavailable('cache is unavailable', err);
  }
}

/**
 * Redis cache. The client is passed in and stays the caller's: `close()` quits it only when
 * `ownsClient` is true.
 */
export function createRedisCache(opts: {
  client: Redis;
  prefix: string;
  ownsClient?: boolean;
}): Cache {
  const { client, prefix } = opts;
  return {
    kind: 'redis',
    get: (key) => guard(() => client.get(prefix + key)),
    async set(key, value, ttlSeconds) {
      await guard(() =>
        ttlSeconds !== undefined && ttlSeconds > 0
          ? client.set(prefix + key, value, 'PX', Math.round(ttlSeconds * 1000))
          : client.set(prefix + key, value),
      );
    },
    async setIfAbsent(key, value, ttlSeconds) {
      const r = await guard(() =>
        client.set(prefix + key, value, 'PX', Math.max(1, Math.round(ttlSeconds * 1000)), 'NX'),
      );
      return r === 'OK';
    },
    async del(key) {
      await guard(() => client.del(prefix + key));
    },
    async hit(key, windowMs) {
      const r = (await guard(() => client.eval(HIT_SCRIPT, 1, prefix + key, String(windowMs)))) as [
        number,
        number,
      ];
      return { count: Number(r[0]), resetMs: Math.max(0, Number(r[1])) };
    },
    async ping() {
      const t = performance.now();
      await guard(() => client.ping());
      return performance.now() - t;
    },
    async close() {
      if (opts.ownsClient === true) await client.quit().catch(() => undefined);
    },
  };
}
