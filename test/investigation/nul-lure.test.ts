/**
 * Issue 28, item 1, end to end on the real servers: a message holding U+0000 in every header and
 * link (encoded words, quoted-printable, `%00` in URLs) goes through the gateway (PostgreSQL,
 * Redis, RabbitMQ) and an orchestrator on the same servers. Sent first, ahead of a campaign, it
 * used to make its evidence unreadable as JSON: every later message sharing its lure was never
 * grouped, and the campaign and the console's job page answered 503. Now the job, its message,
 * its campaign and the jobs list read back (200), with U+0000 shown as the text `\u0000` and the
 * link as written; the stored Email is JSON the database reads (the reporter notifier's query).
 */
import { randomUUID } from 'node:crypto';
import {
  buildOrchestrator,
  createConfigSource,
  type Orchestrator,
} from '@trawl/analyzer-orchestrator';
import type { AnalyzerAnswerInput, Email, Job } from '@trawl/contracts';
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

const LURE = 'http://nul-lure.example/auth.php?id=%00x';

/** Every header and link holds U+0000 (as mail carries it: encoded words, QP, `%00`). */
function nulMessage(to: string): string {
  return [
    `From: "Desk=?utf-8?q?=00?=" <desk@nul-sender.example>`,
    `To: ${to}`,
    `Reply-To: =?utf-8?q?r=00?= <reply@nul-sender.example>`,
    'Subject: =?utf-8?q?Password=00_expiry?=',
    'Date: Tue, 03 Nov 2026 10:00:00 +0000',
    `Message-ID: <${randomUUID()}@nul-sender.example>`,
    'X-Mailer: =?utf-8?b?AA==?=',
    'Received: from nul=?utf-8?q?=00?= ([203.0.113.9]) by mx.corp.example',
    'MIME-Version: 1.0',
    'Content-Type: multipart/alternative; boundary="b"',
    '',
    '--b',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    `Your password expires=00 today. Verify your identity at ${LURE} now.`,
    '--b',
    'Content-Type: text/html; charset=utf-8',
    '',
    `<a href="${LURE}">Keep my password=&#0;</a> <a href="http://nul-lure.example/%00/%C0%80">x</a>`,
    '--b--',
    '',
  ].join('\r\n');
}

function analyzer(e: Email): AnalyzerAnswerInput {
  const phishing = (e.body_text ?? '').toLowerCase().includes('verify your identity');
  return phishing
    ? {
        is_phishing: true,
        confidence: 0.95,
        indicators: [
          { type: 'credential_request', value: 'asks\u0000 to verify', confidence: 0.8 },
        ],
      }
    : { is_phishing: false, confidence: 0.9, indicators: [] };
}

describe('a lure holding U+0000 on PostgreSQL, Redis and RabbitMQ', () => {
  let p: RealPlatform;
  let gw: Gateway;
  let orch: Orchestrator;
  let token = '';

  const api = (url: string) => gw.app.inject({ method: 'GET', url, headers: bearer(token) });

  async function submitRaw(raw: string): Promise<string> {
    const r = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/analyze/raw',
      headers: { ...bearer(token), 'content-type': 'message/rfc822' },
      payload: raw,
    });
    expect(r.statusCode, r.body).toBe(200);
    const id = r.json().job_id as string;
    // completed before its handler hands it to campaign grouping: wait for the handler's end too
    await waitFor(
      async () =>
        (await api(`/api/v1/analyze/${id}`)).json().status === 'completed' && orch.inFlight() === 0,
      20_000,
    );
    await orch.campaignsSettled();
    return id;
  }

  beforeAll(async () => {
    p = await realPlatform();
    await seedUsers(p.store);
    gw = await startGateway(p);
    token = (await login(gw.app, 'analyst')).access_token;
    orch = buildOrchestrator({
      broker: p.broker,
      store: p.store,
      cache: p.cache,
      invoker: createInProcessInvoker({ analyzers: { content: analyzer } }),
      config: createConfigSource(
        snapshot('c1', [
          wf({
            id: 'default',
            name: 'Default',
            stages: [{ name: 'triage', analyzers: [{ id: 'content' }] }],
          }),
        ]),
      ),
      topology: p.topology,
      logger: silent,
      options: { prefetch: 4, reaperIntervalMs: 0 },
    });
    await orch.start();
  });

  afterAll(async () => {
    await orch?.stop(1000);
    await gw?.close();
    await p?.cleanup();
  });

  it('is analysed, grouped with the messages sharing its lure, and every view of it reads back', async () => {
    const first = await submitRaw(nulMessage('alice@corp.example'));
    // a JSON submission whose every header holds U+0000 too
    const json = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/analyze',
      headers: bearer(token),
      payload: {
        email: {
          headers: {
            subject: 'Pass\u0000word expiry',
            sender: 'desk@nul-sender.example',
            recipients: ['bob@corp.example'],
            date: '2026-11-03T10:00:00Z',
            raw_headers: { 'x-mailer': 'a\u0000b', received: ['from x\u0000y'] },
          },
          body_text: `Verify your identity at ${LURE}\u0000 today.`,
        },
      },
    });
    expect(json.statusCode, json.body).toBe(200);
    const second = json.json().job_id as string;
    await waitFor(
      async () =>
        (await api(`/api/v1/analyze/${second}`)).json().status === 'completed' &&
        orch.inFlight() === 0,
      20_000,
    );
    await orch.campaignsSettled();
    const third = await submitRaw(nulMessage('carol@corp.example'));

    for (const id of [first, second, third]) {
      const r = await api(`/api/v1/analyze/${id}`);
      expect(r.statusCode, r.body).toBe(200);
      const job = r.json() as Job;
      expect(job.campaign, id).toBeDefined();
      const urls = job.result?.evidence?.urls ?? [];
      expect(urls.some((u) => u.url === LURE)).toBe(true);
      for (const u of urls) expect(u.decoded).not.toContain('\u0000');
      const message = await api(`/api/v1/analyze/${id}/message`);
      expect(message.statusCode, message.body).toBe(200);
    }
    const job = (await api(`/api/v1/analyze/${first}`)).json() as Job;
    expect(job.result?.evidence?.urls.find((u) => u.url === LURE)?.decoded).toBe(
      'http://nul-lure.example/auth.php?id=\\u0000x',
    );
    const campaign = await api(`/api/v1/campaigns/${job.campaign?.id}`);
    expect(campaign.statusCode, campaign.body).toBe(200);
    expect((campaign.json().members as { job_id: string }[]).map((m) => m.job_id).sort()).toEqual(
      [first, second, third].sort(),
    );
    expect((await api('/api/v1/campaigns')).statusCode).toBe(200);
    expect((await api('/api/v1/analyze?limit=10')).statusCode).toBe(200);
    // the reporter notifier reads a job's Email with the database's JSON operators
    const rows = await p.sql.query<{ subject: string | null }>(
      `SELECT (email::jsonb)->'headers'->>'subject' AS subject FROM jobs WHERE job_id = ANY($1)`,
      [[first, second, third]],
    );
    expect(rows.rows.map((r) => r.subject)).toContain('Pass\\u0000word expiry');
  });
});
