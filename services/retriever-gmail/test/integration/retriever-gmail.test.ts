import type { AnalysisResult, RecommendedAction } from '@trawl/contracts';
import {
  startTestTokenServer,
  type TestKeyPair,
  type TestTokenServer,
  testKeyPair,
} from '@trawl/oauth/testing';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  GmailSettings,
  type GmailSettingsInput,
  type RetrieverGmailService,
  startRetrieverGmail,
} from '../../src/index.ts';
import { startTestGmailServer, type TestGmailServer } from '../../src/testing/index.ts';

const KEY = 'retriever-key-for-tests-0123456789';
const SA = 'trawl-reader@project.iam.example';
const SCOPE = 'https://www.googleapis.com/auth/gmail.modify';
const silent = pino({ level: 'silent' });
const headers = { 'x-internal-api-key': KEY };

function mail(n: number, to: string): string {
  return [
    'From: Sender <sender@example.test>',
    `To: ${to}`,
    `Subject: Report ${n}`,
    `Message-ID: <gmail-${n}@example.test>`,
    'Date: Wed, 01 May 2024 10:00:00 +0000',
    '',
    `Body ${n}`,
    '',
  ].join('\r\n');
}

function result(action: RecommendedAction): AnalysisResult {
  return {
    is_phishing: action !== 'allow',
    threat_level: action === 'allow' ? 'none' : 'high',
    confidence: 0.9,
    summary: action,
    recommended_action: action,
    indicators: [],
  };
}

describe('retriever-gmail against a local Gmail API and Google token endpoint', () => {
  let ts: TestTokenServer;
  let gmail: TestGmailServer;
  let key: TestKeyPair;
  const running: RetrieverGmailService[] = [];
  const delegated: string[] = [];

  beforeAll(async () => {
    ts = await startTestTokenServer();
    gmail = await startTestGmailServer(ts);
    key = testKeyPair();
  });
  afterEach(async () => {
    for (const r of running.splice(0)) await r.close();
  });
  afterAll(async () => {
    await gmail?.close();
    await ts?.close();
  });

  function delegate(box: string) {
    delegated.push(box);
    ts.registerServiceAccount({
      email: SA,
      publicKeyPem: key.publicKeyPem,
      keyId: 'kid-1',
      delegate: delegated.map((subject) => ({ subject, scopes: [SCOPE] })),
    });
  }

  async function start(box: string, extra: Partial<GmailSettingsInput> = {}) {
    gmail.addMailbox(box);
    const settings = GmailSettings.parse({
      service_account_key: JSON.stringify({
        type: 'service_account',
        client_email: SA,
        private_key: key.privateKeyPem,
        private_key_id: 'kid-1',
        token_uri: ts.googleTokenUrl,
      }),
      gmail_url: gmail.gmailUrl,
      mailboxes: box,
      page_size: 2,
      ...extra,
    });
    const r = await startRetrieverGmail(
      { logger: silent },
      { gmail: settings, host: '127.0.0.1', port: 0, internalApiKey: KEY },
    );
    running.push(r);
    return r;
  }
  const post = (r: RetrieverGmailService, url: string, payload: unknown) =>
    r.app.inject({ method: 'POST', url, headers, payload: payload as object });

  it('full sync, then history; raw MIME; the ack swaps INBOX for Trawl/Processed; verdicts as labels', async () => {
    const box = 'reports@corp.example';
    delegate(box);
    const r = await start(box);
    for (let i = 1; i <= 3; i++) gmail.deliver(box, mail(i, box));
    const first = (await post(r, '/internal/fetch', { max_messages: 10 })).json().messages as {
      id: string;
      raw: string;
    }[];
    expect(first).toHaveLength(3);
    expect(first.map((m) => Buffer.from(m.raw, 'base64').toString()).join()).toContain(
      '<gmail-2@example.test>',
    );
    await post(r, '/internal/ack', { ids: first.map((m) => m.id) });
    expect(gmail.labelled(box, 'INBOX').size).toBe(0);
    expect(gmail.labelled(box, 'Trawl/Processed').size).toBe(3);
    // new mail arrives: found through users.history.list, not a new full listing
    const lists = gmail.stats.byRoute['GET messages'] ?? 0;
    gmail.deliver(box, mail(4, box));
    const second = (await post(r, '/internal/fetch', { max_messages: 10 })).json().messages as {
      id: string;
    }[];
    expect(second).toHaveLength(1);
    expect(gmail.stats.byRoute['GET messages'] ?? 0).toBe(lists);
    expect(gmail.stats.byRoute['GET history']).toBeGreaterThan(0);
    await post(r, '/internal/ack', { ids: second.map((m) => m.id) });

    const actions: RecommendedAction[] = ['quarantine', 'flag', 'review', 'allow'];
    const all = [...first, ...second];
    for (let i = 0; i < 4; i++)
      expect(
        (
          await post(r, '/internal/verdict', {
            id: all[i]!.id,
            job_id: `j${i}`,
            result: result(actions[i]!),
          })
        ).statusCode,
      ).toBe(200);
    const labels = new Map([
      ...gmail.labelled(box, 'Trawl/Processed'),
      ...gmail.labelled(box, 'Trawl/Quarantine'),
    ]);
    const byMid = (n: number) => labels.get(`<gmail-${n}@example.test>`) ?? [];
    const quarantined = [...gmail.labelled(box, 'Trawl/Quarantine').keys()];
    expect(quarantined).toHaveLength(1);
    expect(labels.get(quarantined[0]!)).toContain('Trawl/Phishing');
    expect(labels.get(quarantined[0]!)).not.toContain('Trawl/Processed');
    const rest = [1, 2, 3, 4].map(byMid).filter((l) => !l.includes('Trawl/Quarantine'));
    expect(rest.filter((l) => l.includes('Trawl/Phishing') && l.includes('STARRED'))).toHaveLength(
      1,
    );
    expect(rest.filter((l) => l.includes('Trawl/Review'))).toHaveLength(1);
    expect(rest.filter((l) => l.includes('Trawl/Clean'))).toHaveLength(1);
  });

  it("a user's refresh token reaches that user's mailbox", async () => {
    const box = 'dana@corp.example';
    ts.registerRefreshToken({
      token: 'rt-dana',
      clientId: 'cli',
      clientSecret: 'cs',
      subject: box,
      scope: SCOPE,
    });
    const r = await start(box, {
      service_account_key: undefined,
      client_id: 'cli',
      client_secret: 'cs',
      refresh_token: 'rt-dana',
      token_url: ts.googleTokenUrl,
    });
    gmail.deliver(box, mail(50, box));
    expect((await post(r, '/internal/fetch', { max_messages: 10 })).json().messages).toHaveLength(
      1,
    );
  });

  it('a mailbox the delegation does not cover: 503 TRAWL_ERR_OAUTH_CONSENT_REQUIRED naming the fix', async () => {
    const r = await start('not-delegated@corp.example');
    const f = await post(r, '/internal/fetch', { max_messages: 1 });
    expect(f.statusCode).toBe(503);
    expect(f.json().code).toBe('TRAWL_ERR_OAUTH_CONSENT_REQUIRED');
    expect(f.json().detail).toMatch(/domain-wide delegation/);
    expect(f.body).not.toContain('PRIVATE KEY');
  });

  it('backs off 429 rateLimitExceeded and 403 userRateLimitExceeded', async () => {
    const box = 'quota@corp.example';
    delegate(box);
    const r = await start(box);
    gmail.deliver(box, mail(60, box));
    gmail.throttleNext(1, '403');
    const before = gmail.stats.throttled;
    const f = await post(r, '/internal/fetch', { max_messages: 5 });
    expect(f.statusCode).toBe(200);
    expect(f.json().messages).toHaveLength(1);
    gmail.throttleNext(1, '429');
    await post(r, '/internal/ack', { ids: [f.json().messages[0].id] });
    expect(gmail.stats.throttled - before).toBe(2);
    expect(gmail.labelled(box, 'Trawl/Processed').size).toBe(1);
  });
});
