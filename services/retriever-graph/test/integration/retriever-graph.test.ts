import type { AnalysisResult, RecommendedAction } from '@trawl/contracts';
import {
  startTestTokenServer,
  type TestCertificate,
  type TestTokenServer,
  testCertificate,
} from '@trawl/oauth/testing';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  GraphSettings,
  type GraphSettingsInput,
  type RetrieverGraphService,
  startRetrieverGraph,
} from '../../src/index.ts';
import { startTestGraphServer, type TestGraphServer } from '../../src/testing/index.ts';

const KEY = 'retriever-key-for-tests-0123456789';
const TENANT = 'contoso-tenant';
const BOX = 'phishing@contoso.example';
const silent = pino({ level: 'silent' });
const headers = { 'x-internal-api-key': KEY };

function mail(n: number): string {
  return [
    'From: Sender <sender@example.test>',
    `To: ${BOX}`,
    `Subject: Report ${n}`,
    `Message-ID: <graph-${n}@example.test>`,
    'Date: Wed, 01 May 2024 10:00:00 +0000',
    '',
    `Body ${n}`,
    '',
  ].join('\r\n');
}

function result(
  action: RecommendedAction,
  level: AnalysisResult['threat_level'] = 'high',
): AnalysisResult {
  return {
    is_phishing: action !== 'allow',
    threat_level: action === 'allow' ? 'none' : level,
    confidence: 0.9,
    summary: action,
    recommended_action: action,
    indicators: [],
  };
}

describe('retriever-graph against a local Microsoft Graph and token endpoint', () => {
  let ts: TestTokenServer;
  let graph: TestGraphServer;
  let cert: TestCertificate;
  const running: RetrieverGraphService[] = [];

  beforeAll(async () => {
    ts = await startTestTokenServer();
    graph = await startTestGraphServer(ts);
    cert = testCertificate();
    ts.registerApp({ tenant: TENANT, clientId: 'app-1', secret: 'app-secret-value' });
    ts.registerApp({ tenant: TENANT, clientId: 'app-cert', certificatePem: cert.certificatePem });
  });
  afterEach(async () => {
    for (const r of running.splice(0)) await r.close();
  });
  afterAll(async () => {
    await graph?.close();
    await ts?.close();
  });

  async function start(mailbox: string, extra: Partial<GraphSettingsInput> = {}) {
    graph.addMailbox(mailbox);
    const settings = GraphSettings.parse({
      tenant_id: TENANT,
      client_id: 'app-1',
      client_secret: 'app-secret-value',
      authority: ts.url,
      graph_url: graph.graphUrl,
      mailboxes: mailbox,
      page_size: 2,
      ...extra,
    });
    const r = await startRetrieverGraph(
      { logger: silent },
      { graph: settings, host: '127.0.0.1', port: 0, internalApiKey: KEY },
    );
    running.push(r);
    return r;
  }
  const post = (r: RetrieverGraphService, url: string, payload: unknown) =>
    r.app.inject({ method: 'POST', url, headers, payload: payload as object });

  it('fetches the MIME by delta, acks into Trawl/Processed, applies each verdict rule', async () => {
    const box = 'a@contoso.example';
    const r = await start(box);
    for (let i = 1; i <= 5; i++) graph.deliver(box, mail(i).replace(BOX, box));
    const f = await post(r, '/internal/fetch', { max_messages: 10 });
    expect(f.statusCode).toBe(200);
    const msgs = f.json().messages as { id: string; raw: string; envelope: { to: string[] } }[];
    expect(msgs).toHaveLength(5);
    expect(Buffer.from(msgs[0]!.raw, 'base64').toString()).toContain('<graph-1@example.test>');
    expect(msgs[0]!.envelope).toEqual({ to: [box] });
    expect(msgs[0]!.id.startsWith(`${box}:`)).toBe(true);
    // message 5: its verdict (quarantine) comes before the ack
    expect(
      (
        await post(r, '/internal/verdict', {
          id: msgs[4]!.id,
          job_id: 'j5',
          result: result('quarantine'),
        })
      ).statusCode,
    ).toBe(200);
    const ack = await post(r, '/internal/ack', { ids: msgs.map((m) => m.id) });
    expect(ack.json()).toEqual({ acked: 5, missing: [] });
    expect(graph.folder(box, 'Inbox')).toHaveLength(0);
    // nothing is handed out twice once acked
    expect((await post(r, '/internal/fetch', { max_messages: 10 })).json().messages).toHaveLength(
      0,
    );

    const actions: RecommendedAction[] = ['quarantine', 'flag', 'review', 'allow'];
    for (let i = 0; i < 4; i++)
      expect(
        (
          await post(r, '/internal/verdict', {
            id: msgs[i]!.id,
            job_id: `j${i}`,
            result: result(actions[i]!),
          })
        ).statusCode,
      ).toBe(200);
    const q = graph.folder(box, 'Trawl/Quarantine');
    expect(q.map((m) => m.internetMessageId).sort()).toEqual([
      '<graph-1@example.test>',
      '<graph-5@example.test>',
    ]);
    expect(q[0]!.categories).toEqual(['Trawl: phishing']);
    const p = new Map(graph.folder(box, 'Trawl/Processed').map((m) => [m.internetMessageId, m]));
    expect(p.get('<graph-2@example.test>')).toMatchObject({
      categories: ['Trawl: phishing'],
      flagged: true,
    });
    expect(p.get('<graph-3@example.test>')).toMatchObject({
      categories: ['Trawl: review'],
      flagged: true,
    });
    expect(p.get('<graph-4@example.test>')).toMatchObject({
      categories: ['Trawl: clean'],
      flagged: false,
    });
    // an unanalysed message is held apart, whatever its result says
    graph.deliver(box, mail(6));
    const f6 = await post(r, '/internal/fetch', { max_messages: 10 });
    const [m6] = f6.json().messages as { id: string }[];
    await post(r, '/internal/ack', { ids: [m6!.id] });
    const held = await post(r, '/internal/verdict', {
      id: m6!.id,
      job_id: 'unanalyzed:x',
      verdict: 'unanalyzed',
      result: result('allow'),
    });
    expect(held.json()).toMatchObject({ rule: 'unanalyzed', where: 'Trawl/Unanalyzed' });
    expect(graph.folder(box, 'Trawl/Unanalyzed')[0]?.categories).toEqual([
      'Trawl: unanalyzed',
      'Trawl: review',
    ]);
  });

  it('a rule per threat level wins over the action; the certificate grant works', async () => {
    const box = 'b@contoso.example';
    const r = await start(box, {
      client_id: 'app-cert',
      client_secret: undefined,
      certificate: cert.certificatePem,
      private_key: cert.privateKeyPem,
      verdict_rules: JSON.stringify({ critical: { move_to: 'Security/Critical', tags: ['P1'] } }),
    });
    graph.deliver(box, mail(10));
    const [m] = (await post(r, '/internal/fetch', { max_messages: 10 })).json().messages as {
      id: string;
    }[];
    await post(r, '/internal/ack', { ids: [m!.id] });
    const v = await post(r, '/internal/verdict', {
      id: m!.id,
      job_id: 'j',
      result: result('quarantine', 'critical'),
    });
    expect(v.json()).toMatchObject({ rule: 'critical', where: 'Security/Critical' });
    expect(graph.folder(box, 'Security/Critical')[0]?.categories).toEqual(['P1']);
  });

  it('answers 503 naming the problem when the access policy leaves the mailbox out', async () => {
    const box = 'c@contoso.example';
    graph.restrictAccess('app-1', ['someone-else@contoso.example']);
    try {
      const r = await start(box);
      graph.deliver(box, mail(20));
      const f = await post(r, '/internal/fetch', { max_messages: 10 });
      expect(f.statusCode).toBe(503);
      expect(f.json().code).toBe('TRAWL_ERR_GRAPH_ACCESS_DENIED');
      expect(f.json().detail).toMatch(/application access policy/);
      const h = await r.app.inject({ url: '/health' });
      expect(h.statusCode).toBe(503);
      expect(h.json().mailboxes[0]).toMatchObject({
        mailbox: box,
        error: 'TRAWL_ERR_GRAPH_ACCESS_DENIED',
      });
    } finally {
      graph.restrictAccess('app-1', null);
    }
  });

  it('a wrong client secret is a 503 naming invalid_client, never showing the secret', async () => {
    const r = await start('d@contoso.example', { client_secret: 'wrong-secret-value' });
    const f = await post(r, '/internal/fetch', { max_messages: 1 });
    expect(f.statusCode).toBe(503);
    expect(f.json().code).toBe('TRAWL_ERR_OAUTH_INVALID_CLIENT');
    expect(f.body).not.toContain('wrong-secret-value');
  });

  it('waits out 429 with Retry-After within a request, and keeps to 4 requests per mailbox', async () => {
    const box = 'e@contoso.example';
    const r = await start(box, { page_size: 50 });
    for (let i = 30; i < 42; i++) graph.deliver(box, mail(i));
    const before = graph.stats.throttled;
    graph.throttleNext(2, 1);
    const f = await post(r, '/internal/fetch', { max_messages: 50 });
    expect(f.statusCode).toBe(200);
    expect(graph.stats.throttled - before).toBe(2);
    expect(f.json().messages).toHaveLength(12);
    expect(graph.stats.maxConcurrency).toBeLessThanOrEqual(4);
    expect(await r.registry.metrics()).toMatch(/trawl_graph_throttled_total 2/);
  });
});
