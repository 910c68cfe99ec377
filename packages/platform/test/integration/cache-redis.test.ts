import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createRedisCache, createRedisClient } from '../../src/index.ts';
import {
  cacheConformance,
  deleteByPrefix,
  testRedis,
  testUrls,
  uniqueSuffix,
  waitFor,
} from '../../src/testing/index.ts';

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

  it('a new client, or a duplicate of a connected one, can be used at once', async () => {
    const r = testRedis();
    try {
      await r.cache.set('x', '1', 60); // issued before the client is connected
      const dup = r.client.duplicate(); // copies the options of a client whose queue is off
      try {
        expect(await dup.get(`${r.prefix}x`)).toBe('1');
      } finally {
        dup.disconnect();
      }
    } finally {
      await r.cleanup();
    }
  });
});

/** A TCP server on 127.0.0.1 the test controls: it can stop (closing every connection) and start again on the same port. */
function tcpServer(onConnection: (socket: Socket) => void) {
  const open = new Set<Socket>();
  let server: Server | null = null;
  let port = 0;
  const track = (s: Socket) => {
    open.add(s);
    s.on('close', () => open.delete(s));
    s.on('error', () => {});
  };
  return {
    get port() {
      return port;
    },
    async start() {
      server = createServer((socket) => {
        track(socket);
        onConnection(socket);
      });
      server.listen(port, '127.0.0.1');
      await once(server, 'listening');
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error('no TCP address');
      port = address.port;
    },
    track,
    async stop() {
      const s = server;
      server = null;
      if (!s) return;
      for (const socket of open) socket.destroy();
      await new Promise<void>((r) => s.close(() => r()));
    },
  };
}

const OFFLINE_QUEUE_OFF = /enableOfflineQueue/;

describe('Redis down: cache commands fail at once instead of waiting for a reconnect', () => {
  const toClose: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const close of toClose.splice(0).reverse()) await close();
  });
  const client = (url: string): Redis => {
    const c = createRedisClient(url);
    c.on('error', () => {});
    toClose.push(() => c.disconnect());
    return c;
  };
  const causeOf = async (p: Promise<unknown>): Promise<unknown> => {
    const err = await p.then(
      () => {
        throw new Error('the command succeeded');
      },
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'TRAWL_ERR_CACHE_UNAVAILABLE' });
    return (err as Error).cause;
  };

  it('rejects commands on a port nothing listens on, without queueing them', async () => {
    const free = tcpServer(() => {});
    await free.start();
    await free.stop(); // the port is now closed
    const c = client(`redis://127.0.0.1:${free.port}/0`);
    const cache = createRedisCache({ client: c, prefix: 'x:' });
    // issued during the first connection attempt: rejected when that attempt fails
    await expect(causeOf(cache.get('a'))).resolves.toMatchObject({
      name: 'MaxRetriesPerRequestError',
    });
    await waitFor(() => c.status === 'reconnecting');
    // while the client waits to reconnect: rejected at once, not put in the offline queue
    const cause = await causeOf(cache.get('a'));
    expect(String((cause as Error).message)).toMatch(OFFLINE_QUEUE_OFF);
    await expect(causeOf(cache.set('a', '1', 60))).resolves.toBeInstanceOf(Error);
    await expect(causeOf(cache.hit('rl', 1000))).resolves.toBeInstanceOf(Error);
  });

  it('logs one warning per outage, not one per reconnect attempt', async () => {
    const free = tcpServer(() => {});
    await free.start();
    await free.stop();
    const warnings: unknown[] = [];
    const noop = () => {};
    const c = createRedisClient(`redis://127.0.0.1:${free.port}/0`, {
      logger: { debug: noop, info: noop, error: noop, warn: (o) => warnings.push(o) },
    });
    toClose.push(() => c.disconnect());
    let errors = 0;
    c.on('error', () => {
      errors++;
    });
    await waitFor(() => errors >= 3);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ connection: 'redis' });
  });

  it('rejects commands on a server that accepts connections and never answers', async () => {
    const silent = tcpServer(() => {}); // reads nothing, answers nothing
    await silent.start();
    toClose.push(() => silent.stop());
    const c = client(`redis://127.0.0.1:${silent.port}/0`);
    const cache = createRedisCache({ client: c, prefix: 'x:' });
    await expect(causeOf(cache.get('a'))).resolves.toMatchObject({ message: 'Command timed out' });
    // the silent connection is dropped (socket timeout); the commands after it fail at once
    await waitFor(() => c.status === 'reconnecting');
    const cause = await causeOf(cache.get('a'));
    expect(String((cause as Error).message)).toMatch(OFFLINE_QUEUE_OFF);
  });

  it('fails at once while Redis is unreachable, and is used again as soon as it is back', async () => {
    const redisUrl = new URL(testUrls().redisUrl);
    // a TCP proxy to the test Redis that the test stops and starts: Redis "down" and "back"
    const proxy = tcpServer((socket) => {
      const upstream = connect(Number(redisUrl.port || 6379), redisUrl.hostname);
      proxy.track(upstream);
      socket.pipe(upstream).pipe(socket);
      upstream.on('close', () => socket.destroy());
      socket.on('close', () => upstream.destroy());
    });
    await proxy.start();
    toClose.push(() => proxy.stop());
    const c = client(`redis://127.0.0.1:${proxy.port}${redisUrl.pathname}`);
    const prefix = `trawl-test:${uniqueSuffix()}:`;
    const cache = createRedisCache({ client: c, prefix });
    toClose.push(async () => {
      const r = testRedis();
      await deleteByPrefix(r.client, prefix);
      await r.cleanup();
    });
    await cache.set('k', 'before', 60);
    expect(await cache.get('k')).toBe('before');

    await proxy.stop();
    await waitFor(() => c.status === 'reconnecting');
    const cause = await causeOf(cache.get('k'));
    expect(String((cause as Error).message)).toMatch(OFFLINE_QUEUE_OFF);

    await proxy.start(); // same port
    // reconnection went on in the background: the cache answers again without a new client
    await waitFor(async () => (await cache.get('k').catch(() => null)) === 'before');
    await cache.set('k', 'after', 60);
    expect(await cache.get('k')).toBe('after');
  });
});
