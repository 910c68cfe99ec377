import { deriveCredential, topology } from '@trawl/contracts';
import { createMemoryBroker, createMemoryCache, declareTopology } from '@trawl/platform';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { buildMailOrchestrator, type MailOrchestrator } from '../../src/index.ts';
import { FakeGateway, FakeRetriever, rawMessage } from './fakes.ts';

const KEY = 'internal-key-for-tests-0123456789';

// Regression (issue 21): a pushing retriever (the SMTP filter) that answered Postfix 451 at its
// deadline gets the same bytes again on Postfix's retry; the push was a duplicate and its verdict,
// already sent once, was never sent again, so the retry waited out the deadline every time.
describe('a duplicate push of a finished job', () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of closers.reverse()) await c();
    closers.length = 0;
  });

  it('gets the verdict of that job again, addressed to the id it was pushed with', async () => {
    const gateway = await new FakeGateway(KEY).start();
    closers.push(() => gateway.close());
    const filter = await new FakeRetriever().start();
    closers.push(() => filter.close());
    const broker = createMemoryBroker();
    closers.push(() => broker.close());
    const t = topology('mo-dup');
    await declareTopology(broker, t);
    const o: MailOrchestrator = buildMailOrchestrator({
      retrievers: { smtp: { url: filter.url, priority: 0, enabled: true } },
      gateway: { baseUrl: gateway.url },
      internalApiKey: KEY,
      broker,
      topology: t,
      cache: createMemoryCache({ maxEntries: 100 }),
      logger: pino({ level: 'silent' }),
      options: { pollIntervalMs: 60_000, verdictBackoff: { initialMs: 5, maxMs: 20 } },
    });
    closers.push(() => o.stop(0));
    const push = () =>
      o.app.inject({
        method: 'POST',
        url: '/internal/ingest',
        headers: { 'x-internal-api-key': deriveCredential(KEY, { kind: 'retriever', id: 'smtp' }) },
        payload: {
          messages: [{ id: 'sha-1', raw: Buffer.from(rawMessage(1)).toString('base64') }],
        },
      });
    expect((await push()).json().results[0]).toMatchObject({ status: 'accepted' });
    const job = gateway.jobs[0];
    if (!job) throw new Error('no job');
    // Still running: a duplicate gets nothing yet (the job's own event will carry the verdict).
    expect((await push()).json().results[0]).toMatchObject({ status: 'duplicate' });
    await new Promise((r) => setTimeout(r, 100));
    expect(filter.verdicts).toEqual([]);
    Object.assign(job, {
      status: 'completed',
      result: {
        is_phishing: true,
        threat_level: 'high',
        confidence: 0.8,
        summary: 'phishing',
        recommended_action: 'quarantine',
        indicators: [],
      },
    });
    expect((await push()).json().results[0]).toMatchObject({
      status: 'duplicate',
      job_id: job.job_id,
    });
    await expect.poll(() => filter.verdicts.length, { timeout: 5000 }).toBe(1);
    expect(filter.verdicts[0]).toMatchObject({
      id: 'sha-1',
      job_id: job.job_id,
      verdict: 'analyzed',
      result: { threat_level: 'high' },
    });
    expect(gateway.submissions).toBe(1);
  });
});
