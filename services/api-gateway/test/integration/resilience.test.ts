import { readFileSync, writeFileSync } from 'node:fs';
import { type Broker, createPgClient, createStore } from '@trawl/platform';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followConfigReloads } from '../../src/config-events.ts';
import { RAW_MESSAGE, sampleEmail } from '../fixtures/email.ts';
import {
  bearer,
  type Gateway,
  login,
  type RealPlatform,
  seedUsers,
  startGateway,
} from '../helpers/harness.ts';
import { deadBroker, realPlatform } from '../helpers/real-platform.ts';

describe('api-gateway limits and failures (PostgreSQL, Redis, RabbitMQ)', () => {
  let p: RealPlatform;
  const open: Gateway[] = [];
  const start = async (...a: Parameters<typeof startGateway>) => {
    const g = await startGateway(...a);
    open.push(g);
    return g;
  };

  beforeAll(async () => {
    p = await realPlatform();
    await seedUsers(p.store);
  });
  afterAll(async () => {
    for (const g of open) await g.close();
    await p?.cleanup();
  });

  it('two gateway instances on one Redis share one rate-limit budget (429 with Retry-After and RateLimit-*)', async () => {
    const config = { rateLimit: { enabled: true, max: 6, windowSeconds: 60 } };
    const a = await start(p, { config });
    const b = await start({ ...p, cache: p.secondCache() }, { config, cfg: a.cfg });
    const health = await a.app.inject({ method: 'GET', url: '/health' });
    expect(health.json().features.rate_limiting).toBe(true);
    // one client address, alternating between replicas
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof a.app.inject>> | undefined;
    for (let i = 0; i < 8; i++) {
      last = await (i % 2 === 0 ? a : b).app.inject({
        method: 'GET',
        url: '/api/v1/config',
        remoteAddress: '192.0.2.10',
      });
      statuses.push(last.statusCode);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 429, 429]);
    expect(last!.headers['content-type']).toContain('application/problem+json');
    expect(last!.json().code).toBe('TRAWL_ERR_RATE_LIMITED');
    expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
    expect(last!.headers['ratelimit-limit']).toBe('6');
    expect(last!.headers['ratelimit-remaining']).toBe('0');
    expect(Number(last!.headers['ratelimit-reset'])).toBeGreaterThan(0);
    // another client has its own budget; /health is never limited
    const other = await b.app.inject({
      method: 'GET',
      url: '/api/v1/config',
      remoteAddress: '192.0.2.11',
    });
    expect(other.statusCode).toBe(401);
    expect(other.headers['ratelimit-remaining']).toBe('5');
    expect(
      (await a.app.inject({ method: 'GET', url: '/health', remoteAddress: '192.0.2.10' }))
        .statusCode,
    ).toBe(200);
  });

  it('counts a signed-in client by its token subject, not its address', async () => {
    const config = { rateLimit: { enabled: true, max: 3, windowSeconds: 60 } };
    const a = await start(p, { config });
    const token = (await login(a.app, 'viewer')).access_token; // counts for the address, not the user
    const codes: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await a.app.inject({
        method: 'GET',
        url: '/api/v1/config',
        headers: bearer(token),
        remoteAddress: `198.51.100.${i + 1}`,
      });
      codes.push(r.statusCode);
    }
    expect(codes).toEqual([200, 200, 200, 429]);
  });

  it('broker down: POST /analyze answers 503 with Retry-After and leaves no job; GET /analyze/{id} still answers', async () => {
    const up = await start(p);
    const token = (await login(up.app, 'analyst')).access_token;
    const ok = await up.app.inject({
      method: 'POST',
      url: '/api/v1/analyze',
      headers: bearer(token),
      payload: { email: sampleEmail() },
    });
    expect(ok.statusCode).toBe(200);
    const jobId = ok.json().job_id as string;

    const broker: Broker = await deadBroker();
    const down = await start({ ...p, broker }, { cfg: up.cfg });
    const before = await p.store.jobs.countByStatus();
    const r = await down.app.inject({
      method: 'POST',
      url: '/api/v1/analyze',
      headers: bearer(token),
      payload: { email: sampleEmail({ subject: 'lost' }) },
    });
    expect(r.statusCode).toBe(503);
    expect(r.json().code).toBe('TRAWL_ERR_BROKER_UNAVAILABLE');
    expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    const raw = await down.app.inject({
      method: 'POST',
      url: '/api/v1/analyze/raw',
      headers: { ...bearer(token), 'content-type': 'message/rfc822' },
      payload: RAW_MESSAGE,
    });
    expect(raw.statusCode).toBe(503);
    expect(await p.store.jobs.countByStatus()).toEqual(before);
    const read = await down.app.inject({
      method: 'GET',
      url: `/api/v1/analyze/${jobId}`,
      headers: bearer(token),
    });
    expect(read.statusCode).toBe(200);
    expect(read.json().job_id).toBe(jobId);
    const health = await down.app.inject({
      method: 'GET',
      url: '/api/v1/system/health',
      headers: bearer(token),
    });
    expect(health.statusCode).toBe(503);
    expect(health.json()).toMatchObject({
      status: 'degraded',
      components: { broker: { status: 'down' }, database: { status: 'ok' } },
    });
    await broker.close().catch(() => undefined);
  });

  it('database down: concurrent submissions (one batched insert) each answer 503 and nothing is published', async () => {
    // nothing listens on port 1: the job insert's connection is refused, as with PostgreSQL stopped
    const downSql = createPgClient({ url: 'postgres://postgres@127.0.0.1:1/trawl_test', max: 2 });
    try {
      const store = { ...p.store, jobs: createStore(downSql).jobs };
      const g = await start({ ...p, store });
      const token = (await login(g.app, 'analyst')).access_token;
      const depth = await p.broker.queueDepth(p.topology.queues.analysisRequests);
      const rs = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          g.app.inject({
            method: 'POST',
            url: '/api/v1/analyze',
            headers: bearer(token),
            payload: { email: sampleEmail({ subject: `down ${i}` }) },
          }),
        ),
      );
      for (const r of rs) {
        expect(r.statusCode).toBe(503);
        expect(r.json().code).toBe('TRAWL_ERR_DATABASE_UNAVAILABLE');
        expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
      }
      expect(await p.broker.queueDepth(p.topology.queues.analysisRequests)).toBe(depth);
    } finally {
      await downSql.close();
    }
  });

  it('a submission logs one info line: the request-completed line, carrying its job_id', async () => {
    const lines: string[] = [];
    const { createGatewayLogger } = await import('../../src/logger.ts');
    const logger = createGatewayLogger('info', { write: (s: string) => lines.push(s) });
    const g = await start(p, { logger });
    const token = (await login(g.app, 'analyst')).access_token;
    lines.length = 0;
    const r = await g.app.inject({
      method: 'POST',
      url: '/api/v1/analyze',
      headers: { ...bearer(token), 'x-request-id': 'req-one-line' },
      payload: { email: sampleEmail() },
    });
    expect(r.statusCode).toBe(200);
    const mine = lines.map((l) => JSON.parse(l)).filter((l) => l.request_id === 'req-one-line');
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      level: 30,
      msg: 'request completed',
      method: 'POST',
      url: '/api/v1/analyze',
      status: 200,
      job_id: r.json().job_id,
      email_id: r.json().email_id,
      workflow: r.json().workflow,
    });
    // other requests' lines do not carry a job
    const other = await g.app.inject({
      method: 'GET',
      url: `/api/v1/analyze/${r.json().job_id}`,
      headers: { ...bearer(token), 'x-request-id': 'req-read' },
    });
    expect(other.statusCode).toBe(200);
    const read = lines.map((l) => JSON.parse(l)).filter((l) => l.request_id === 'req-read');
    expect(read).toHaveLength(1);
    expect(read[0].job_id).toBeUndefined();
  });

  it('answers 413 for bodies over the JSON and raw limits', async () => {
    const small = await start(p, {
      config: {
        limits: {
          maxAttachments: 100,
          maxRecipients: 1000,
          maxSubjectChars: 998,
          maxAttachmentBytes: 1 << 20,
          jsonBodyBytes: 50_000,
          rawMessageBytes: 2_000,
        },
      },
    });
    const token = (await login(small.app, 'analyst')).access_token;
    const big = await small.app.inject({
      method: 'POST',
      url: '/api/v1/analyze',
      headers: bearer(token),
      payload: { email: sampleEmail({ bodyBytes: 60_000 }) },
    });
    expect(big.statusCode).toBe(413);
    expect(big.json().code).toBe('TRAWL_ERR_PAYLOAD_TOO_LARGE');
    const raw = await small.app.inject({
      method: 'POST',
      url: '/api/v1/analyze/raw',
      headers: { ...bearer(token), 'content-type': 'message/rfc822' },
      payload: RAW_MESSAGE + 'x'.repeat(3000),
    });
    expect(raw.statusCode).toBe(413);
  });

  it('answers 500 without a stack or a secret, with the request id the log line carries', async () => {
    const lines: string[] = [];
    const { createGatewayLogger } = await import('../../src/logger.ts');
    const logger = createGatewayLogger('info', { write: (s: string) => lines.push(s) });
    const store = {
      ...p.store,
      audit: {
        ...p.store.audit,
        list: async () => {
          throw new Error('boom: password=hunter2 at /srv/secret.ts:1');
        },
      },
    };
    const g = await start({ ...p, store }, {});
    // the harness does not pass a logger: build one more app with the capturing logger
    const { buildApp } = await import('../../src/app.ts');
    const app = await buildApp({
      config: g.options,
      store,
      broker: p.broker,
      cache: p.cache,
      topology: p.topology,
      configState: g.configState,
      invoker: {
        analyze: async () => {
          throw new Error('x');
        },
        enrich: async () => {
          throw new Error('x');
        },
      },
      logger,
      version: 't',
    });
    const token = (await login(app, 'admin')).access_token;
    const r = await app.inject({
      method: 'GET',
      url: '/api/v1/audit',
      headers: { ...bearer(token), 'x-request-id': 'req-500-test' },
    });
    expect(r.statusCode).toBe(500);
    const body = r.json();
    expect(body).toMatchObject({
      code: 'TRAWL_ERR_INTERNAL',
      request_id: 'req-500-test',
      status: 500,
    });
    expect(r.body).not.toContain('hunter2');
    expect(r.body).not.toContain('secret.ts');
    const logged = lines.find((l) => l.includes('req-500-test') && l.includes('"level":50'));
    expect(logged).toBeDefined();
    // credentials never reach the log
    expect(lines.join('\n')).not.toContain(token);
    expect(lines.join('\n')).not.toContain('correct horse');
    await app.close();
  });

  it('a replica follows a reload done by another one through config.reloaded', async () => {
    const a = await start(p);
    const b = await start(p, { cfg: a.cfg });
    const follower = await followConfigReloads({
      broker: p.broker,
      topology: p.topology,
      configState: b.configState,
      logger: pino({ level: 'silent' }),
    });
    try {
      const token = (await login(a.app, 'admin')).access_token;
      writeFileSync(
        a.cfg.configFile,
        readFileSync(a.cfg.configFile, 'utf8').replace('max_retries: 2', 'max_retries: 4'),
      );
      const r = (
        await a.app.inject({ method: 'POST', url: '/api/v1/config/reload', headers: bearer(token) })
      ).json();
      expect(r.old_version).not.toBe(r.new_version);
      for (let i = 0; i < 100 && b.configState.current().files.version !== r.new_version; i++)
        await new Promise((res) => setTimeout(res, 50));
      expect(b.configState.current().files.version).toBe(r.new_version);
      expect(b.configState.current().files.service.workflow.max_retries).toBe(4);
    } finally {
      await follower.cancel();
    }
  });

  it('refuses a Host header outside TRUSTED_HOSTS (health checks excepted)', async () => {
    const g = await start(p, {
      config: { trustedHosts: ['localhost', '127.0.0.1', '*.trawl.example'] },
    });
    const evil = await g.app.inject({
      method: 'GET',
      url: '/api/v1/config',
      headers: { host: 'evil.example:8001' },
    });
    expect(evil.statusCode).toBe(400);
    expect(evil.json().code).toBe('TRAWL_ERR_GATEWAY_UNTRUSTED_HOST');
    expect(
      (
        await g.app.inject({
          method: 'GET',
          url: '/api/v1/config',
          headers: { host: 'localhost:8001' },
        })
      ).statusCode,
    ).toBe(401);
    expect(
      (
        await g.app.inject({
          method: 'GET',
          url: '/api/v1/config',
          headers: { host: 'api.trawl.example' },
        })
      ).statusCode,
    ).toBe(401);
    expect(
      (await g.app.inject({ method: 'GET', url: '/health', headers: { host: 'evil.example' } }))
        .statusCode,
    ).toBe(200);
  });
});
