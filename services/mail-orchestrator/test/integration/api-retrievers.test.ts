import { deriveCredential } from '@trawl/contracts';
import {
  startTestTokenServer,
  type TestKeyPair,
  type TestTokenServer,
  testKeyPair,
} from '@trawl/oauth/testing';
import {
  GmailSettings,
  type RetrieverGmailService,
  startRetrieverGmail,
} from '@trawl/retriever-gmail';
import { startTestGmailServer, type TestGmailServer } from '@trawl/retriever-gmail/testing';
import {
  GraphSettings,
  type RetrieverGraphService,
  startRetrieverGraph,
} from '@trawl/retriever-graph';
import { startTestGraphServer, type TestGraphServer } from '@trawl/retriever-graph/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMailOrchestrator, type MailOrchestrator } from '../../src/index.ts';
import { KEY, type Platform, silent, startPlatform, waitFor } from './stack.ts';

const TENANT = 'contoso-tenant';
const APP = 'trawl-graph-app';
const SA = 'trawl-reader@project.iam.example';
const GMAIL_SCOPE = 'https://www.googleapis.com/auth/gmail.modify';
const GRAPH_BOX = 'phishing@contoso.example';
const GMAIL_BOX = 'phishing@corp.example';
const REPORTER = 'dana.reporter@corp.example';

/** A user's report: the suspicious message attached as message/rfc822 (issue 16's shape). */
function report(tag: string, to: string): string {
  const original = [
    'From: "Account Security" <security@paypa1-verify.example>',
    'To: dana.reporter@corp.example',
    `Subject: Original ${tag}: your account is suspended`,
    `Message-ID: <original-${tag}@paypa1-verify.example>`,
    'Date: Wed, 01 May 2024 09:00:00 +0000',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>Your account has been suspended. Verify your password within 24 hours:',
    '<a href="http://paypa1-verify.example/login">https://www.paypal.com/signin</a></p>',
    '',
  ].join('\r\n');
  return [
    `From: Dana Reporter <${REPORTER}>`,
    `To: ${to}`,
    `Subject: FW: Original ${tag}`,
    'Date: Thu, 26 Nov 2026 10:00:00 +0000',
    `Message-ID: <report-${tag}@corp.example>`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="=_r_="',
    '',
    '--=_r_=',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Is this real? Dana',
    '',
    '--=_r_=',
    'Content-Type: message/rfc822',
    'Content-Disposition: attachment',
    '',
    original,
    '--=_r_=--',
    '',
  ].join('\r\n');
}

describe('Graph and Gmail retrievers end to end (gateway, orchestrator; PostgreSQL, Redis, RabbitMQ)', () => {
  let platform: Platform;
  let ts: TestTokenServer;
  let graph: TestGraphServer;
  let gmail: TestGmailServer;
  let sa: TestKeyPair;
  let graphRetriever: RetrieverGraphService;
  let gmailRetriever: RetrieverGmailService;
  let graphPort = 0;
  let mail: MailOrchestrator;

  async function startGraph(port: number) {
    graphRetriever = await startRetrieverGraph(
      { logger: silent, cache: platform.cache },
      {
        graph: GraphSettings.parse({
          tenant_id: TENANT,
          client_id: APP,
          client_secret: 'graph-app-secret',
          authority: ts.url,
          graph_url: graph.graphUrl,
          mailboxes: GRAPH_BOX,
          page_size: 2,
          name: `e2e-${process.pid}`,
        }),
        host: '127.0.0.1',
        port,
        internalApiKey: deriveCredential(KEY, { kind: 'retriever', id: 'graph' }),
      },
    );
    graphPort = Number(new URL(graphRetriever.url).port);
  }

  beforeAll(async () => {
    platform = await startPlatform();
    ts = await startTestTokenServer();
    platform.onClose(() => ts.close());
    graph = await startTestGraphServer(ts);
    platform.onClose(() => graph.close());
    gmail = await startTestGmailServer(ts);
    platform.onClose(() => gmail.close());
    sa = testKeyPair();
    ts.registerApp({ tenant: TENANT, clientId: APP, secret: 'graph-app-secret' });
    ts.registerServiceAccount({
      email: SA,
      publicKeyPem: sa.publicKeyPem,
      delegate: [{ subject: GMAIL_BOX, scopes: [GMAIL_SCOPE] }],
    });
    graph.addMailbox(GRAPH_BOX);
    graph.restrictAccess(APP, [GRAPH_BOX]);
    gmail.addMailbox(GMAIL_BOX);
    await startGraph(0);
    platform.onClose(() => graphRetriever.close());
    gmailRetriever = await startRetrieverGmail(
      { logger: silent, cache: platform.cache },
      {
        gmail: GmailSettings.parse({
          service_account_key: JSON.stringify({
            client_email: SA,
            private_key: sa.privateKeyPem,
            token_uri: ts.googleTokenUrl,
          }),
          gmail_url: gmail.gmailUrl,
          mailboxes: GMAIL_BOX,
          page_size: 2,
          name: `e2e-${process.pid}`,
        }),
        host: '127.0.0.1',
        port: 0,
        internalApiKey: deriveCredential(KEY, { kind: 'retriever', id: 'gmail' }),
      },
    );
    platform.onClose(() => gmailRetriever.close());
    mail = buildMailOrchestrator({
      retrievers: {
        graph: { url: `http://127.0.0.1:${graphPort}`, priority: 0, enabled: true, report: true },
        gmail: { url: gmailRetriever.url, priority: 0, enabled: true, report: true },
      },
      gateway: { baseUrl: platform.gatewayUrl },
      internalApiKey: KEY,
      broker: platform.broker,
      topology: platform.topology,
      cache: platform.cache,
      logger: silent,
      options: {
        pollIntervalMs: 100,
        batchSize: 4,
        concurrency: 2,
        pendingStaleMs: 2000,
        retrieverBackoff: { initialMs: 100, maxMs: 1000 },
        verdictBackoff: { initialMs: 100, maxMs: 1000 },
        verdictAttempts: 20,
      },
    });
    await mail.start();
  }, 120_000);

  afterAll(async () => {
    await mail?.stop(0).catch(() => undefined);
    await platform?.close();
  });

  /** Analysed subject → jobs, with the reporter each job recorded. */
  async function analysed(): Promise<Map<string, { status: string; reporter?: string }[]>> {
    const { rows } = await platform.store.sql.query<{
      subject: string;
      status: string;
      origin: unknown;
    }>(`SELECT (email::jsonb)->'headers'->>'subject' AS subject, status, origin FROM jobs`);
    const out = new Map<string, { status: string; reporter?: string }[]>();
    for (const r of rows) {
      const o = (typeof r.origin === 'string' ? JSON.parse(r.origin) : r.origin) as {
        report?: { reporter?: string };
      } | null;
      const list = out.get(r.subject) ?? [];
      list.push({
        status: r.status,
        ...(o?.report?.reporter ? { reporter: o.report.reporter } : {}),
      });
      out.set(r.subject, list);
    }
    return out;
  }

  function deliver(tags: string[]) {
    for (const t of tags) {
      if (t.startsWith('graph')) graph.deliver(GRAPH_BOX, report(t, GRAPH_BOX));
      else gmail.deliver(GMAIL_BOX, report(t, GMAIL_BOX));
    }
  }

  /** Waits until every tag's original was analysed to the end, then checks each was analysed once. */
  async function expectAnalysedOnce(tags: string[], what: string) {
    const subject = (t: string) => `Original ${t}: your account is suspended`;
    await waitFor(
      async () => {
        const a = await analysed();
        return tags.every((t) =>
          (a.get(subject(t)) ?? []).some((j) => j.status === 'completed' || j.status === 'failed'),
        );
      },
      what,
      180_000,
    );
    // the mail orchestrator's in-flight work settles (a duplicate would have been submitted by now)
    await new Promise((r) => setTimeout(r, 500));
    const a = await analysed();
    for (const t of tags) {
      const jobs = a.get(subject(t)) ?? [];
      expect(jobs, `${what}: ${t}`).toHaveLength(1);
      expect(jobs[0]?.reporter, t).toBe(REPORTER);
    }
  }

  /** Every report of `tags` carries its verdict in its mailbox (categories / labels). */
  async function expectVerdictsApplied(tags: string[]) {
    const graphFolders = ['Trawl/Processed', 'Trawl/Quarantine', 'Trawl/Unanalyzed'];
    const gmailLabels = ['Trawl/Phishing', 'Trawl/Review', 'Trawl/Clean'];
    await waitFor(
      () =>
        tags.every((t) => {
          const mid = `<report-${t}@corp.example>`;
          if (t.startsWith('graph'))
            return graphFolders.some((f) =>
              graph
                .folder(GRAPH_BOX, f)
                .some((m) => m.internetMessageId === mid && m.categories.length > 0),
            );
          return gmailLabels.some((l) => gmail.labelled(GMAIL_BOX, l).has(mid));
        }),
      'verdicts applied in the mailboxes',
      60_000,
    );
    expect(
      graph
        .folder(GRAPH_BOX, 'Inbox')
        .filter((m) => tags.some((t) => m.internetMessageId.includes(t))),
    ).toEqual([]);
    expect(
      [...gmail.labelled(GMAIL_BOX, 'INBOX').keys()].filter((k) => tags.some((t) => k.includes(t))),
    ).toEqual([]);
  }

  it('a report in each mailbox is analysed as the original it wraps, and its verdict lands in the mailbox', {
    timeout: 240_000,
  }, async () => {
    const tags = ['graph-a1', 'gmail-a1'];
    deliver(tags);
    await expectAnalysedOnce(tags, 'the two reports');
    await expectVerdictsApplied(tags);
  });

  it('a 429 storm at both APIs ends with every message analysed once', {
    timeout: 240_000,
  }, async () => {
    const tags = [1, 2, 3, 4, 5].flatMap((n) => [`graph-s${n}`, `gmail-s${n}`]);
    graph.storm(0.3, 1);
    gmail.storm(0.3);
    try {
      deliver(tags);
      await expectAnalysedOnce(tags, 'the storm');
    } finally {
      graph.storm(0);
      gmail.storm(0);
    }
    expect(graph.stats.throttled).toBeGreaterThan(0);
    expect(gmail.stats.throttled).toBeGreaterThan(0);
    await expectVerdictsApplied(tags);
  });

  it('an expired delta link and history id: a full resync, every message analysed once', {
    timeout: 240_000,
  }, async () => {
    graph.expireDeltaTokens();
    gmail.expireHistory();
    const tags = [1, 2, 3].flatMap((n) => [`graph-x${n}`, `gmail-x${n}`]);
    deliver(tags);
    await expectAnalysedOnce(tags, 'after the resync');
    expect(await graphRetriever.registry.metrics()).toMatch(/trawl_graph_resyncs_total [1-9]/);
    expect(await gmailRetriever.registry.metrics()).toMatch(/trawl_gmail_resyncs_total [1-9]/);
    // what was analysed before the resync is not analysed again
    await expectAnalysedOnce(['graph-a1', 'gmail-a1', 'graph-s1', 'gmail-s5'], 'earlier mail');
  });

  it('revoked consent holds the mail back (503 naming it); granted again, every message is analysed once', {
    timeout: 240_000,
  }, async () => {
    ts.setConsent(APP, false);
    ts.setConsent(SA, false);
    const tags = [1, 2, 3].flatMap((n) => [`graph-c${n}`, `gmail-c${n}`]);
    deliver(tags);
    await waitFor(
      async () =>
        (await graphRetriever.app.inject({ url: '/health' })).json().mailboxes?.[0]?.error ===
          'TRAWL_ERR_OAUTH_CONSENT_REQUIRED' &&
        (await gmailRetriever.app.inject({ url: '/health' })).json().mailboxes?.[0]?.error ===
          'TRAWL_ERR_OAUTH_CONSENT_REQUIRED',
      'both retrievers report the missing consent',
      60_000,
    );
    const a = await analysed();
    expect(tags.filter((t) => a.has(`Original ${t}: your account is suspended`))).toEqual([]);
    ts.setConsent(APP, true);
    ts.setConsent(SA, true);
    await expectAnalysedOnce(tags, 'after consent was granted again');
    await expectVerdictsApplied(tags);
  });

  it('a retriever restarted mid-sync resumes from its stored delta link: every message analysed once', {
    timeout: 240_000,
  }, async () => {
    const tags = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => `graph-r${n}`);
    const before = (await analysed()).size;
    deliver(tags);
    await waitFor(
      async () => (await analysed()).size - before >= 2,
      'the first messages submitted',
      120_000,
    );
    await graphRetriever.close();
    await startGraph(graphPort);
    await expectAnalysedOnce(tags, 'after the restart');
    await expectVerdictsApplied(tags);
  });
});
