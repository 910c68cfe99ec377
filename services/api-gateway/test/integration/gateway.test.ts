import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { deriveCredential, Email, type PartyKind } from '@trawl/contracts';
import { buildEvidence } from '@trawl/investigation';
import { batchJobs } from '@trawl/platform';
import { waitFor } from '@trawl/platform/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenService } from '../../src/auth/tokens.ts';
import { RAW_MESSAGE, sampleEmail } from '../fixtures/email.ts';
import type { RealPlatform } from '../helpers/harness.ts';
import {
  bearer,
  type Gateway,
  INTERNAL_KEY,
  login,
  PASSWORD,
  SECRET,
  seedUsers,
  startGateway,
} from '../helpers/harness.ts';
import { realPlatform } from '../helpers/real-platform.ts';

/** A party's own credential, derived from the platform key as `trawl credentials` does. */
const cred = (kind: PartyKind, id: string) => deriveCredential(INTERNAL_KEY, { kind, id });

const PROBLEM = 'application/problem+json';

function expectProblem(
  r: { statusCode: number; headers: Record<string, unknown>; json(): any },
  status: number,
  code?: string,
) {
  expect(r.statusCode).toBe(status);
  expect(String(r.headers['content-type'])).toContain(PROBLEM);
  const b = r.json();
  expect(b).toMatchObject({
    status,
    type: expect.any(String),
    title: expect.any(String),
    detail: expect.any(String),
    instance: expect.any(String),
    request_id: expect.any(String),
  });
  if (code) expect(b.code).toBe(code);
  return b;
}

describe('api-gateway on PostgreSQL, Redis and RabbitMQ', () => {
  let p: RealPlatform;
  let gw: Gateway;
  let app: FastifyInstance;
  const tok: Record<string, string> = {};

  beforeAll(async () => {
    p = await realPlatform();
    await seedUsers(p.store);
    // failed logins are written per source once a window ends: 1 s here
    gw = await startGateway(p, {
      config: { audit: { retentionDays: 0, failureWindowSeconds: 1 } },
    });
    app = gw.app;
    for (const u of ['viewer', 'analyst', 'admin']) tok[u] = (await login(app, u)).access_token;
  });
  afterAll(async () => {
    await gw?.close();
    await p?.cleanup();
  });

  describe('authentication', () => {
    it('issues tokens for a form-encoded password grant and for JSON', async () => {
      const form = await app.inject({
        method: 'POST',
        url: '/auth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `grant_type=password&username=viewer&password=${encodeURIComponent(PASSWORD)}`,
      });
      expect(form.statusCode).toBe(200);
      expect(form.json()).toMatchObject({
        token_type: 'bearer',
        expires_in: 1800,
        access_token: expect.any(String),
        refresh_token: expect.any(String),
      });
      const json = await app.inject({
        method: 'POST',
        url: '/auth/token',
        payload: { username: 'viewer', password: PASSWORD },
      });
      expect(json.statusCode).toBe(200);
      const me = await app.inject({
        method: 'GET',
        url: '/auth/me',
        headers: bearer(json.json().access_token),
      });
      expect(me.json()).toMatchObject({ username: 'viewer', roles: ['viewer'] });
    });

    it('answers 401 with WWW-Authenticate for a wrong password, an unknown user, no token', async () => {
      const bad = await app.inject({
        method: 'POST',
        url: '/auth/token',
        payload: { username: 'viewer', password: 'nope-nope-nope' },
      });
      expectProblem(bad, 401, 'TRAWL_ERR_AUTH_INVALID_CREDENTIALS');
      expect(bad.headers['www-authenticate']).toMatch(/^Bearer/);
      const unknown = await app.inject({
        method: 'POST',
        url: '/auth/token',
        payload: { username: 'ghost', password: 'x' },
      });
      expectProblem(unknown, 401);
      const none = await app.inject({ method: 'GET', url: '/api/v1/config' });
      expectProblem(none, 401, 'TRAWL_ERR_UNAUTHORIZED');
      expect(none.headers['www-authenticate']).toMatch(/^Bearer/);
    });

    it('answers 422 naming the missing fields of a token request', async () => {
      const r = await app.inject({
        method: 'POST',
        url: '/auth/token',
        payload: { grant_type: 'password' },
      });
      const b = expectProblem(r, 422, 'TRAWL_ERR_VALIDATION');
      expect(b.errors.map((e: { path: string }) => e.path)).toEqual(
        expect.arrayContaining(['/username', '/password']),
      );
    });

    it('rotates refresh tokens; reusing one revokes the whole family', async () => {
      const first = await login(app, 'analyst');
      const r1 = await app.inject({
        method: 'POST',
        url: '/auth/refresh',
        payload: { refresh_token: first.refresh_token },
      });
      expect(r1.statusCode).toBe(200);
      const second = r1.json();
      expect(second.refresh_token).not.toBe(first.refresh_token);
      const reuse = await app.inject({
        method: 'POST',
        url: '/auth/refresh',
        payload: { refresh_token: first.refresh_token },
      });
      expectProblem(reuse, 401, 'TRAWL_ERR_AUTH_INVALID_REFRESH_TOKEN');
      const afterTheft = await app.inject({
        method: 'POST',
        url: '/auth/refresh',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `refresh_token=${second.refresh_token}`,
      });
      expect(afterTheft.statusCode).toBe(401);
    });

    it('slows down repeated failed logins for one user and address, even with rate limiting off', async () => {
      const u = `slow-${randomUUID().slice(0, 8)}`;
      await app.inject({
        method: 'POST',
        url: '/api/v1/users',
        headers: bearer(tok.admin!),
        payload: { username: u, password: PASSWORD, roles: ['viewer'] },
      });
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const r = await app.inject({
          method: 'POST',
          url: '/auth/token',
          payload: { username: u, password: 'wrong-password!' },
        });
        statuses.push(r.statusCode);
      }
      expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
      const locked = await app.inject({
        method: 'POST',
        url: '/auth/token',
        payload: { username: u, password: PASSWORD },
      });
      expectProblem(locked, 429, 'TRAWL_ERR_AUTH_LOGIN_THROTTLED');
      expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
      // another address is not locked out
      const other = await app.inject({
        method: 'POST',
        url: '/auth/token',
        remoteAddress: '10.9.8.7',
        payload: { username: u, password: PASSWORD },
      });
      expect(other.statusCode).toBe(200);
    });

    it('answers 401 with TRAWL_ERR_TOKEN_EXPIRED for an expired token and 401 for another key', async () => {
      const past = createTokenService({
        secretKey: SECRET,
        accessTokenExpireMinutes: 1,
        now: () => Date.now() - 3_600_000,
        cacheSeconds: 0,
      });
      const expired = (await past.issueAccess('admin', ['admin'], 1)).token;
      const r = await app.inject({
        method: 'GET',
        url: '/api/v1/config',
        headers: bearer(expired),
      });
      expectProblem(r, 401, 'TRAWL_ERR_TOKEN_EXPIRED');
      expect(r.headers['www-authenticate']).toContain('invalid_token');
      const forged = (
        await createTokenService({
          secretKey: 'another-secret-key-0123456789abcdef',
          accessTokenExpireMinutes: 5,
        }).issueAccess('admin', ['admin'], 1)
      ).token;
      expectProblem(
        await app.inject({ method: 'GET', url: '/api/v1/config', headers: bearer(forged) }),
        401,
        'TRAWL_ERR_AUTH_INVALID_TOKEN',
      );
      expectProblem(
        await app.inject({
          method: 'GET',
          url: '/api/v1/config',
          headers: { 'x-internal-api-key': 'wrong' },
        }),
        401,
      );
    });
  });

  describe('role x route matrix', () => {
    let jobId: string;
    let creds: Record<string, Record<string, string>>;
    beforeAll(async () => {
      const r = await app.inject({
        method: 'POST',
        url: '/api/v1/analyze',
        headers: bearer(tok.analyst!),
        payload: { email: sampleEmail() },
      });
      jobId = r.json().job_id;
      const past = createTokenService({
        secretKey: SECRET,
        accessTokenExpireMinutes: 1,
        now: () => Date.now() - 3_600_000,
        cacheSeconds: 0,
      });
      const other = createTokenService({
        secretKey: 'another-secret-key-0123456789abcdef',
        accessTokenExpireMinutes: 5,
      });
      creds = {
        viewer: bearer(tok.viewer!),
        analyst: bearer(tok.analyst!),
        admin: bearer(tok.admin!),
        internal: { 'x-internal-api-key': INTERNAL_KEY },
        plugin: { 'x-internal-api-key': cred('plugin', 'headers') },
        retriever: { 'x-internal-api-key': cred('retriever', 'imap') },
        mailOrch: { 'x-internal-api-key': cred('service', 'mail-orchestrator') },
        none: {},
        expired: bearer((await past.issueAccess('admin', ['admin'], 1)).token),
        otherKey: bearer((await other.issueAccess('admin', ['admin'], 1)).token),
      };
    });

    const V = 'viewer';
    const A = 'analyst';
    const D = 'admin';
    // [method, url, body?, who gets 2xx]; everyone else with valid credentials gets 403; none/expired/otherKey 401.
    const routes: [string, string, unknown, string[]][] = [
      ['GET', '/auth/me', undefined, [V, A, D, 'internal', 'plugin', 'retriever', 'mailOrch']],
      ['GET', '/api/v1/analyze/:job', undefined, [V, A, D, 'internal', 'mailOrch']],
      ['GET', '/api/v1/analyze', undefined, [V, A, D, 'mailOrch']],
      ['POST', '/api/v1/analyze', { email: sampleEmail() }, [A, D, 'internal']],
      ['GET', '/api/v1/config', undefined, [V, A, D, 'internal']],
      ['GET', '/api/v1/config/analyzers/headers', undefined, [D, 'plugin']],
      ['GET', '/api/v1/config/analyzers/urls', undefined, [D]],
      ['POST', '/api/v1/config/reload', undefined, [D]],
      ['GET', '/api/v1/workflows', undefined, [V, A, D, 'internal']],
      ['GET', '/api/v1/workflows/default', undefined, [V, A, D, 'internal']],
      [
        'POST',
        '/api/v1/workflows/validate',
        { id: 'x', name: 'x', stages: [{ name: 's', analyzers: [{ id: 'urls' }] }] },
        [A, D],
      ],
      ['POST', '/api/v1/workflows/quick/dry-run', sampleEmail(), [A, D]],
      ['GET', '/api/v1/users', undefined, [D]],
      ['GET', '/api/v1/audit', undefined, [D]],
      ['GET', '/api/v1/system/health', undefined, [V, A, D, 'internal']],
    ];
    const who = [
      V,
      A,
      D,
      'internal',
      'plugin',
      'retriever',
      'mailOrch',
      'none',
      'expired',
      'otherKey',
    ];

    it('answers 2xx, 401 or 403 per cell', async () => {
      const failures: string[] = [];
      for (const [method, url0, body, allowed] of routes) {
        for (const w of who) {
          const url = url0.replace(':job', jobId);
          const r = await app.inject({
            method: method as 'GET',
            url,
            headers: creds[w]!,
            ...(body === undefined ? {} : { payload: body as object }),
          });
          const expected = ['none', 'expired', 'otherKey'].includes(w)
            ? 401
            : allowed.includes(w)
              ? 200
              : 403;
          const got = r.statusCode >= 200 && r.statusCode < 300 ? 200 : r.statusCode;
          if (got !== expected)
            failures.push(
              `${method} ${url0} as ${w}: ${r.statusCode} (expected ${expected}) ${r.body.slice(0, 200)}`,
            );
        }
      }
      expect(failures).toEqual([]);
    });
  });

  describe('analysis', () => {
    it('queues a job only after storing it and the broker confirming it', async () => {
      const before = await p.broker.queueDepth(p.topology.queues.analysisRequests);
      const r = await app.inject({
        method: 'POST',
        url: '/api/v1/analyze',
        headers: bearer(tok.analyst!),
        payload: { email: sampleEmail({ subject: 'one' }), workflow_id: 'quick' },
      });
      expect(r.statusCode).toBe(200);
      const b = r.json();
      expect(b).toMatchObject({
        status: 'queued',
        workflow: 'quick',
        job_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        email_id: expect.any(String),
        message: expect.any(String),
      });
      expect(await p.store.jobs.get(b.job_id)).toMatchObject({
        status: 'queued',
        workflow: 'quick',
      });
      expect(await p.broker.queueDepth(p.topology.queues.analysisRequests)).toBe(before + 1);
      // the row keeps the validated Email as JSON text (ADR 004)
      const row = await p.sql.query<{ email: unknown }>(
        'SELECT email FROM jobs WHERE job_id = $1',
        [b.job_id],
      );
      expect(typeof row.rows[0]?.email).toBe('string');
      expect(JSON.parse(row.rows[0]?.email as string)).toEqual(
        Email.parse(sampleEmail({ subject: 'one' })),
      );
      // the same message gets the same email_id
      const again = await app.inject({
        method: 'POST',
        url: '/api/v1/analyze',
        headers: bearer(tok.analyst!),
        payload: { email: sampleEmail({ subject: 'one' }) },
      });
      expect(again.json().email_id).toBe(b.email_id);
    });

    it('publishes a claim check: the message names the job, the stored row holds the Email', async () => {
      const peek = `${p.topology.exchanges.analysis}.peek-${randomUUID().slice(0, 8)}`;
      await p.broker.assertQueue(peek, { type: 'classic', exclusive: true, autoDelete: true });
      await p.broker.bindQueue(
        peek,
        p.topology.exchanges.analysis,
        p.topology.routingKeys.analysisRequested,
      );
      const bodies: Record<string, unknown>[] = [];
      const consumer = await p.broker.consume(
        peek,
        async (d) => {
          bodies.push(d.body as Record<string, unknown>);
          await d.ack();
        },
        { prefetch: 10 },
      );
      try {
        const r = await app.inject({
          method: 'POST',
          url: '/api/v1/analyze',
          headers: bearer(tok.analyst!),
          payload: { email: sampleEmail({ subject: 'claim check' }), workflow_id: 'quick' },
        });
        expect(r.statusCode).toBe(200);
        const b = r.json();
        const until = Date.now() + 10_000;
        while (!bodies.some((x) => x.job_id === b.job_id) && Date.now() < until)
          await new Promise((res) => setTimeout(res, 20));
        const msg = bodies.find((x) => x.job_id === b.job_id);
        expect(msg).toEqual({
          job_id: b.job_id,
          email_id: b.email_id,
          workflow_id: 'quick',
          submitted_at: expect.any(String),
        });
        const row = await p.sql.query<{ email: string }>(
          'SELECT email FROM jobs WHERE job_id = $1',
          [b.job_id],
        );
        expect(Email.parse(JSON.parse(row.rows[0]?.email as string))).toEqual(
          Email.parse(sampleEmail({ subject: 'claim check' })),
        );
      } finally {
        await consumer.cancel();
        await p.broker.deleteQueue(peek).catch(() => undefined);
      }
    });

    it('concurrent submissions (stored by one batched insert) each get their own job', async () => {
      const before = await p.broker.queueDepth(p.topology.queues.analysisRequests);
      const rs = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          app.inject({
            method: 'POST',
            url: '/api/v1/analyze',
            headers: bearer(tok.analyst!),
            payload: { email: sampleEmail({ subject: `batch ${i}` }) },
          }),
        ),
      );
      const ids = new Set<string>();
      for (const [i, r] of rs.entries()) {
        expect(r.statusCode, r.body).toBe(200);
        const b = r.json();
        ids.add(b.job_id);
        const row = await p.sql.query<{ email: string; submitted_by: string }>(
          'SELECT email, submitted_by FROM jobs WHERE job_id = $1',
          [b.job_id],
        );
        expect(JSON.parse(row.rows[0]?.email as string).headers.subject).toBe(`batch ${i}`);
        expect(row.rows[0]?.submitted_by).toBe('analyst');
      }
      expect(ids.size).toBe(12);
      // every job is named by a confirmed message; the jobs of one batch share one (ADR 008)
      const depth = await p.broker.queueDepth(p.topology.queues.analysisRequests);
      expect(depth).toBeGreaterThan(before);
      expect(depth).toBeLessThan(before + 12);
      const named = new Set<string>();
      const c = await p.broker.consume(
        p.topology.queues.analysisRequests,
        async (d) => {
          for (const j of batchJobs(d.body) ?? [d.body])
            named.add((j as { job_id: string }).job_id);
          await d.ack();
        },
        { prefetch: 64 },
      );
      await waitFor(() => [...ids].every((id) => named.has(id)));
      await c.cancel();
    });

    it('answers 422 with JSON pointers for an invalid Email and an unknown workflow', async () => {
      const email = sampleEmail() as any;
      email.headers.sender = 'not-an-address';
      email.headers.recipients = [];
      delete email.body_text;
      const r = await app.inject({
        method: 'POST',
        url: '/api/v1/analyze',
        headers: bearer(tok.analyst!),
        payload: { email },
      });
      const b = expectProblem(r, 422, 'TRAWL_ERR_VALIDATION');
      expect(b.errors.map((e: { path: string }) => e.path)).toEqual(
        expect.arrayContaining([
          '/email/headers/sender',
          '/email/headers/recipients',
          '/email/body_text',
        ]),
      );
      const wf = await app.inject({
        method: 'POST',
        url: '/api/v1/analyze',
        headers: bearer(tok.analyst!),
        payload: { email: sampleEmail(), workflow_id: 'nope' },
      });
      expect(expectProblem(wf, 422).errors).toEqual([
        { path: '/workflow_id', message: 'unknown workflow nope' },
      ]);
      const notJson = await app.inject({
        method: 'POST',
        url: '/api/v1/analyze',
        headers: { ...bearer(tok.analyst!), 'content-type': 'application/json' },
        payload: '{"email": ',
      });
      expectProblem(notJson, 400, 'TRAWL_ERR_GATEWAY_BAD_REQUEST');
    });

    it('parses and queues a raw RFC 822 message; 422 when it cannot become an Email', async () => {
      const r = await app.inject({
        method: 'POST',
        url: '/api/v1/analyze/raw?workflow_id=quick',
        headers: { ...bearer(tok.analyst!), 'content-type': 'message/rfc822' },
        payload: RAW_MESSAGE,
      });
      expect(r.statusCode, r.body).toBe(200);
      const job = await p.store.jobs.get(r.json().job_id);
      expect(job?.workflow).toBe('quick');
      // no sender anywhere: it cannot become an Email (no recipient is no longer a refusal, issue 16)
      const noSender = RAW_MESSAGE.replace(/^From: [^\r\n]*\r\n/m, '');
      const bad = await app.inject({
        method: 'POST',
        url: '/api/v1/analyze/raw',
        headers: { ...bearer(tok.analyst!), 'content-type': 'message/rfc822' },
        payload: noSender,
      });
      const b = expectProblem(bad, 422);
      expect(JSON.stringify(b.errors)).toContain('sender');
      const wrongType = await app.inject({
        method: 'POST',
        url: '/api/v1/analyze/raw',
        headers: { ...bearer(tok.analyst!), 'content-type': 'image/png' },
        payload: 'x',
      });
      expectProblem(wrongType, 415);
    });

    it('keeps the origin of raw mail sent by a Trawl service (verdicts go back to the mailbox); ignores it from users', async () => {
      const originOf = async (jobId: string) =>
        (
          await p.store.sql.query<{ origin: unknown }>(
            'SELECT origin FROM jobs WHERE job_id = $1',
            [jobId],
          )
        ).rows[0]?.origin;
      const origin = { 'x-trawl-retriever': 'imap', 'x-trawl-message-id': '42:7' };
      const bySvc = await app.inject({
        method: 'POST',
        url: '/api/v1/analyze/raw',
        headers: {
          'x-internal-api-key': cred('retriever', 'imap'),
          'content-type': 'message/rfc822',
          ...origin,
        },
        payload: RAW_MESSAGE,
      });
      expect(bySvc.statusCode, bySvc.body).toBe(200);
      const stored = await originOf(bySvc.json().job_id);
      expect(typeof stored === 'string' ? JSON.parse(stored) : stored).toEqual({
        retriever: 'imap',
        message_id: '42:7',
      });
      const byUser = await app.inject({
        method: 'POST',
        url: '/api/v1/analyze/raw',
        headers: { ...bearer(tok.analyst!), 'content-type': 'message/rfc822', ...origin },
        payload: RAW_MESSAGE,
      });
      expect(byUser.statusCode, byUser.body).toBe(200);
      expect(await originOf(byUser.json().job_id)).toBeNull();
    });

    it('takes the recipient of a Bcc copy from X-Trawl-Envelope-To sent by a Trawl service; not from users', async () => {
      const bcc = [
        'From: Sender <sender@example.test>',
        'Subject: blind copy',
        'Date: Wed, 01 May 2024 10:00:00 +0000',
        '',
        'A blind copy.',
        '',
      ].join('\r\n');
      const envelope = { 'x-trawl-envelope-to': 'reports@example.org' };
      const bySvc = await app.inject({
        method: 'POST',
        url: '/api/v1/analyze/raw',
        headers: {
          'x-internal-api-key': cred('retriever', 'imap'),
          'content-type': 'message/rfc822',
          ...envelope,
        },
        payload: bcc,
      });
      expect(bySvc.statusCode, bySvc.body).toBe(200);
      const { rows } = await p.store.sql.query<{ to: string }>(
        `SELECT (email::jsonb)->'headers'->'recipients'->>0 AS to FROM jobs WHERE job_id = $1`,
        [bySvc.json().job_id],
      );
      expect(rows[0]?.to).toBe('reports@example.org');
      // a user's header is ignored: the Bcc copy is analysed with the undisclosed placeholder
      // (issue 16: it was a 422)
      const byUser = await app.inject({
        method: 'POST',
        url: '/api/v1/analyze/raw',
        headers: { ...bearer(tok.analyst!), 'content-type': 'message/rfc822', ...envelope },
        payload: bcc,
      });
      expect(byUser.statusCode, byUser.body).toBe(200);
      const user = await p.store.sql.query<{ to: string }>(
        `SELECT (email::jsonb)->'headers'->'recipients'->>0 AS to FROM jobs WHERE job_id = $1`,
        [byUser.json().job_id],
      );
      expect(user.rows[0]?.to).toBe('undisclosed-recipients@undisclosed.invalid');
    });

    it('reads a job from the cache first, then the database; 404 for unknown and non-UUID ids', async () => {
      const r = await app.inject({
        method: 'POST',
        url: '/api/v1/analyze',
        headers: bearer(tok.analyst!),
        payload: { email: sampleEmail({ subject: 'cached' }) },
      });
      const { job_id, email_id } = r.json();
      const fromDb = await app.inject({
        method: 'GET',
        url: `/api/v1/analyze/${job_id}`,
        headers: bearer(tok.viewer!),
      });
      expect(fromDb.json()).toMatchObject({ job_id, email_id, status: 'queued' });
      const completed = {
        job_id,
        email_id,
        status: 'completed',
        workflow: 'default',
        created_at: new Date().toISOString(),
        result: {
          is_phishing: true,
          threat_level: 'high',
          confidence: 0.9,
          summary: 's',
          recommended_action: 'quarantine',
          indicators: [],
        },
      };
      await p.cache.set(`job:${job_id}`, JSON.stringify(completed), 60);
      const fromCache = await app.inject({
        method: 'GET',
        url: `/api/v1/analyze/${job_id}`,
        headers: bearer(tok.viewer!),
      });
      expect(fromCache.json()).toMatchObject({ status: 'completed', result: { confidence: 0.9 } });
      expectProblem(
        await app.inject({
          method: 'GET',
          url: `/api/v1/analyze/${randomUUID()}`,
          headers: bearer(tok.viewer!),
        }),
        404,
        'TRAWL_ERR_NOT_FOUND',
      );
      expectProblem(
        await app.inject({
          method: 'GET',
          url: '/api/v1/analyze/not-a-uuid',
          headers: bearer(tok.viewer!),
        }),
        404,
      );
    });

    it('reads a finished job whose cached copy left its evidence in the store from the store', async () => {
      const r = await app.inject({
        method: 'POST',
        url: '/api/v1/analyze',
        headers: bearer(tok.analyst!),
        payload: { email: sampleEmail({ subject: 'evidence once' }) },
      });
      const { job_id } = r.json();
      const verdict = {
        is_phishing: true,
        threat_level: 'high' as const,
        confidence: 0.9,
        summary: 's',
        recommended_action: 'quarantine' as const,
        indicators: [],
      };
      const evidence = buildEvidence(Email.parse(sampleEmail({ subject: 'evidence once' })));
      const finished = await p.store.jobs.finish({
        job_id,
        outcome: {
          status: 'completed',
          result: { ...verdict, evidence },
          trace: { workflow_id: 'default', duration_ms: 1, stages: [] },
        },
      });
      expect(finished?.job.result?.evidence).toEqual(evidence);
      // what the orchestrator caches: the job without its evidence, saying where it is
      const { evidence: _e, ...copy } = finished?.job.result ?? {};
      await p.cache.set(
        `job:${job_id}`,
        JSON.stringify({ ...finished?.job, result: copy, evidence_stored: true }),
        60,
      );
      const read = await app.inject({
        method: 'GET',
        url: `/api/v1/analyze/${job_id}`,
        headers: bearer(tok.viewer!),
      });
      expect(read.statusCode).toBe(200);
      expect(read.json().result.evidence).toEqual(JSON.parse(JSON.stringify(evidence)));
    });

    it('lists jobs newest first with a cursor and a status filter', async () => {
      const page1 = await app.inject({
        method: 'GET',
        url: '/api/v1/analyze?limit=2',
        headers: bearer(tok.viewer!),
      });
      expect(page1.statusCode).toBe(200);
      const b1 = page1.json();
      expect(b1.items).toHaveLength(2);
      expect(b1.next_cursor).toEqual(expect.any(String));
      const page2 = await app.inject({
        method: 'GET',
        url: `/api/v1/analyze?limit=2&cursor=${encodeURIComponent(b1.next_cursor)}`,
        headers: bearer(tok.viewer!),
      });
      const ids2 = page2.json().items.map((j: { job_id: string }) => j.job_id);
      expect(
        ids2.some((id: string) => b1.items.some((j: { job_id: string }) => j.job_id === id)),
      ).toBe(false);
      const queued = await app.inject({
        method: 'GET',
        url: '/api/v1/analyze?status=queued&limit=200',
        headers: bearer(tok.viewer!),
      });
      expect(queued.json().items.every((j: { status: string }) => j.status === 'queued')).toBe(
        true,
      );
      const bad = await app.inject({
        method: 'GET',
        url: '/api/v1/analyze?limit=500&status=weird',
        headers: bearer(tok.viewer!),
      });
      expect(
        expectProblem(bad, 400, 'TRAWL_ERR_GATEWAY_BAD_QUERY')
          .errors.map((e: { path: string }) => e.path)
          .sort(),
      ).toEqual(['/query/limit', '/query/status']);
    });
  });

  describe('configuration', () => {
    it('serves the configuration summary and one analyzer entry', async () => {
      const c = await app.inject({
        method: 'GET',
        url: '/api/v1/config',
        headers: bearer(tok.viewer!),
      });
      expect(c.json()).toMatchObject({
        version: gw.configState.current().files.version,
        analyzer: { timeout_ms: 5000, min_confidence: 0.1 },
        workflow: { default_workflow_id: 'default', max_retries: 2 },
      });
      const a = await app.inject({
        method: 'GET',
        url: '/api/v1/config/analyzers/headers',
        headers: { 'x-internal-api-key': cred('plugin', 'headers') },
      });
      expect(a.json()).toMatchObject({
        id: 'headers',
        enabled: true,
        url: 'http://127.0.0.1:9/headers',
        settings: { strict: true, phishing_score_threshold: 0.6 },
        version: expect.any(String),
      });
      expectProblem(
        await app.inject({
          method: 'GET',
          url: '/api/v1/config/analyzers/nope',
          headers: bearer(tok.admin!),
        }),
        404,
      );
    });
  });

  describe('workflows (no broker)', () => {
    it('lists, gets, validates and dry-runs workflows', async () => {
      const list = await app.inject({
        method: 'GET',
        url: '/api/v1/workflows',
        headers: bearer(tok.viewer!),
      });
      expect(list.json().items.map((w: { id: string }) => w.id)).toEqual(['default', 'quick']);
      expectProblem(
        await app.inject({
          method: 'GET',
          url: '/api/v1/workflows/nope',
          headers: bearer(tok.viewer!),
        }),
        404,
      );
      const ok = await app.inject({
        method: 'POST',
        url: '/api/v1/workflows/validate',
        headers: bearer(tok.analyst!),
        payload: { id: 'w', name: 'W', stages: [{ name: 'a', analyzers: [{ id: 'urls' }] }] },
      });
      expect(ok.json()).toEqual({ valid: true, problems: [] });
      const bad = await app.inject({
        method: 'POST',
        url: '/api/v1/workflows/validate',
        headers: bearer(tok.analyst!),
        payload: {
          id: 'w',
          name: 'W',
          stages: [
            { name: 'a', depends_on: ['b'], analyzers: [{ id: 'ghost' }] },
            {
              name: 'b',
              depends_on: ['a'],
              type: 'conditional',
              condition: 'stages.a.result.confidence >=',
              analyzers: [{ id: 'urls' }],
            },
          ],
        },
      });
      const vb = bad.json();
      expect(vb.valid).toBe(false);
      expect(vb.problems.length).toBeGreaterThanOrEqual(2);
      const run = await app.inject({
        method: 'POST',
        url: '/api/v1/workflows/default/dry-run',
        headers: bearer(tok.analyst!),
        payload: sampleEmail(),
      });
      expect(run.statusCode, run.body).toBe(200);
      const rb = run.json();
      expect(rb).toMatchObject({
        workflow: 'default',
        status: 'completed',
        result: { is_phishing: true },
      });
      expect(rb.trace.stages.map((s: { name: string }) => s.name)).toEqual(['triage', 'deep']);
      expectProblem(
        await app.inject({
          method: 'POST',
          url: '/api/v1/workflows/default/dry-run',
          headers: bearer(tok.analyst!),
          payload: { headers: {} },
        }),
        422,
      );
      expectProblem(
        await app.inject({
          method: 'POST',
          url: '/api/v1/workflows/nope/dry-run',
          headers: bearer(tok.analyst!),
          payload: sampleEmail(),
        }),
        404,
      );
    });
  });

  describe('users and audit', () => {
    it('lets an admin create, change and remove users, and records it in the audit log', async () => {
      const h = bearer(tok.admin!);
      const created = await app.inject({
        method: 'POST',
        url: '/api/v1/users',
        headers: h,
        payload: { username: 'carol', password: PASSWORD, roles: ['analyst'] },
      });
      expect(created.statusCode).toBe(201);
      expect(created.json()).not.toHaveProperty('password_hash');
      expect(
        (
          await app.inject({
            method: 'POST',
            url: '/api/v1/users',
            headers: h,
            payload: { username: 'carol', password: PASSWORD },
          })
        ).statusCode,
      ).toBe(409);
      expectProblem(
        await app.inject({
          method: 'POST',
          url: '/api/v1/users',
          headers: h,
          payload: { username: 'dave', password: 'short' },
        }),
        422,
      );
      const patched = await app.inject({
        method: 'PATCH',
        url: '/api/v1/users/carol',
        headers: h,
        payload: { roles: ['viewer'] },
      });
      expect(patched.json().roles).toEqual(['viewer']);
      expectProblem(
        await app.inject({
          method: 'PATCH',
          url: '/api/v1/users/admin',
          headers: h,
          payload: { roles: ['viewer'] },
        }),
        409,
        'TRAWL_ERR_USER_LAST_ADMIN',
      );
      expect(
        (await app.inject({ method: 'DELETE', url: '/api/v1/users/carol', headers: h })).statusCode,
      ).toBe(204);
      expectProblem(
        await app.inject({ method: 'GET', url: '/api/v1/users/carol', headers: h }),
        404,
      );
      let actions: string[] = [];
      await waitFor(async () => {
        const audit = await app.inject({
          method: 'GET',
          url: '/api/v1/audit?limit=200',
          headers: h,
        });
        actions = audit
          .json()
          .items.map((e: { action: string; outcome: string }) => `${e.action}:${e.outcome}`);
        return actions.includes('auth.login:failure');
      }, 5_000);
      expect(actions).toEqual(
        expect.arrayContaining([
          'user.create:success',
          'user.update:success',
          'user.delete:success',
          'auth.login:success',
          'auth.login:failure',
          'auth.refresh:success',
        ]),
      );
      const paged = await app.inject({ method: 'GET', url: '/api/v1/audit?limit=1', headers: h });
      expect(paged.json().next_cursor).toEqual(expect.any(String));
    });
  });

  describe('health, metrics, docs, request ids, problems', () => {
    it('GET /health is public and reports the feature flags', async () => {
      const r = await app.inject({ method: 'GET', url: '/health' });
      expect(r.json()).toEqual({
        status: 'ok',
        service: 'api-gateway',
        version: '0.1.0-test',
        features: {
          configuration_api: true,
          database_config: false,
          oauth: true,
          rate_limiting: false,
          audit_logging: true,
        },
      });
    });

    it('GET /api/v1/system/health checks every dependency and plugin', async () => {
      const r = await app.inject({
        method: 'GET',
        url: '/api/v1/system/health',
        headers: bearer(tok.viewer!),
      });
      expect(r.statusCode, r.body).toBe(200);
      const b = r.json();
      expect(b.components.database.status).toBe('ok');
      expect(b.components.broker.status).toBe('ok');
      expect(b.components.cache.status).toBe('ok');
      expect(Object.keys(b.plugins).sort()).toEqual(['headers', 'urls']);
    });

    it('echoes X-Request-Id, or makes one, in answers and problem bodies', async () => {
      const r = await app.inject({
        method: 'GET',
        url: '/api/v1/nothing-here',
        headers: { 'x-request-id': 'abc-123' },
      });
      expect(r.headers['x-request-id']).toBe('abc-123');
      expect(expectProblem(r, 404).request_id).toBe('abc-123');
      const g = await app.inject({ method: 'GET', url: '/health' });
      expect(g.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('serves /metrics, /openapi.json and /docs', async () => {
      const m = await app.inject({ method: 'GET', url: '/metrics' });
      expect(m.body).toContain('trawl_http_requests_total');
      expect(m.body).toContain('trawl_http_request_duration_seconds');
      expect(m.body).toMatch(/trawl_jobs_submitted_total\{[^}]*workflow="default"/);
      const o = await app.inject({ method: 'GET', url: '/openapi.json' });
      const doc = o.json();
      expect(doc.openapi).toBe('3.1.0');
      expect(doc.paths['/api/v1/analyze'].post).toBeDefined();
      expect(doc.components.schemas.Email.properties.headers).toBeDefined();
      const d = await app.inject({ method: 'GET', url: '/docs' });
      expect(d.headers['content-type']).toContain('text/html');
      const asset = await app.inject({ method: 'GET', url: '/docs/static/swagger-ui-bundle.js' });
      expect(asset.statusCode).toBe(200);
    });
  });

  describe('configuration reload', () => {
    it('keeps the version when nothing changed, and reports what changed otherwise', async () => {
      const h = bearer(tok.admin!);
      const v0 = gw.configState.current().files.version;
      const same = await app.inject({ method: 'POST', url: '/api/v1/config/reload', headers: h });
      expect(same.json()).toEqual({
        old_version: v0,
        new_version: v0,
        changed: { platform: false, workflows: false, analyzers: [] },
      });
      // reformatting / comments only: same content, same version
      writeFileSync(
        gw.cfg.configFile,
        `# a comment\n${readFileSync(gw.cfg.configFile, 'utf8')}\n\n`,
      );
      expect(
        (await app.inject({ method: 'POST', url: '/api/v1/config/reload', headers: h })).json()
          .new_version,
      ).toBe(v0);
    });

    it('ten concurrent reloads of a changed file on two replicas: one version change, consistent answers', async () => {
      const second = await startGateway(p, { cfg: gw.cfg });
      try {
        const adminToken = (await login(second.app, 'admin')).access_token;
        const v0 = gw.configState.current().files.version;
        writeFileSync(
          gw.cfg.configFile,
          readFileSync(gw.cfg.configFile, 'utf8').replace(
            'phishing_score_threshold: 0.6',
            'phishing_score_threshold: 0.7',
          ),
        );
        const answers = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 === 0 ? app : second.app).inject({
              method: 'POST',
              url: '/api/v1/config/reload',
              headers: bearer(i % 2 === 0 ? tok.admin! : adminToken),
            }),
          ),
        );
        const bodies = answers.map((a) => a.json());
        expect(answers.every((a) => a.statusCode === 200)).toBe(true);
        const changes = bodies.filter((b) => b.old_version !== b.new_version);
        expect(changes).toHaveLength(1);
        expect(changes[0]).toMatchObject({
          old_version: v0,
          changed: { platform: false, workflows: false, analyzers: ['headers'] },
        });
        const v1 = changes[0].new_version;
        expect(new Set(bodies.map((b) => b.new_version))).toEqual(new Set([v1]));
        expect(gw.configState.current().files.version).toBe(v1);
        expect(second.configState.current().files.version).toBe(v1);
        expect((await p.store.configVersions.latest())?.version).toBe(v1);
      } finally {
        await second.close();
      }
    });

    it('an invalid file answers 400 listing every problem and the previous configuration stays served', async () => {
      const h = bearer(tok.admin!);
      const before = (
        await app.inject({ method: 'GET', url: '/api/v1/config', headers: h })
      ).json();
      const good = readFileSync(gw.cfg.workflowsFile, 'utf8');
      writeFileSync(gw.cfg.configFile, 'version: "1"\nanalyzer: [unclosed\n');
      writeFileSync(
        gw.cfg.workflowsFile,
        good.replace('id: urls\n            weight: 0.5', 'id: urls\n            weight: 7'),
      );
      const r = await app.inject({ method: 'POST', url: '/api/v1/config/reload', headers: h });
      const b = expectProblem(r, 400, 'TRAWL_ERR_CONFIG_INVALID');
      expect(b.errors.length).toBeGreaterThanOrEqual(2);
      expect(JSON.stringify(b.errors)).toContain('service.yaml');
      expect(JSON.stringify(b.errors)).toContain('workflows.yaml');
      const after = await app.inject({ method: 'GET', url: '/api/v1/config', headers: h });
      expect(after.json()).toEqual(before);
      const audit = (
        await app.inject({
          method: 'GET',
          url: '/api/v1/audit?action=config.reload&limit=200',
          headers: h,
        })
      ).json();
      expect(audit.items.some((e: { outcome: string }) => e.outcome === 'failure')).toBe(true);
      writeFileSync(gw.cfg.workflowsFile, good);
    });
  });
});
