import { Email } from '@trawl/contracts';
import { type TestSchema, testSchema } from '@trawl/platform/testing';
import { invokeAnalyzer, invokeProvider } from '@trawl/plugin-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextAnalyzer } from '../../src/context/index.ts';
import { createSenderHistoryProvider } from '../../src/sender-history/index.ts';

const email = (sender: string, body: string) =>
  Email.parse({
    headers: {
      subject: 'Invoice',
      sender,
      recipients: ['ap@example.org'],
      date: '2024-05-01T09:30:00Z',
    },
    body_text: body,
  });

describe('sender-history provider on PostgreSQL', () => {
  let db: TestSchema;
  beforeAll(async () => {
    db = await testSchema();
    const s = db.store.senders;
    await s.record('billing@vendor.example', new Date('2024-01-01T00:00:00Z'), false);
    await s.record('billing@vendor.example', new Date('2024-03-01T00:00:00Z'), false);
    await s.record('other@vendor.example', new Date('2024-02-01T00:00:00Z'), null);
    await s.record('scam@bad.example', new Date('2024-04-01T00:00:00Z'), true);
  });
  afterAll(() => db?.drop());

  const enrich = (e: Email) =>
    invokeProvider(
      createSenderHistoryProvider({ senders: db.store.senders }),
      { email: e, stage: 'enrich', workflow_id: 'default' },
      {},
      AbortSignal.timeout(10_000),
    );

  it('answers the history of a known sender and its domain', async () => {
    const r = await enrich(email('Billing@Vendor.example', 'hello'));
    expect(r.provider_id).toBe('sender-history');
    expect(r.data).toMatchObject({
      available: true,
      address: 'billing@vendor.example',
      domain: 'vendor.example',
      first_time_sender: false,
      first_time_domain: false,
      sender: { known: true, message_count: 2, phishing_count: 0, days_known: 121 },
      domain_history: { known: true, message_count: 3, phishing_count: 0 },
    });
  });

  it('marks a first-time sender of a known domain, and feeds the context analyzer', async () => {
    const e = email('new.person@vendor.example', 'Please pay by wire transfer to the IBAN below.');
    const r = await enrich(e);
    expect(r.data).toMatchObject({ first_time_sender: true, first_time_domain: false });
    const withContext = Email.parse({
      ...e,
      analysis_context: { enrich: { providers: { 'sender-history': r.data }, analyzers: {} } },
    });
    const a = await invokeAnalyzer(contextAnalyzer, withContext, {}, AbortSignal.timeout(10_000));
    expect(a.indicators.map((i) => i.type)).toEqual(['first_time_sender']);
    expect(a.is_phishing).toBe(true);
  });

  it('reports past phishing verdicts', async () => {
    const r = await enrich(email('scam@bad.example', 'hi'));
    expect(r.data).toMatchObject({ sender: { phishing_count: 1 }, first_time_sender: false });
  });

  it('answers available:false without a repository', async () => {
    const r = await invokeProvider(
      createSenderHistoryProvider(),
      { email: email('a@b.example', 'x'), stage: 's', workflow_id: 'w' },
      {},
      AbortSignal.timeout(10_000),
    );
    expect(r.data).toMatchObject({ available: false, first_time_sender: false });
  });
});
