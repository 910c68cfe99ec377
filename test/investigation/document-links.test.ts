/**
 * Issue 32, "links wherever they are", end to end on the real servers: the gateway (PostgreSQL,
 * Redis, RabbitMQ) takes a raw refund lure whose links sit in a PDF (inside a compressed object
 * stream), a QR code image, a calendar invitation and a .docx; an orchestrator runs the built-in
 * analyzers in the analysis pool's worker thread, with the threat-intel provider and the intel
 * analyzer in a stage after them and the scorer last (the shape docs/analyzers.md recommends). The job's evidence lists each link with where it was found, the
 * URL techniques judge them, the feed lookup matches the PDF's link, and the search finds the job
 * by a domain that only the PDF names.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildOrchestrator,
  createConfigSource,
  type Orchestrator,
  snapshotFromFiles,
} from '@trawl/analyzer-orchestrator';
import {
  type AnalysisPool,
  builtinPlugins,
  createAnalysisPool,
  createEmbeddedInvoker,
  type EmbeddedInvoker,
} from '@trawl/analyzers';
import type { Job, ServiceConfigFile } from '@trawl/contracts';
import { waitFor } from '@trawl/platform/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docx, ics, pdf, qrPng } from '../../packages/mail/test/document-fixtures.ts';
import { silent, wf } from '../../services/analyzer-orchestrator/test/unit/helpers.ts';
import {
  bearer,
  type Gateway,
  login,
  type RealPlatform,
  seedUsers,
  startGateway,
} from '../../services/api-gateway/test/helpers/harness.ts';
import { realPlatform } from '../../services/api-gateway/test/helpers/real-platform.ts';

const PDF_LINK = 'https://refund-portal.example.net/claim?case=8812';
const PDF_IP_LINK = 'http://203.0.113.50/refund';
const QR_LINK = 'https://bit.ly/3xRfnd';
const ICS_LINK = 'https://meet.calendar-lure.example/j/991';
const DOCX_LINK = 'https://docs.office-lure.example/view';

function part(name: string, type: string, bytes: Buffer): string[] {
  return [
    '--b1',
    `Content-Type: ${type}; name="${name}"`,
    `Content-Disposition: attachment; filename="${name}"`,
    'Content-Transfer-Encoding: base64',
    '',
    (bytes.toString('base64').match(/.{1,76}/g) ?? []).join('\r\n'),
  ];
}

function lure(id: string): string {
  return [
    'From: "Tax Refund Office" <refunds@gov-refund.example>',
    'To: alice@corp.example',
    'Subject: Your refund is ready',
    'Date: Tue, 03 Nov 2026 10:00:00 +0000',
    `Message-ID: <${id}@gov-refund.example>`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Your refund is ready. See the attached documents.',
    ...part('refund.pdf', 'application/pdf', pdf({ compressed: [PDF_LINK], plain: [PDF_IP_LINK] })),
    ...part('scan-me.png', 'image/png', qrPng(QR_LINK)),
    ...part('invite.ics', 'text/calendar', Buffer.from(ics([`URL:${ICS_LINK}`]))),
    ...part(
      'form.docx',
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      docx({ links: [DOCX_LINK] }),
    ),
    '--b1--',
    '',
  ].join('\r\n');
}

describe('links inside attachments, on PostgreSQL, Redis and RabbitMQ', () => {
  let p: RealPlatform;
  let gw: Gateway;
  let orch: Orchestrator;
  let pool: AnalysisPool;
  let invoker: EmbeddedInvoker;
  let analyst = '';
  let dir = '';
  let job: Job | undefined;

  async function submit(raw: string): Promise<string> {
    const r = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/analyze/raw',
      headers: { ...bearer(analyst), 'content-type': 'message/rfc822' },
      payload: raw,
    });
    expect(r.statusCode).toBe(200);
    return r.json().job_id;
  }

  async function completed(id: string): Promise<Job> {
    let j: Job | undefined;
    await waitFor(async () => {
      const r = await gw.app.inject({
        method: 'GET',
        url: `/api/v1/analyze/${id}`,
        headers: bearer(analyst),
      });
      j = r.json();
      return j?.status === 'completed' || j?.status === 'failed';
    }, 60_000);
    return j as Job;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'trawl-doclinks-'));
    const feed = join(dir, 'feed.txt');
    writeFileSync(feed, `# a local phishing feed\n${PDF_LINK}\n`);
    p = await realPlatform();
    await seedUsers(p.store);
    gw = await startGateway(p);
    analyst = (await login(gw.app, 'analyst')).access_token;
    const service: ServiceConfigFile = {
      version: '1',
      platform: { log_level: 'info', debug: false },
      analyzer: { timeout_ms: 20_000, min_confidence: 0 },
      workflow: { default_workflow_id: 'default', max_retries: 3 },
      verdict: { thresholds: { low: 0.3, medium: 0.5, high: 0.7, critical: 0.9 } },
      analyzers: {
        urls: { enabled: true, settings: {} },
        attachments: { enabled: true, settings: {} },
        intel: { enabled: true, settings: {} },
        scorer: { enabled: true, settings: {} },
        'threat-intel': {
          enabled: true,
          settings: { feeds: [{ name: 'local', format: 'url_list', source: feed }] },
        },
      },
      plugins: { analyzers: {}, context_providers: {} },
    };
    const snap = snapshotFromFiles({
      version: 'doclinks-1',
      service,
      workflows: [
        wf({
          id: 'default',
          name: 'Default',
          stages: [
            {
              name: 'offline',
              type: 'parallel',
              analyzers: [{ id: 'urls' }, { id: 'attachments' }],
            },
            {
              name: 'intel',
              depends_on: ['offline'],
              context_providers: [{ id: 'threat-intel', timeout_ms: 5000 }],
              analyzers: [{ id: 'intel' }],
            },
            { name: 'score', depends_on: ['intel'], analyzers: [{ id: 'scorer' }] },
          ],
        }),
      ],
    });
    // the offline analyzers in a worker thread, as in production: the decoders never run here
    pool = await createAnalysisPool({ size: 1 });
    invoker = createEmbeddedInvoker({
      builtins: builtinPlugins(),
      service: () => service,
      internalApiKey: undefined,
      pool,
    });
    orch = buildOrchestrator({
      broker: p.broker,
      store: p.store,
      cache: p.cache,
      invoker,
      config: createConfigSource(snap),
      topology: p.topology,
      logger: silent,
      options: { prefetch: 4, reaperIntervalMs: 0 },
    });
    await orch.start();
    // The feed loads in the background from the provider's first call: until it has, the intel
    // analyzer abstains. The lure is sent again (another Message-ID) until a run sees the feed.
    for (let attempt = 0; attempt < 5 && !job?.result?.indicators.some(isIntel); attempt++) {
      job = await completed(await submit(lure(`m${attempt}`)));
      if (!job.result?.indicators.some(isIntel)) await new Promise((r) => setTimeout(r, 500));
    }
  });

  afterAll(async () => {
    await orch?.stop(1000);
    await invoker?.close();
    await pool?.close();
    await gw?.close();
    await p?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  const isIntel = (i: { type: string }) => i.type === 'threat_intel_url';

  it('the evidence lists each link with where it was found (the issue: "URLs (0)")', () => {
    expect(job?.status).toBe('completed');
    const urls = job?.result?.evidence?.urls ?? [];
    const by = (u: string) => urls.find((x) => x.url === u);
    expect(by(PDF_LINK)).toMatchObject({
      found_in: 'attachment',
      source: 'pdf',
      attachment: 0,
      attachment_name: 'refund.pdf',
      host: 'refund-portal.example.net',
      registrable_domain: 'example.net',
    });
    expect(by(PDF_IP_LINK)).toMatchObject({ source: 'pdf', attachment_name: 'refund.pdf' });
    expect(by(QR_LINK)).toMatchObject({
      source: 'qr',
      attachment: 1,
      attachment_name: 'scan-me.png',
    });
    expect(by(ICS_LINK)).toMatchObject({ source: 'calendar', attachment_name: 'invite.ics' });
    expect(by(DOCX_LINK)).toMatchObject({ source: 'office', attachment_name: 'form.docx' });
  });

  it('the URL techniques judge them, saying where each was found', () => {
    const ind = job?.result?.indicators ?? [];
    const ip = ind.find((i) => i.type === 'ip_url');
    expect(ip?.value).toContain('in PDF (refund.pdf)');
    const shortener = ind.find((i) => i.type === 'url_shortener');
    expect(shortener?.value).toContain('in QR code (scan-me.png)');
    // each points at its evidence URL
    const urls = job?.result?.evidence?.urls ?? [];
    expect(urls[ip?.evidence?.index as number]?.host).toBe('203.0.113.50');
    expect(urls[shortener?.evidence?.index as number]?.host).toBe('bit.ly');
  });

  it('the threat-intel feed lookup matches the link inside the PDF', () => {
    const hit = job?.result?.indicators.find(isIntel);
    expect(hit?.value).toContain(PDF_LINK);
    expect(hit?.value).toContain('listed by local');
  });

  it('the job search finds the job by a domain only the PDF names', async () => {
    const r = await gw.app.inject({
      method: 'GET',
      url: '/api/v1/analyze?url_domain=refund-portal.example.net',
      headers: bearer(analyst),
    });
    expect(r.statusCode).toBe(200);
    expect(r.json().items.map((j: Job) => j.job_id)).toContain(job?.job_id);
  });
});
