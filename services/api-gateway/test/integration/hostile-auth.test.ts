import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleEmail } from '../fixtures/email.ts';
import {
  bearer,
  type Gateway,
  login,
  type RealPlatform,
  seedUsers,
  startGateway,
} from '../helpers/harness.ts';
import { realPlatform } from '../helpers/real-platform.ts';

/**
 * Hostile unauthenticated clients against a listening gateway (real sockets, real PostgreSQL,
 * Redis and RabbitMQ), rate limiting off (its default). The bounds are generous (the machine is
 * shared); the behaviour they guard against took 4 s per refusal and stalled /health for 7 s.
 */

/** A JSON body of `bytes` bytes made of many small objects (the costliest shape to parse). */
function manySmallObjects(bytes: number): Buffer {
  const item = '{},';
  const n = Math.floor((bytes - 2) / item.length);
  return Buffer.from(`[${item.repeat(n).slice(0, -1)}]`);
}

interface Answer {
  status: number;
  ms: number;
  body: string;
}

function send(
  port: number,
  o: { method: string; path: string; headers?: Record<string, string>; body?: Buffer },
): Promise<Answer> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: o.method,
        path: o.path,
        headers: {
          ...(o.body ? { 'content-length': String(o.body.length) } : {}),
          ...o.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            ms: performance.now() - t0,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    // The server may answer and close before it has read the whole body: that is the point.
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE' || err.code === 'ECONNRESET') return;
      reject(err);
    });
    req.end(o.body);
  });
}

/** Polls GET /health every 20 ms while `work` runs; answers the slowest answer's time. */
async function healthWhile<T>(
  port: number,
  work: Promise<T>,
): Promise<{ result: T; maxMs: number }> {
  let done = false;
  let maxMs = 0;
  const poll = (async () => {
    while (!done) {
      const r = await send(port, { method: 'GET', path: '/health' });
      expect(r.status).toBe(200);
      maxMs = Math.max(maxMs, r.ms);
      await new Promise((res) => setTimeout(res, 20));
    }
  })();
  try {
    const result = await work;
    return { result, maxMs };
  } finally {
    done = true;
    await poll;
  }
}

describe('hostile unauthenticated clients (rate limiting off)', () => {
  let p: RealPlatform;
  let gw: Gateway;
  let port: number;
  const TEN_MB = manySmallObjects(10 * 1024 * 1024 - 1024);

  beforeAll(async () => {
    p = await realPlatform();
    await seedUsers(p.store);
    gw = await startGateway(p);
    await gw.app.listen({ host: '127.0.0.1', port: 0 });
    port = (gw.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await gw?.close();
    await p?.cleanup();
  });

  it('refuses four concurrent unauthenticated 10 MB JSON bodies with 401 at once; /health keeps answering', async () => {
    const json = { 'content-type': 'application/json' };
    const { result, maxMs } = await healthWhile(
      port,
      Promise.all(
        [0, 1, 2, 3].map(() =>
          send(port, { method: 'POST', path: '/api/v1/analyze', headers: json, body: TEN_MB }),
        ),
      ),
    );
    for (const r of result) {
      expect(r.status).toBe(401);
      expect(JSON.parse(r.body).code).toBe('TRAWL_ERR_UNAUTHORIZED');
      // was 4 s each (parsed, then refused)
      expect(r.ms).toBeLessThan(2_000);
    }
    // was a 7.3 s stall
    expect(maxMs).toBeLessThan(1_000);
  });

  it('refuses a 10 MB body with a wrong token or a wrong internal key the same way', async () => {
    const bad = [
      { ...bearer('not.a.token'), 'content-type': 'application/json' },
      { 'x-internal-api-key': 'wrong', 'content-type': 'application/json' },
    ];
    for (const headers of bad) {
      const r = await send(port, {
        method: 'POST',
        path: '/api/v1/analyze',
        headers,
        body: TEN_MB,
      });
      expect(r.status).toBe(401);
      expect(r.ms).toBeLessThan(2_000);
    }
  });

  it('limits the body of the public token endpoint to a few KiB, form or JSON', async () => {
    for (const type of ['application/json', 'application/x-www-form-urlencoded']) {
      const body =
        type === 'application/json'
          ? TEN_MB
          : Buffer.from(`username=${'a'.repeat(10 * 1024 * 1024)}&password=x`);
      const { result, maxMs } = await healthWhile(
        port,
        send(port, {
          method: 'POST',
          path: '/auth/token',
          headers: { 'content-type': type },
          body,
        }),
      );
      expect(result.status).toBe(413);
      expect(result.ms).toBeLessThan(2_000);
      expect(maxMs).toBeLessThan(1_000);
    }
  });

  it('an unknown route does not parse a 10 MB body either', async () => {
    const r = await send(port, {
      method: 'POST',
      path: '/api/v1/nowhere',
      headers: { 'content-type': 'application/json' },
      body: TEN_MB,
    });
    expect(r.status).toBe(404);
    expect(r.ms).toBeLessThan(2_000);
  });

  it('an authenticated analyst still submits the usual JSON body', async () => {
    const { access_token } = await login(gw.app, 'analyst');
    const r = await send(port, {
      method: 'POST',
      path: '/api/v1/analyze',
      headers: { ...bearer(access_token), 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify({ email: sampleEmail() })),
    });
    expect(r.status, r.body).toBe(200);
    expect(JSON.parse(r.body).status).toBe('queued');
  });
});
