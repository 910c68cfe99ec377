import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStore, generateWebhookSecret, type JobFinish } from '../../src/index.ts';
import type { SqlClient } from '../../src/store/types.ts';
import { newJob, sampleResult, sampleTrace } from '../../src/testing/index.ts';
import type { BatchTarget } from './job-batching.ts';

/**
 * A SqlClient that counts the rows of each claim, finish and record (`createFinished`) statement it
 * is given, in order.
 */
export function statementCounter(inner: SqlClient): {
  sql: SqlClient;
  claims: () => number[];
  finishes: () => number[];
  records: () => number[];
} {
  const seen: { text: string; params: unknown[] }[] = [];
  const rows = (prefix: string, perRow: number) => () =>
    seen.filter((s) => s.text.startsWith(prefix)).map((s) => s.params.length / perRow);
  return {
    sql: {
      ...inner,
      kind: inner.kind,
      query: (text, params) => {
        seen.push({ text: text.trimStart(), params: params ?? [] });
        return inner.query(text, params);
      },
    },
    claims: rows('UPDATE jobs AS j', 3),
    finishes: rows('WITH v (job_id, status', 11),
    records: rows('WITH v (job_id, email_id', 21),
  };
}

/**
 * Group commit of claims and finishes (ADR 007), in the style of the store conformance suite:
 * PostgreSQL and PGlite must both pass it.
 */
export function jobFinishBatchingSuite(name: string, makeTarget: () => Promise<BatchTarget>): void {
  describe(`job claim and finish group commit: ${name}`, () => {
    let target: BatchTarget;
    beforeAll(async () => {
      target = await makeTarget();
    }, 180_000);
    afterAll(async () => {
      await target?.cleanup();
    });

    const storeWith = () => {
      const c = statementCounter(target.sql);
      return {
        store: createStore(c.sql),
        claims: c.claims,
        finishes: c.finishes,
        records: c.records,
      };
    };
    const deadline = () => new Date(Date.now() + 60_000);

    async function created(store: ReturnType<typeof createStore>, n: number, email_json?: string) {
      const jobs = Array.from({ length: n }, () =>
        newJob(email_json === undefined ? {} : { email_json }),
      );
      await Promise.all(jobs.map((j) => store.jobs.create(j)));
      return jobs;
    }

    it('claims of one event-loop turn share one statement; each caller gets its own answer', async () => {
      const { store, claims } = storeWith();
      const jobs = Array.from({ length: 5 }, (_, i) => newJob({ email_json: `{"n":${i}}` }));
      await Promise.all(jobs.map((j) => store.jobs.create(j)));
      const done = jobs[4] as (typeof jobs)[number];
      await store.jobs.fail(done.job_id, { code: 'X', message: 'done' });
      const answers = await Promise.all([
        ...jobs.map((j) => store.jobs.claim(j.job_id.toUpperCase(), deadline(), 'v2')),
        store.jobs.claim(randomUUID(), deadline()),
      ]);
      expect(claims()).toEqual([6]);
      expect(answers).toEqual([
        { email: '{"n":0}' },
        { email: '{"n":1}' },
        { email: '{"n":2}' },
        { email: '{"n":3}' },
        null,
        null,
      ]);
      const r = await target.sql.query<{
        status: string;
        attempts: number;
        config_version: string;
      }>('SELECT status, attempts, config_version FROM jobs WHERE job_id = $1', [jobs[0]?.job_id]);
      expect(r.rows[0]).toEqual({ status: 'processing', attempts: 1, config_version: 'v2' });
      // sequential claims are not held back
      await store.jobs.claim(jobs[0]?.job_id as string, deadline());
      expect(claims()).toEqual([6, 1]);
    });

    it('a job claimed twice in one turn is claimed twice, by two statements', async () => {
      const { store, claims } = storeWith();
      const [j, other] = await created(store, 2, '{"x":1}');
      const id = j?.job_id as string;
      const answers = await Promise.all([
        store.jobs.claim(id, deadline()),
        store.jobs.claim(other?.job_id as string, deadline()),
        store.jobs.claim(id, deadline()),
      ]);
      expect(answers).toEqual([{ email: '{"x":1}' }, { email: '{"x":1}' }, { email: '{"x":1}' }]);
      expect(claims()).toEqual([2, 1]);
      const r = await target.sql.query<{ attempts: number }>(
        'SELECT attempts FROM jobs WHERE job_id = $1',
        [id],
      );
      expect(r.rows[0]?.attempts).toBe(2);
    });

    it('finishes of one turn share one statement that answers each job as get reads it back and records the senders', async () => {
      const { store, finishes } = storeWith();
      const jobs = await created(store, 5);
      for (const j of jobs) await store.jobs.claim(j.job_id, deadline());
      const [a, b, c, d, e] = jobs as [
        (typeof jobs)[0],
        (typeof jobs)[0],
        (typeof jobs)[0],
        (typeof jobs)[0],
        (typeof jobs)[0],
      ];
      await store.jobs.fail(e.job_id, { code: 'X', message: 'reaped' });
      const sender = `Someone-${randomUUID()}@Example.ORG `;
      const lonely = `lonely-${randomUUID()}@example.net`;
      const at = new Date('2030-01-02T03:04:05.678Z');
      const answers = await Promise.all([
        store.jobs.finish({
          job_id: a.job_id,
          outcome: { status: 'completed', result: sampleResult(0.9), trace: sampleTrace },
          sender: { address: sender, at, is_phishing: true },
        }),
        store.jobs.finish({
          job_id: b.job_id,
          outcome: { status: 'completed', result: sampleResult(0.1), trace: sampleTrace },
          sender: { address: sender, at: new Date(at.getTime() + 1000), is_phishing: false },
        }),
        store.jobs.finish({
          job_id: c.job_id,
          outcome: {
            status: 'failed',
            error: { code: 'E', message: 'stage failed' },
            trace: sampleTrace,
          },
          sender: { address: lonely, at, is_phishing: null },
        }),
        store.jobs.finish({
          job_id: d.job_id,
          outcome: { status: 'failed', error: { code: 'D', message: 'dead' } },
        }),
        // already finished: not changed, its sender not recorded
        store.jobs.finish({
          job_id: e.job_id,
          outcome: { status: 'completed', result: sampleResult(0.9), trace: sampleTrace },
          sender: { address: lonely, at, is_phishing: true },
        }),
        store.jobs.finish({
          job_id: randomUUID(),
          outcome: { status: 'failed', error: { code: 'X', message: 'unknown' } },
        }),
      ]);
      expect(finishes()).toEqual([6]);
      expect(answers[4]).toBeNull();
      expect(answers[5]).toBeNull();
      for (const [i, j] of [a, b, c, d].entries()) {
        const got = answers[i];
        expect(got?.senderError).toBeUndefined();
        expect(got?.job).toEqual(await store.jobs.get(j.job_id));
      }
      expect(answers[0]?.job).toMatchObject({ status: 'completed', result: sampleResult(0.9) });
      expect(answers[2]?.job).toMatchObject({ status: 'failed', error: { code: 'E' } });
      expect(answers[3]?.job.trace).toBeUndefined();
      const s = await store.senders.get(sender);
      expect(s.sender).toEqual({
        address: sender.trim().toLowerCase(),
        first_seen: at.toISOString(),
        last_seen: new Date(at.getTime() + 1000).toISOString(),
        message_count: 2,
        phishing_count: 1,
      });
      expect((await store.senders.get(lonely)).sender).toMatchObject({
        message_count: 1,
        phishing_count: 0,
      });
      // a later finish of a finished job changes nothing
      expect(
        await store.jobs.finish({
          job_id: a.job_id,
          outcome: { status: 'failed', error: { code: 'late', message: 'late' } },
          sender: { address: sender, at, is_phishing: true },
        }),
      ).toBeNull();
      expect((await store.senders.get(sender)).sender?.message_count).toBe(2);
      expect(finishes()).toEqual([6, 1]);
    });

    it('a finish whose sender cannot be stored stores its job all the same; the others of its batch are untouched', async () => {
      const { store, finishes } = storeWith();
      const [good, bad] = await created(store, 2);
      const address = `ok-${randomUUID()}@example.com`;
      const answers = await Promise.all([
        store.jobs.finish({
          job_id: good?.job_id as string,
          outcome: { status: 'completed', result: sampleResult(0.2), trace: sampleTrace },
          sender: { address, at: new Date(), is_phishing: false },
        }),
        store.jobs.finish({
          job_id: bad?.job_id as string,
          outcome: { status: 'completed', result: sampleResult(0.8), trace: sampleTrace },
          // too long for the address's index (U+0000, which failed it before, is storable now)
          sender: {
            address: `${randomBytes(6000).toString('base64')}@example.com`,
            at: new Date(),
            is_phishing: true,
          },
        }),
      ]);
      // the batch failed as a whole; each row went alone; the bad one again without its sender
      expect(finishes()).toEqual([2, 1, 1, 1]);
      expect(answers[0]?.senderError).toBeUndefined();
      expect(answers[1]?.senderError).toBeDefined();
      expect(answers[1]?.job).toEqual(await store.jobs.get(bad?.job_id as string));
      expect(answers[1]?.job.status).toBe('completed');
      expect((await store.senders.get(address)).sender?.message_count).toBe(1);
    });

    /** What a job's row, terms and webhook events hold but for its ids and times. */
    async function stored(jobId: string) {
      const r = await target.sql.query(
        `SELECT status, email, result, evidence, error, trace, submitted_by, origin, subject, sender,
           sender_name, recipients, recipient_count, search_phishing, search_threat, search_action,
           config_version, attempts, deadline_at, started_at IS NOT NULL AS started,
           completed_at IS NOT NULL AS completed,
           (SELECT jsonb_agg(t.kind || ':' || t.value ORDER BY t.kind, t.value) FROM job_terms t
             WHERE t.job_id = jobs.job_id) AS terms,
           (SELECT jsonb_agg(e.type ORDER BY e.type) FROM webhook_events e
             WHERE e.payload->'data'->>'job_id' = jobs.job_id::text) AS events
         FROM jobs WHERE job_id = $1`,
        [jobId],
      );
      return r.rows[0];
    }

    const evidence = { message: { subject: 'Recorded' } } as unknown as NonNullable<
      ReturnType<typeof sampleResult>['evidence']
    >;
    const outcomes: JobFinish['outcome'][] = [
      { status: 'completed', result: { ...sampleResult(0.9), evidence }, trace: sampleTrace },
      { status: 'completed', result: sampleResult(0.1), trace: sampleTrace },
      { status: 'failed', error: { code: 'E', message: 'stage failed' } },
    ];
    const finishOf = (job_id: string, i: number, address: string): JobFinish => {
      const o = outcomes[i] as JobFinish['outcome'];
      return {
        job_id,
        outcome: o,
        terms: ['dom:recorded.example', `url:recorded.example/${i}`],
        sender: {
          address,
          at: new Date('2030-02-03T04:05:06.789Z'),
          is_phishing: o.status === 'completed' ? o.result.is_phishing : null,
        },
      };
    };
    const originated = () =>
      newJob({
        submitted_by: 'retriever:smtp',
        origin: { retriever: 'smtp', message_id: 'recorded' },
      });

    it('records of one turn share one statement that stores what create then finish store: row, terms, sender, webhook events', async () => {
      const { store, records } = storeWith();
      const hook = await store.webhooks.create({
        id: randomUUID(),
        url: 'http://127.0.0.1:9/recorded',
        events: ['job.completed', 'job.failed', 'verdict.phishing'],
        secret: generateWebhookSecret(),
        description: null,
        enabled: true,
        created_by: 'admin',
      });
      try {
        const address = `recorded-${randomUUID()}@example.org`;
        const twice = outcomes.map(originated);
        for (const [i, j] of twice.entries()) {
          await store.jobs.create(j);
          await store.jobs.finish(finishOf(j.job_id, i, address));
        }
        const once = outcomes.map(originated);
        const answers = await Promise.all(
          once.map((j, i) => store.jobs.createFinished(j, finishOf(j.job_id, i, address))),
        );
        expect(records()).toEqual([3]);
        for (const [i, j] of once.entries()) {
          expect(answers[i]?.senderError).toBeUndefined();
          expect(answers[i]?.job).toEqual(await store.jobs.get(j.job_id));
          const row = await stored(j.job_id);
          expect(row).toEqual(await stored((twice[i] as typeof j).job_id));
          expect(row?.events).not.toBeNull();
        }
        expect(answers[0]?.job.result?.evidence).toEqual(evidence);
        expect(answers[2]?.job).toMatchObject({ status: 'failed', started_at: null });
        expect((await store.senders.get(address)).sender).toMatchObject({
          message_count: 6,
          phishing_count: 2,
        });
      } finally {
        await store.webhooks.remove(hook.id);
      }
    });

    it('a record of a job id already stored answers null and changes nothing', async () => {
      const { store, records } = storeWith();
      const address = `again-${randomUUID()}@example.org`;
      const j = originated();
      const first = await store.jobs.createFinished(j, finishOf(j.job_id, 0, address));
      expect(first?.job.status).toBe('completed');
      // an attempt whose answer was lost, tried again; and twice in one turn
      expect(await store.jobs.createFinished(j, finishOf(j.job_id, 2, address))).toBeNull();
      const k = originated();
      const both = await Promise.all([
        store.jobs.createFinished(k, finishOf(k.job_id, 1, address)),
        store.jobs.createFinished(k, finishOf(k.job_id, 1, address)),
      ]);
      expect(both.filter((b) => b === null)).toHaveLength(1);
      // a job created queued (the gateway's) is not finished by a record
      const q = originated();
      await store.jobs.create(q);
      expect(await store.jobs.createFinished(q, finishOf(q.job_id, 0, address))).toBeNull();
      expect(records()).toEqual([1, 1, 1, 1, 1]);
      expect((await store.jobs.get(j.job_id))?.status).toBe('completed');
      expect((await store.jobs.get(q.job_id))?.status).toBe('queued');
      expect((await store.senders.get(address)).sender?.message_count).toBe(2);
    });

    it('a record whose sender cannot be stored stores its job all the same', async () => {
      const { store, records } = storeWith();
      const [good, bad] = [originated(), originated()];
      const answers = await Promise.all([
        store.jobs.createFinished(good, finishOf(good.job_id, 1, `ok-${randomUUID()}@x.example`)),
        store.jobs.createFinished(
          bad,
          finishOf(bad.job_id, 0, `${randomBytes(6000).toString('base64')}@example.com`),
        ),
      ]);
      expect(records()).toEqual([2, 1, 1, 1]);
      expect(answers[0]?.senderError).toBeUndefined();
      expect(answers[1]?.senderError).toBeDefined();
      expect(answers[1]?.job).toEqual(await store.jobs.get(bad.job_id));
    });
  });
}
