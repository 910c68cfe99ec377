/**
 * Issue 16, the message view and campaigns, end to end on the real servers: the gateway
 * (PostgreSQL, Redis, RabbitMQ) takes raw messages, an orchestrator on the same servers runs them
 * with in-process analyzers and groups the suspicious ones; the API shows the campaign, its members
 * and their recipients, and the message of each job (sanitized HTML, rebuilt raw download, 410 once
 * the body is purged).
 */
import { createHash, randomUUID } from 'node:crypto';
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

const LURE_TEXT = (name: string, link: string) => `Dear ${name},
We detected unusual sign-in activity on your mailbox and have temporarily suspended incoming
messages. To restore full access you must confirm your account details within 24 hours, otherwise
your mailbox will be permanently deactivated and all stored messages will be deleted from our
servers. Use the secure link ${link} to verify your identity and keep your account active.
Thank you for your prompt attention to this matter.
IT Service Desk`;

const HOSTILE_HTML = (link: string) =>
  `<html><head><base href="https://evil.example/"><meta http-equiv="refresh" content="0;url=${link}">` +
  `<style>@import url(https://evil.example/s.css);</style></head><body onload="steal()">` +
  `<p>Your mailbox is suspended.</p><img src="https://tracker.example/p.gif" srcset="https://tracker.example/2x.gif 2x">` +
  `<a href="${link}" onclick="go()">Verify now</a><script>document.location="${link}"</script>` +
  `<svg><script>alert(1)</script></svg><form action="${link}"><input type="password"></form></body></html>`;

const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');

function rawMessage(o: {
  from: string;
  to: string;
  subject: string;
  text: string;
  html?: string;
  pdf?: boolean;
}): string {
  const id = randomUUID();
  const head = [
    `From: "IT Service Desk" <${o.from}>`,
    `To: ${o.to}`,
    `Subject: ${o.subject}`,
    'Date: Tue, 03 Nov 2026 10:00:00 +0000',
    `Message-ID: <${id}@sender.example>`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b1"',
    '',
    '--b1',
    'Content-Type: multipart/alternative; boundary="b2"',
    '',
    '--b2',
    'Content-Type: text/plain; charset=utf-8',
    '',
    o.text,
  ];
  if (o.html) head.push('--b2', 'Content-Type: text/html; charset=utf-8', '', o.html);
  head.push('--b2--');
  if (o.pdf) {
    head.push(
      '--b1',
      'Content-Type: application/pdf; name="notice.pdf"',
      'Content-Disposition: attachment; filename="notice.pdf"',
      'Content-Transfer-Encoding: base64',
      '',
      PDF.toString('base64'),
    );
  }
  head.push('--b1--', '');
  return head.join('\r\n');
}

/** Phishing when the text asks to verify an identity or to pay; clean otherwise. */
function analyzer(e: Email): AnalyzerAnswerInput {
  const t = (e.body_text ?? '').toLowerCase();
  const phishing = t.includes('verify your identity') || t.includes('wire the payment');
  return phishing
    ? {
        is_phishing: true,
        confidence: 0.95,
        indicators: [{ type: 'credential_request', value: 'asks to verify', confidence: 0.8 }],
      }
    : { is_phishing: false, confidence: 0.9, indicators: [] };
}

describe('message view and campaigns on PostgreSQL, Redis and RabbitMQ', () => {
  let p: RealPlatform;
  let gw: Gateway;
  let orch: Orchestrator;
  let analyst = '';
  let viewer = '';
  const jobs: Record<string, string> = {};

  async function submit(name: string, o: Parameters<typeof rawMessage>[0]): Promise<void> {
    const r = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/analyze/raw',
      headers: { ...bearer(analyst), 'content-type': 'message/rfc822' },
      payload: rawMessage(o),
    });
    expect(r.statusCode).toBe(200);
    const id = r.json().job_id as string;
    jobs[name] = id;
    // one at a time: each is grouped before the next arrives (the order the assertions tell)
    await settled(id);
  }

  /**
   * Waits for a job to be completed and grouped. The job reads `completed` before its handler has
   * settled it and handed it to campaign grouping (campaigns.recordLater comes last): the handler's
   * end (no job in flight) comes first, then the grouping queue's.
   */
  async function settled(id: string): Promise<void> {
    await waitFor(
      async () => (await get(id)).status === 'completed' && orch.inFlight() === 0,
      20_000,
    );
    await orch.campaignsSettled();
  }

  async function api(url: string, token = viewer) {
    return gw.app.inject({ method: 'GET', url, headers: bearer(token) });
  }

  async function get(id: string): Promise<Job> {
    return (await api(`/api/v1/analyze/${id}`)).json();
  }

  beforeAll(async () => {
    p = await realPlatform();
    await seedUsers(p.store);
    gw = await startGateway(p);
    analyst = (await login(gw.app, 'analyst')).access_token;
    viewer = (await login(gw.app, 'viewer')).access_token;
    // an endpoint subscribed to campaign.updated: the events are stored for it (not delivered here)
    await p.store.webhooks.create({
      id: randomUUID(),
      url: 'http://127.0.0.1:9/hook',
      events: ['campaign.updated'],
      secret: `whsec_${Buffer.from('campaign-test-secret-0123456789').toString('base64')}`,
      description: null,
      enabled: true,
      created_by: null,
    });
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
    // the same lure (link domain and attachment) to two recipients
    await submit('alice', {
      from: 'desk@mailer-one.example',
      to: 'alice@corp.example',
      subject: 'Mailbox suspended',
      text: LURE_TEXT('Alice', 'https://secure-verify.example/a?id=1'),
      html: HOSTILE_HTML('https://secure-verify.example/a?id=1'),
      pdf: true,
    });
    await submit('bob', {
      from: 'support@mailer-two.example',
      to: 'bob@corp.example',
      subject: 'Action required: mailbox',
      text: `Hello Bob, your mailbox needs attention: verify your identity at https://login.secure-verify.example/b now.`,
    });
    // unrelated phishing: another domain, another text
    await submit('unrelated', {
      from: 'ceo@ceo-mail.example',
      to: 'finance@corp.example',
      subject: 'Urgent transfer',
      text: 'Please wire the payment of 48,200 EUR to the new supplier account today, details at https://supplier-pay.example/inv and keep it confidential until the audit is closed.',
    });
    // a variant of the first text: another name and link, nothing else in common
    await submit('variant', {
      from: 'noreply@mailer-three.example',
      to: 'carol@corp.example',
      subject: 'Mailbox notice',
      text: LURE_TEXT('Carol', 'https://account-restore.example/c'),
    });
    // a clean message is never grouped
    await submit('clean', {
      from: 'news@shop.example',
      to: 'dave@corp.example',
      subject: 'Weekly deals',
      text: 'Our weekly deals: https://secure-verify.example/deals are here.',
    });
  });

  afterAll(async () => {
    await orch?.stop(1000);
    await gw?.close();
    await p?.cleanup();
  });

  it('groups two messages with the same lure sent to different recipients, and a near-identical text', async () => {
    const alice = await get(jobs.alice as string);
    const bob = await get(jobs.bob as string);
    const variant = await get(jobs.variant as string);
    expect(alice.campaign).toBeDefined();
    expect(bob.campaign?.id).toBe(alice.campaign?.id);
    expect(variant.campaign?.id).toBe(alice.campaign?.id);
    expect(alice.campaign).toMatchObject({ size: 3, recipients: 3, reporters: 0 });
  });

  it('announces each growth of the campaign as a campaign.updated webhook event', async () => {
    const id = (await get(jobs.alice as string)).campaign?.id;
    const r = await p.sql.query<{ payload: unknown }>(
      `SELECT payload FROM webhook_events WHERE type = 'campaign.updated' ORDER BY created_at`,
    );
    const data = r.rows.map(
      (x) =>
        (typeof x.payload === 'string' ? JSON.parse(x.payload) : x.payload) as {
          data: { campaign: { id: string; size: number }; joined: string[]; created: boolean };
        },
    );
    expect(data.map((d) => [d.data.campaign.id, d.data.campaign.size, d.data.created])).toEqual([
      [id, 2, true],
      [id, 3, false],
    ]);
    expect(data[1]?.data.joined).toEqual([jobs.variant]);
  });

  it('keeps an unrelated message and a clean one apart', async () => {
    expect((await get(jobs.unrelated as string)).campaign).toBeUndefined();
    expect((await get(jobs.clean as string)).campaign).toBeUndefined();
  });

  it('lists the campaign and shows its members with recipients and verdicts', async () => {
    const id = (await get(jobs.alice as string)).campaign?.id as string;
    const list = await api('/api/v1/campaigns?limit=10');
    expect(list.statusCode).toBe(200);
    expect(list.json().items).toEqual([
      expect.objectContaining({
        id,
        size: 3,
        subject: 'Mailbox suspended',
        lures: expect.arrayContaining(['domain', 'text']),
      }),
    ]);
    const one = await api(`/api/v1/campaigns/${id}`);
    expect(one.statusCode).toBe(200);
    const members = one.json().members as { job_id: string; recipients: string[] }[];
    const byJob = Object.fromEntries(members.map((m) => [m.job_id, m]));
    expect(byJob[jobs.alice as string]).toMatchObject({
      recipients: ['alice@corp.example'],
      is_phishing: true,
      sender: 'desk@mailer-one.example',
    });
    expect(byJob[jobs.bob as string]).toMatchObject({
      recipients: ['bob@corp.example'],
      matched: 'domain:secure-verify.example',
    });
    expect(byJob[jobs.variant as string]).toMatchObject({ matched: 'text' });
    // the job search filters by campaign
    const found = await api(`/api/v1/analyze?campaign=${id}`);
    expect(found.statusCode).toBe(200);
    expect(
      found
        .json()
        .items.map((j: Job) => j.job_id)
        .sort(),
    ).toEqual([jobs.alice, jobs.bob, jobs.variant].sort());
    expect((await api(`/api/v1/campaigns/${randomUUID()}`)).statusCode).toBe(404);
    const bad = await api('/api/v1/analyze?campaign=nope');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors[0].path).toBe('/query/campaign');
  });

  it('shows the message: headers, text, inert HTML, attachments with their sha256', async () => {
    const r = await api(`/api/v1/analyze/${jobs.alice}/message`);
    expect(r.statusCode).toBe(200);
    const m = r.json();
    expect(m.headers).toEqual(
      expect.arrayContaining([
        { name: 'subject', value: 'Mailbox suspended' },
        { name: 'to', value: 'alice@corp.example' },
      ]),
    );
    expect(m.text).toContain('Dear Alice');
    const html = (m.html as string).toLowerCase();
    expect(html).toContain('your mailbox is suspended.');
    expect(html).toContain('data-trawl-href="https://secure-verify.example/a?id=1"');
    expect(html).toContain('data-trawl-src="https://tracker.example/p.gif"');
    for (const bad of [
      '<script',
      'onload',
      'onclick',
      '<base',
      '<meta',
      '@import',
      'srcset',
      '<form',
      '<svg',
      ' href=',
      ' src=',
    ]) {
      expect(html).not.toContain(bad);
    }
    expect(m.attachments).toEqual([
      {
        name: 'notice.pdf',
        type: 'application/pdf',
        size: PDF.length,
        sha256: createHash('sha256').update(PDF).digest('hex'),
      },
    ]);
  });

  it('downloads the raw message for analysts and admins; a viewer gets 403', async () => {
    const r = await api(`/api/v1/analyze/${jobs.alice}/message/raw`, analyst);
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toContain('message/rfc822');
    expect(r.headers['content-disposition']).toBe(`attachment; filename="${jobs.alice}.eml"`);
    expect(r.body).toContain('Subject: Mailbox suspended');
    expect(r.body).toContain('filename="notice.pdf"');
    // it parses back into the same message
    const again = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/analyze/raw',
      headers: { ...bearer(analyst), 'content-type': 'message/rfc822' },
      payload: r.rawPayload,
    });
    expect(again.statusCode).toBe(200);
    const viewerAnswer = await api(`/api/v1/analyze/${jobs.alice}/message/raw`, viewer);
    expect(viewerAnswer.statusCode).toBe(403);
    expect((await api(`/api/v1/analyze/${randomUUID()}/message`)).statusCode).toBe(404);
  });

  it('answers 410 once the body is purged, while the verdict and evidence stay readable', async () => {
    await p.sql.query('UPDATE jobs SET body_purged_at = now() WHERE job_id = $1', [jobs.bob]);
    for (const [url, token] of [
      [`/api/v1/analyze/${jobs.bob}/message`, viewer],
      [`/api/v1/analyze/${jobs.bob}/message/raw`, analyst],
    ] as const) {
      const r = await api(url, token);
      expect(r.statusCode).toBe(410);
      expect(r.headers['content-type']).toContain('application/problem+json');
      expect(r.json().code).toBe('TRAWL_ERR_MESSAGE_PURGED');
    }
    const job = await get(jobs.bob as string);
    expect(job.result?.is_phishing).toBe(true);
    expect(job.result?.evidence?.message.to).toEqual(['bob@corp.example']);
  });
  it('makes one campaign of many reports of one original, even a clean-looking one, with its reporters', async () => {
    // the original: nothing the test analyzer calls phishing
    const original = rawMessage({
      from: 'events@venue-tickets.example',
      to: 'staff@corp.example',
      subject: 'Your tickets for Friday',
      text: 'Your tickets for Friday are ready: collect them at https://tickets-collect.example/t?id=77 before the doors open at eight.',
    });
    const reportOf = (reporter: string) =>
      [
        `From: ${reporter}`,
        'To: phishing-reports@corp.example',
        'Subject: Fwd: Your tickets for Friday',
        'Date: Tue, 03 Nov 2026 11:00:00 +0000',
        `Message-ID: <${randomUUID()}@corp.example>`,
        'MIME-Version: 1.0',
        'Content-Type: multipart/mixed; boundary="r1"',
        '',
        '--r1',
        'Content-Type: text/plain; charset=utf-8',
        '',
        'This looks odd to me.',
        '--r1',
        'Content-Type: message/rfc822',
        'Content-Disposition: attachment; filename="original.eml"',
        '',
        original,
        '--r1--',
        '',
      ].join('\r\n');
    const ids: string[] = [];
    for (const reporter of ['erin@corp.example', 'frank@corp.example']) {
      const r = await gw.app.inject({
        method: 'POST',
        url: '/api/v1/analyze/raw?report=true',
        headers: { ...bearer(analyst), 'content-type': 'message/rfc822' },
        payload: reportOf(reporter),
      });
      expect(r.statusCode).toBe(200);
      const id = r.json().job_id as string;
      ids.push(id);
      await settled(id);
    }
    const [a, b] = await Promise.all(ids.map((id) => get(id)));
    expect(a?.result?.is_phishing).toBe(false);
    expect(a?.campaign).toBeDefined();
    expect(b?.campaign?.id).toBe(a?.campaign?.id);
    expect(b?.campaign).toMatchObject({ size: 2, reporters: 2 });
  });
});
