/**
 * Issue 15, retention, end to end on the real servers: the gateway (PostgreSQL, Redis, RabbitMQ)
 * takes raw messages, an orchestrator runs them; then, with rows aged in SQL, the orchestrator's
 * retention purge removes old message bodies (the job's verdict and evidence still read through
 * the gateway), deletes jobs past retention (404, their search terms and cached status gone),
 * prunes the sender history and expired refresh tokens, and touches nothing recent. The reaper's
 * tick starts the purge by itself.
 */

import { createHash } from 'node:crypto';
import {
  buildOrchestrator,
  createConfigSource,
  type Orchestrator,
} from '@trawl/analyzer-orchestrator';
import type { AnalyzerAnswerInput, Email, Job } from '@trawl/contracts';
import { createRetention, type Retention } from '@trawl/investigation';
import { createRetentionRepository } from '@trawl/platform';
import { waitFor } from '@trawl/platform/testing';
import { createInProcessInvoker } from '@trawl/plugin-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silent, snapshot, wf } from '../../services/analyzer-orchestrator/test/unit/helpers.ts';
import {
  bearer,
  type Gateway,
  login,
  type RealPlatform,
  seedUsers,
  startGateway,
} from '../../services/api-gateway/test/helpers/harness.ts';
import { realPlatform } from '../../services/api-gateway/test/helpers/real-platform.ts';

const DAY_MS = 86_400_000;
const POLICY = { mailDays: 30, jobDays: 365, senderHistoryDays: 365, refreshTokenDays: 30 };
const SECRET_LINE = 'Your one-time code is 731904: verify at https://evil-login.example/verify';

function rawMessage(o: { from: string; subject: string; id: string }): string {
  return [
    'Received: from mail.sender-host.example (mail.sender-host.example [203.0.113.9])',
    '\tby mx.corp.example (Postfix) with ESMTPS id 4AB; Tue, 03 Nov 2026 10:00:01 +0000',
    `From: "Bank Security" <${o.from}>`,
    'To: alice@corp.example',
    `Subject: ${o.subject}`,
    'Date: Tue, 03 Nov 2026 10:00:00 +0000',
    `Message-ID: <${o.id}@sender-host.example>`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain; charset=utf-8',
    '',
    SECRET_LINE,
    '--b1',
    'Content-Type: application/pdf; name="invoice.pdf"',
    'Content-Disposition: attachment; filename="invoice.pdf"',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from('%PDF-1.4 private invoice').toString('base64'),
    '--b1--',
    '',
  ].join('\r\n');
}

function analyzer(e: Email): AnalyzerAnswerInput {
  const phishing = e.headers.subject.toLowerCase().includes('locked');
  return phishing
    ? {
        is_phishing: true,
        confidence: 0.9,
        indicators: [{ type: 'suspicious_url', value: 'evil-login.example', confidence: 0.8 }],
      }
    : { is_phishing: false, confidence: 0.9, indicators: [] };
}

describe('retention purge on PostgreSQL, Redis and RabbitMQ', () => {
  let p: RealPlatform;
  let gw: Gateway;
  let orch: Orchestrator;
  let retention: Retention;
  let analyst = '';
  let viewer = '';
  const jobs: Record<string, string> = {};
  const before: Record<string, Job> = {};

  const config = () =>
    createConfigSource(
      snapshot('r1', [
        wf({
          id: 'default',
          name: 'Default',
          stages: [{ name: 'only', analyzers: [{ id: 'a' }] }],
        }),
      ]),
    );

  async function submit(name: string, o: Parameters<typeof rawMessage>[0]): Promise<void> {
    const r = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/analyze/raw',
      headers: { ...bearer(analyst), 'content-type': 'message/rfc822' },
      payload: rawMessage(o),
    });
    expect(r.statusCode).toBe(200);
    jobs[name] = r.json().job_id;
  }

  const read = (id: string) =>
    gw.app.inject({ method: 'GET', url: `/api/v1/analyze/${id}`, headers: bearer(viewer) });

  /** Sets a job's (and its search terms') created_at `days` ago. */
  async function age(id: string, days: number): Promise<void> {
    const at = new Date(Date.now() - days * DAY_MS);
    await p.sql.query('UPDATE jobs SET created_at = $2 WHERE job_id = $1', [id, at]);
    await p.sql.query('UPDATE job_terms SET created_at = $2 WHERE job_id = $1', [id, at]);
  }

  const row = async (id: string) =>
    (
      await p.sql.query<{ email: string; body_purged_at: unknown }>(
        'SELECT email, body_purged_at FROM jobs WHERE job_id = $1',
        [id],
      )
    ).rows[0];
  const terms = async (id: string) =>
    Number(
      (
        await p.sql.query<{ n: string | number }>(
          'SELECT count(*) AS n FROM job_terms WHERE job_id = $1',
          [id],
        )
      ).rows[0]?.n,
    );

  beforeAll(async () => {
    p = await realPlatform();
    await seedUsers(p.store);
    gw = await startGateway(p);
    analyst = (await login(gw.app, 'analyst')).access_token;
    viewer = (await login(gw.app, 'viewer')).access_token;
    retention = createRetention({
      repo: createRetentionRepository(p.sql),
      sql: p.sql,
      cache: p.cache,
      policy: POLICY,
      logger: silent,
      options: { batchSize: 2 },
    });
    orch = buildOrchestrator({
      broker: p.broker,
      store: p.store,
      cache: p.cache,
      invoker: createInProcessInvoker({ analyzers: { a: analyzer } }),
      config: config(),
      topology: p.topology,
      logger: silent,
      options: { prefetch: 4, reaperIntervalMs: 0 },
    });
    await orch.start();
    await submit('oldBody', {
      from: 'security@bank-alerts.example',
      subject: 'Account locked',
      id: 'r1',
    });
    await submit('ancient', {
      from: 'old@gone-sender.example',
      subject: 'Account locked',
      id: 'r2',
    });
    await submit('recent', { from: 'news@shop.example', subject: 'Weekly deals', id: 'r3' });
    for (const [name, id] of Object.entries(jobs)) {
      await waitFor(async () => (await read(id)).json().status === 'completed', 20_000);
      before[name] = (await read(id)).json();
    }
    // Campaign grouping runs after a job is settled and adds a `camp` search term with the job's
    // created_at; let it finish before the test ages the jobs, or that term keeps the old date
    // (a job reads completed before its handler hands it to grouping: wait for the handler too).
    await waitFor(() => orch.inFlight() === 0, 20_000);
    await orch.campaignsSettled();
  });

  afterAll(async () => {
    await orch?.stop(1000);
    await retention?.stop();
    await gw?.close();
    await p?.cleanup();
  });

  it('purges old bodies, deletes old jobs, prunes senders and refresh tokens; keeps recent rows', async () => {
    const oldBody = jobs.oldBody as string;
    const ancient = jobs.ancient as string;
    const recent = jobs.recent as string;
    expect((await row(oldBody))?.email).toContain('731904');
    expect(await terms(ancient)).toBeGreaterThan(0);
    // the status cache holds the finished job: a read after deletion would find it there
    expect(await p.cache.get(`job:${ancient}`)).not.toBeNull();

    await age(oldBody, 40);
    await age(ancient, 400);
    await p.sql.query(`UPDATE sender_history SET last_seen = now() - interval '400 days'
                       WHERE address = 'old@gone-sender.example'`);
    const tok = (s: string) => createHash('sha256').update(s).digest('hex');
    const expired = new Date(Date.now() - 60 * DAY_MS);
    await p.store.refreshTokens.store({
      token_hash: tok('expired-60-days'),
      username: 'viewer',
      family_id: 'retention-e2e',
      expires_at: expired,
    });
    const tokensBefore = Number(
      (await p.sql.query<{ n: string }>('SELECT count(*) AS n FROM refresh_tokens')).rows[0]?.n,
    );

    const report = await retention.runOnce();
    expect(report).toEqual({
      bodiesPurged: 1,
      jobsDeleted: 1,
      sendersDeleted: 1,
      refreshTokensDeleted: 1,
    });

    // the purged job: body gone, verdict and evidence read through the gateway as before
    const purged = await row(oldBody);
    expect(purged?.body_purged_at).not.toBeNull();
    expect(purged?.email).not.toContain('731904');
    expect(purged?.email).not.toContain(Buffer.from('%PDF-1.4 private invoice').toString('base64'));
    const r1 = await read(oldBody);
    expect(r1.statusCode).toBe(200);
    const j1 = r1.json() as Job;
    expect(j1.status).toBe('completed');
    expect(j1.result?.is_phishing).toBe(true);
    expect(j1.result?.evidence).toBeDefined();
    expect(j1.result).toEqual(before.oldBody?.result);
    // the job is still found by search
    const found = await gw.app.inject({
      method: 'GET',
      url: '/api/v1/analyze?sender=security@bank-alerts.example',
      headers: bearer(viewer),
    });
    expect(found.json().items.map((j: Job) => j.job_id)).toEqual([oldBody]);

    // the job past retention: gone from the database, its terms and its cached status
    expect((await read(ancient)).statusCode).toBe(404);
    expect(await terms(ancient)).toBe(0);
    expect(await p.cache.get(`job:${ancient}`)).toBeNull();
    expect((await p.store.senders.get('old@gone-sender.example')).sender).toBeNull();

    // recent: untouched
    expect((await row(recent))?.email).toContain('731904');
    expect((await read(recent)).json()).toEqual(before.recent);
    expect((await p.store.senders.get('news@shop.example')).sender).not.toBeNull();
    expect((await p.store.senders.get('security@bank-alerts.example')).sender).not.toBeNull();
    const tokensAfter = Number(
      (await p.sql.query<{ n: string }>('SELECT count(*) AS n FROM refresh_tokens')).rows[0]?.n,
    );
    expect(tokensAfter).toBe(tokensBefore - 1);

    // a second run finds nothing to do
    expect(await retention.runOnce()).toEqual({
      bodiesPurged: 0,
      jobsDeleted: 0,
      sendersDeleted: 0,
      refreshTokensDeleted: 0,
    });
  });

  it("the orchestrator's reaper starts the purge by itself", async () => {
    await submit('late', { from: 'late@bank-alerts.example', subject: 'Account locked', id: 'r4' });
    const late = jobs.late as string;
    await waitFor(async () => (await read(late)).json().status === 'completed', 20_000);
    await age(late, 31);
    const ticking = buildOrchestrator({
      broker: p.broker,
      store: p.store,
      cache: p.cache,
      invoker: createInProcessInvoker({ analyzers: { a: analyzer } }),
      config: config(),
      topology: p.topology,
      logger: silent,
      options: { prefetch: 1, reaperIntervalMs: 50 },
      retention: createRetention({
        repo: createRetentionRepository(p.sql),
        sql: p.sql,
        cache: p.cache,
        policy: POLICY,
        logger: silent,
      }),
    });
    await ticking.start();
    try {
      await waitFor(async () => (await row(late))?.body_purged_at != null, 20_000);
    } finally {
      await ticking.stop(1000);
    }
    expect((await read(late)).json().result?.is_phishing).toBe(true);
  });
});
