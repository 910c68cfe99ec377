import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStore } from '../../src/index.ts';
import type { StoreOptions } from '../../src/store/create-store.ts';
import type { SqlClient } from '../../src/store/types.ts';
import { newJob } from '../../src/testing/index.ts';

export interface BatchTarget {
  /** A migrated client on an isolated database/schema. */
  sql: SqlClient;
  cleanup(): Promise<void>;
}

/** A SqlClient that records the statements it is given (to count the job INSERTs). */
export function countingClient(inner: SqlClient): { sql: SqlClient; inserts: () => number[] } {
  const seen: string[] = [];
  const sql: SqlClient = {
    ...inner,
    kind: inner.kind,
    query: (text, params) => {
      seen.push(text);
      return inner.query(text, params);
    },
  };
  return {
    sql,
    /** Rows per INSERT INTO jobs statement, in the order they were sent. */
    inserts: () =>
      seen
        .filter((s) => s.startsWith('INSERT INTO jobs'))
        .map((s) => (s.match(/'queued'/g) ?? []).length),
  };
}

/**
 * Group commit of job inserts (ADR 005), in the style of the store conformance suite: PostgreSQL
 * and PGlite must both pass it.
 */
export function jobBatchingSuite(name: string, makeTarget: () => Promise<BatchTarget>): void {
  describe(`job insert group commit: ${name}`, () => {
    let target: BatchTarget;
    beforeAll(async () => {
      target = await makeTarget();
    }, 180_000);
    afterAll(async () => {
      await target?.cleanup();
    });

    const storeWith = (opts: StoreOptions = {}) => {
      const c = countingClient(target.sql);
      return { store: createStore(c.sql, opts), inserts: c.inserts };
    };

    it('writes the creates of one event-loop turn with one statement; each caller gets its row', async () => {
      const { store, inserts } = storeWith();
      const jobs = Array.from({ length: 20 }, (_, i) =>
        newJob({ submitted_by: `u${i}`, email_json: JSON.stringify({ n: i }) }),
      );
      const created = await Promise.all(jobs.map((j) => store.jobs.create(j)));
      expect(inserts()).toEqual([20]);
      for (const [i, j] of jobs.entries()) {
        expect(created[i]).toMatchObject({
          job_id: j.job_id,
          email_id: j.email_id,
          status: 'queued',
          workflow: j.workflow_id,
          started_at: null,
          completed_at: null,
        });
        expect(await store.jobs.get(j.job_id)).toEqual(created[i]);
        const row = await target.sql.query<{ email: string; submitted_by: string }>(
          'SELECT email, submitted_by FROM jobs WHERE job_id = $1',
          [j.job_id],
        );
        expect(row.rows[0]).toEqual({ email: JSON.stringify({ n: i }), submitted_by: `u${i}` });
      }
      // sequential creates are not held back: one statement each
      await store.jobs.create(newJob());
      await store.jobs.create(newJob());
      expect(inserts()).toEqual([20, 1, 1]);
    });

    it('splits a batch at its row cap and at its size cap', async () => {
      const rows = storeWith({ jobInsertBatch: { maxRows: 8 } });
      await Promise.all(Array.from({ length: 20 }, () => rows.store.jobs.create(newJob())));
      expect(rows.inserts()).toEqual([8, 8, 4]);

      const text = JSON.stringify({ body: 'x'.repeat(1000) });
      const bytes = storeWith({ jobInsertBatch: { maxBytes: text.length * 2.5 } });
      const jobs = Array.from({ length: 5 }, () => newJob({ email_json: text }));
      await Promise.all(jobs.map((j) => bytes.store.jobs.create(j)));
      expect(bytes.inserts()).toEqual([2, 2, 1]);
      for (const j of jobs) expect(await bytes.store.jobs.get(j.job_id)).not.toBeNull();
    });

    it('a duplicate job id in a batch fails only its own caller', async () => {
      const { store, inserts } = storeWith();
      const existing = newJob();
      await store.jobs.create(existing);
      const a = newJob();
      const b = newJob();
      const twice = newJob();
      const results = await Promise.allSettled([
        store.jobs.create(a),
        store.jobs.create({ ...existing, email_id: 'other' }),
        store.jobs.create(b),
        store.jobs.create(twice),
        store.jobs.create(twice),
      ]);
      expect(results.map((r) => r.status)).toEqual([
        'fulfilled',
        'rejected',
        'fulfilled',
        'fulfilled',
        'rejected',
      ]);
      for (const i of [1, 4]) {
        expect((results[i] as PromiseRejectedResult).reason).toMatchObject({
          code: 'TRAWL_ERR_STORE_CONFLICT',
        });
      }
      // the batch statement failed as a whole, then each row went alone
      expect(inserts()).toEqual([1, 5, 1, 1, 1, 1, 1]);
      expect(await store.jobs.get(a.job_id)).not.toBeNull();
      expect(await store.jobs.get(b.job_id)).not.toBeNull();
      expect((await store.jobs.get(twice.job_id))?.email_id).toBe(twice.email_id);
      expect((await store.jobs.get(existing.job_id))?.email_id).toBe(existing.email_id);
    });

    it('a row the database refuses for another reason fails alone, with its own error', async () => {
      const { store } = storeWith();
      const good = newJob();
      const results = await Promise.allSettled([
        store.jobs.create(good),
        store.jobs.create(newJob({ job_id: 'not-a-uuid' })),
      ]);
      expect(results[0]?.status).toBe('fulfilled');
      expect(results[1]?.status).toBe('rejected');
      expect((results[1] as PromiseRejectedResult).reason).not.toMatchObject({
        code: 'TRAWL_ERR_STORE_CONFLICT',
      });
      expect(await store.jobs.get(good.job_id)).not.toBeNull();
    });

    it('claim marks a job processing and answers its stored Email in one statement', async () => {
      const { store } = storeWith();
      const j = newJob({ email_json: '{"stored":true}' });
      await store.jobs.create(j);
      const deadline = new Date(Date.now() + 60_000);
      expect(await store.jobs.claim(j.job_id, deadline, 'v9')).toEqual({
        email: '{"stored":true}',
      });
      const r = await target.sql.query<{
        status: string;
        attempts: number;
        config_version: string;
      }>('SELECT status, attempts, config_version FROM jobs WHERE job_id = $1', [j.job_id]);
      expect(r.rows[0]).toEqual({ status: 'processing', attempts: 1, config_version: 'v9' });
      // a redelivery of a job still processing claims it again
      expect(await store.jobs.claim(j.job_id, deadline)).not.toBeNull();
      await store.jobs.fail(j.job_id, { code: 'X', message: 'done' });
      expect(await store.jobs.claim(j.job_id, deadline)).toBeNull();
      expect(await store.jobs.claim(randomUUID(), deadline)).toBeNull();
    });
  });
}
