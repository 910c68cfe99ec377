import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStore } from '../../src/index.ts';
import type { SqlClient } from '../../src/store/types.ts';
import { newJob, sampleResult, sampleTrace } from '../../src/testing/index.ts';
import type { BatchTarget } from './job-batching.ts';

/** A SqlClient that counts the rows of each claim and finish statement it is given, in order. */
export function statementCounter(inner: SqlClient): {
  sql: SqlClient;
  claims: () => number[];
  finishes: () => number[];
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
    finishes: rows('WITH v (job_id', 11),
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
      return { store: createStore(c.sql), claims: c.claims, finishes: c.finishes };
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
  });
}
