import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manyPartsMessage, rawMessage } from '../../src/testing/raw-messages.ts';
import { RAW_MESSAGE, sampleEmail } from '../fixtures/email.ts';
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
 * Large and hostile MIME bodies against a listening gateway (real sockets, real PostgreSQL, Redis
 * and RabbitMQ), issue 15: a large message is parsed, and a large HTML body sanitized, in a worker
 * thread, so /health keeps answering meanwhile; a parse past its deadline answers the parser's 422
 * and its worker is replaced. The bounds are generous (the machine is shared); the figures are
 * printed.
 */

interface Answer {
  status: number;
  ms: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
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
            headers: res.headers,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(o.body);
  });
}

/**
 * Polls GET /health every 20 ms while `work` runs; answers the slowest answer's time and the longest
 * gap between two answers (a stalled event loop delays the next poll too, so a stall shows there).
 */
async function healthWhile<T>(
  port: number,
  work: Promise<T>,
): Promise<{ result: T; maxMs: number; maxGapMs: number; polls: number }> {
  let done = false;
  let maxMs = 0;
  let maxGapMs = 0;
  let polls = 0;
  let last = performance.now();
  const poll = (async () => {
    while (!done) {
      const r = await send(port, { method: 'GET', path: '/health' });
      expect(r.status).toBe(200);
      maxMs = Math.max(maxMs, r.ms);
      const now = performance.now();
      maxGapMs = Math.max(maxGapMs, now - last);
      last = now;
      polls++;
      await new Promise((res) => setTimeout(res, 20));
    }
  })();
  try {
    const result = await work;
    return { result, maxMs, maxGapMs, polls };
  } finally {
    done = true;
    await poll;
  }
}

const figures = (f: { maxMs: number; maxGapMs: number; polls: number }) =>
  `/health slowest ${f.maxMs.toFixed(1)} ms, longest gap between answers ${f.maxGapMs.toFixed(0)} ms (20 ms sleep included), ${f.polls} polls`;

describe('large and hostile MIME bodies (issue 15)', () => {
  let p: RealPlatform;
  let gw: Gateway;
  let port: number;
  let auth: Record<string, string>;

  beforeAll(async () => {
    p = await realPlatform();
    await seedUsers(p.store);
    gw = await startGateway(p);
    await gw.app.listen({ host: '127.0.0.1', port: 0 });
    port = (gw.app.server.address() as AddressInfo).port;
    const { access_token } = await login(gw.app, 'analyst');
    auth = bearer(access_token);
  });
  afterAll(async () => {
    await gw?.close();
    await p?.cleanup();
  });

  const raw = (body: Buffer) =>
    send(port, {
      method: 'POST',
      path: '/api/v1/analyze/raw',
      headers: { ...auth, 'content-type': 'message/rfc822' },
      body,
    });

  it('a small raw message is submitted as before', async () => {
    const r = await raw(Buffer.from(RAW_MESSAGE));
    expect(r.status, r.body).toBe(200);
    expect(JSON.parse(r.body).status).toBe('queued');
  });

  it('/health keeps answering while a 10 MB message is parsed', async () => {
    const msg = rawMessage(10 * 1024 * 1024);
    // the first large message starts the workers: measure the second
    expect((await raw(msg)).status).toBe(200);
    const h = await healthWhile(port, raw(msg));
    const { result, maxMs } = h;
    console.log(`10 MB raw message: answered in ${result.ms.toFixed(0)} ms; ${figures(h)}`);
    expect(result.status, result.body).toBe(200);
    expect(JSON.parse(result.body).status).toBe('queued');
    expect(maxMs).toBeLessThan(1_000);
  });

  it('/health keeps answering while a message of many parts is refused', async () => {
    // 2,000 parts with 4 KiB headers each (8 MB): over the parser's 500-part bound
    const msg = manyPartsMessage(2_000, 4_096);
    const h = await healthWhile(port, raw(msg));
    const { result, maxMs } = h;
    console.log(
      `8 MB message of 2,000 parts: ${result.status} in ${result.ms.toFixed(0)} ms; ${figures(h)}`,
    );
    expect(result.status).toBe(422);
    expect(JSON.parse(result.body).code).toBe('TRAWL_ERR_MAIL_UNPARSEABLE');
    expect(maxMs).toBeLessThan(1_000);
  });

  it('/health keeps answering while the message view of a 5 MB HTML body is built', async () => {
    const row = '<p onclick="x()">Verify <a href="https://examp1e-bank.com/">here</a></p>\n';
    const email = {
      ...sampleEmail(),
      body_html: row.repeat(Math.ceil((5 * 1024 * 1024) / row.length)),
    };
    const s = await send(port, {
      method: 'POST',
      path: '/api/v1/analyze',
      headers: { ...auth, 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify({ email })),
    });
    expect(s.status, s.body).toBe(200);
    const jobId = JSON.parse(s.body).job_id as string;
    const h = await healthWhile(
      port,
      send(port, { method: 'GET', path: `/api/v1/analyze/${jobId}/message`, headers: auth }),
    );
    const { result, maxMs } = h;
    console.log(
      `message view of a 5 MB HTML body: answered in ${result.ms.toFixed(0)} ms; ${figures(h)}`,
    );
    expect(result.status, result.body.slice(0, 300)).toBe(200);
    const view = JSON.parse(result.body) as { html: string };
    expect(view.html).not.toContain('onclick');
    expect(view.html).toContain('data-trawl-href');
    expect(maxMs).toBeLessThan(1_000);
  });
});

describe('a parse past its deadline (issue 15)', () => {
  let p: RealPlatform;
  let gw: Gateway;
  let auth: Record<string, string>;

  beforeAll(async () => {
    p = await realPlatform();
    await seedUsers(p.store);
    gw = await startGateway(p, { config: { cpuWork: { workers: 1, deadlineMs: 60 } } });
    const { access_token } = await login(gw.app, 'analyst');
    auth = bearer(access_token);
  });
  afterAll(async () => {
    await gw?.close();
    await p?.cleanup();
  });

  const raw = (body: Buffer) =>
    gw.app.inject({
      method: 'POST',
      url: '/api/v1/analyze/raw',
      headers: { ...auth, 'content-type': 'message/rfc822' },
      payload: body,
    });

  it('answers 422 TRAWL_ERR_MAIL_UNPARSEABLE, replaces the worker, and the next message goes through', async () => {
    // the worker is up and warm (512 KiB: above the threshold, so parsed in it)
    const warm = rawMessage(512 * 1024);
    for (let i = 0; i < 5; i++) if ((await raw(warm)).statusCode === 200) break;
    const r = await raw(rawMessage(10 * 1024 * 1024));
    expect(r.statusCode, r.body).toBe(422);
    expect(r.headers['content-type']).toContain('application/problem+json');
    expect(r.json().code).toBe('TRAWL_ERR_MAIL_UNPARSEABLE');
    expect(r.json().detail).toContain('within 60 ms');
    const ok = await raw(Buffer.from(RAW_MESSAGE));
    expect(ok.statusCode, ok.body).toBe(200);
    // a pooled message after the replacement
    let last = 0;
    for (let i = 0; i < 5 && last !== 200; i++) last = (await raw(warm)).statusCode;
    expect(last).toBe(200);
  });
});
