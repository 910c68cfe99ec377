import { createHash } from 'node:crypto';
import type { Email } from '@trawl/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRetentionRepository, createStore, type Store } from '../../src/index.ts';
import type { SqlClient } from '../../src/store/types.ts';
import { newJob, sampleResult, sampleTrace } from '../../src/testing/index.ts';
import type { BatchTarget } from './job-batching.ts';

const DAY_MS = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY_MS);

const BODY = 'Your account is locked: verify at https://evil-login.example/verify now.';
const CONTENT = Buffer.from('%PDF-1.4 invoice').toString('base64');

/** A message with a body, raw headers and an attachment with its bytes: what a purge removes. */
function fullEmail(subject: string): Email {
  return {
    headers: {
      subject,
      sender: 'security@bank-alerts.example',
      recipients: ['alice@corp.example'],
      date: '2026-11-03T10:00:00Z',
      raw_headers: { received: ['from mx.sender.example by mx.corp.example'], subject },
    },
    body_text: BODY,
    body_html: `<p>${BODY}</p>`,
    attachments: [
      {
        filename: 'invoice.pdf',
        content_type: 'application/pdf',
        size: 16,
        content: CONTENT,
        sha256: createHash('sha256').update('%PDF-1.4 invoice').digest('hex'),
      },
    ],
    analysis_context: {},
  };
}

/**
 * The retention purge's statements (issue 15): PostgreSQL and PGlite must both pass it. Rows are
 * aged by setting their timestamps in SQL; each case checks what goes and that nothing recent (or
 * unfinished) is touched.
 */
export function retentionSuite(name: string, makeTarget: () => Promise<BatchTarget>): void {
  describe(`retention purge: ${name}`, () => {
    let target: BatchTarget;
    let sql: SqlClient;
    let store: Store;

    beforeAll(async () => {
      target = await makeTarget();
      sql = target.sql;
      store = createStore(sql);
    }, 180_000);
    afterAll(async () => {
      await target?.cleanup();
    });

    /** A job created `ageDays` ago, finished (with search terms) unless `finish` is false. */
    async function job(ageDays: number, finish = true): Promise<string> {
      const j = newJob({ email: fullEmail(`subject ${ageDays}`) });
      await store.jobs.create(j);
      await sql.query('UPDATE jobs SET created_at = $2 WHERE job_id = $1', [
        j.job_id,
        daysAgo(ageDays),
      ]);
      if (finish) {
        await store.jobs.claim(j.job_id, new Date(Date.now() + 60_000));
        const done = await store.jobs.finish({
          job_id: j.job_id,
          outcome: { status: 'completed', result: sampleResult(0.9), trace: sampleTrace },
          terms: ['from:security@bank-alerts.example', 'verdict:phishing'],
        });
        expect(done).not.toBeNull();
      }
      return j.job_id;
    }

    const stored = async (id: string) =>
      (
        await sql.query<{ email: string; body_purged_at: unknown; result: unknown }>(
          'SELECT email, body_purged_at, result FROM jobs WHERE job_id = $1',
          [id],
        )
      ).rows[0];
    const termCount = async (id: string) =>
      Number(
        (
          await sql.query<{ n: number | string }>(
            'SELECT count(*) AS n FROM job_terms WHERE job_id = $1',
            [id],
          )
        ).rows[0]?.n,
      );

    it('purges the bodies of finished jobs past retention, keeping verdict, trace and a valid stub', async () => {
      const repo = createRetentionRepository(sql);
      const old = await job(40);
      const recent = await job(2);
      const unfinished = await job(40, false);
      const resultBefore = (await store.jobs.get(old))?.result;
      expect(resultBefore).toBeDefined();

      const n = await repo.purgeBodies(daysAgo(30), 500);
      expect(n).toBeGreaterThanOrEqual(1);

      const row = await stored(old);
      expect(row?.body_purged_at).not.toBeNull();
      const stub = JSON.parse(row?.email as string) as Email;
      expect(row?.email).not.toContain('evil-login');
      expect(row?.email).not.toContain(CONTENT);
      expect(stub.body_text).toBe('');
      expect(stub.body_html).toBeUndefined();
      expect(stub.headers.raw_headers).toBeUndefined();
      expect(stub.headers).toMatchObject({
        subject: 'subject 40',
        sender: 'security@bank-alerts.example',
        recipients: ['alice@corp.example'],
      });
      expect(stub.attachments).toEqual([
        expect.objectContaining({ filename: 'invoice.pdf', size: 16 }),
      ]);
      expect(stub.attachments?.[0]?.content).toBeUndefined();
      // the job as the API reads it: unchanged
      const after = await store.jobs.get(old);
      expect(after?.status).toBe('completed');
      expect(after?.result).toEqual(resultBefore);
      expect(after?.trace).toBeDefined();
      expect(await termCount(old)).toBeGreaterThan(0);

      // recent and unfinished jobs keep their body
      for (const id of [recent, unfinished]) {
        const r = await stored(id);
        expect(r?.body_purged_at).toBeNull();
        expect(r?.email).toContain('evil-login');
      }
      // a second run finds nothing left
      expect(await repo.purgeBodies(daysAgo(30), 500)).toBe(0);
    });

    it('bounds a body-purge batch by the stored bytes it reads, taking at least one row', async () => {
      const repo = createRetentionRepository(sql);
      const ids = await Promise.all([job(50), job(51), job(52)]);
      // 1 byte: every batch stops after its first row, oldest first
      expect(await repo.purgeBodies(daysAgo(30), 500, 1)).toBe(1);
      expect((await stored(ids[2] as string))?.body_purged_at).not.toBeNull();
      expect((await stored(ids[0] as string))?.body_purged_at).toBeNull();
      expect(await repo.purgeBodies(daysAgo(30), 500, 1)).toBe(1);
      expect(await repo.purgeBodies(daysAgo(30), 500, 1)).toBe(1);
      expect(await repo.purgeBodies(daysAgo(30), 500, 1)).toBe(0);
      for (const id of ids) expect((await stored(id))?.body_purged_at).not.toBeNull();
    });

    it('a stored Email that is not JSON becomes an empty stub instead of stopping the purge', async () => {
      const repo = createRetentionRepository(sql);
      const broken = await job(45);
      const fine = await job(45);
      await sql.query(`UPDATE jobs SET email = 'not json {' WHERE job_id = $1`, [broken]);
      await repo.purgeBodies(daysAgo(30), 500);
      expect((await stored(broken))?.email).toBe('{}');
      expect((await stored(fine))?.body_purged_at).not.toBeNull();
    });

    it('deletes finished jobs past retention with their search terms, in bounded batches', async () => {
      const repo = createRetentionRepository(sql);
      const old = await Promise.all([job(400), job(401), job(402)]);
      const recent = await job(10);
      const unfinished = await job(400, false);
      for (const id of old) expect(await termCount(id)).toBeGreaterThan(0);

      // batch of 2: the first call takes the two oldest, the next the rest
      const first = await repo.deleteJobs(daysAgo(365), 2);
      expect(first).toHaveLength(2);
      const second = await repo.deleteJobs(daysAgo(365), 2);
      expect([...first, ...second].sort()).toEqual(expect.arrayContaining([...old].sort()));
      expect(await repo.deleteJobs(daysAgo(365), 2)).toEqual([]);

      for (const id of old) {
        expect(await store.jobs.get(id)).toBeNull();
        expect(await termCount(id)).toBe(0);
      }
      expect(await store.jobs.get(recent)).not.toBeNull();
      expect(await termCount(recent)).toBeGreaterThan(0);
      expect((await store.jobs.get(unfinished))?.status).toBe('queued');
    });

    it('prunes sender history not seen within retention, walking the table a page at a time', async () => {
      const repo = createRetentionRepository(sql);
      const stale = ['a-stale@old.example', 'b-stale@old.example', 'c-stale@old.example'];
      for (const a of stale) await store.senders.record(a, daysAgo(500), false);
      await store.senders.record('fresh@new.example', daysAgo(3), true);
      // seen long ago and again recently: kept
      await store.senders.record('back@old.example', daysAgo(500), false);
      await store.senders.record('back@old.example', daysAgo(1), false);

      let after: string | null = null;
      let deleted = 0;
      let pages = 0;
      do {
        const r = await repo.pruneSenders(daysAgo(365), after, 2);
        deleted += r.deleted;
        after = r.next;
        pages++;
      } while (after !== null && pages < 100);
      expect(pages).toBeGreaterThan(1);
      // the three stale addresses go; the domain's stats are the sum of what stays
      expect(deleted).toBe(3);
      for (const a of stale) expect((await store.senders.get(a)).sender).toBeNull();
      expect((await store.senders.get('fresh@new.example')).sender).not.toBeNull();
      expect((await store.senders.get('back@old.example')).sender?.message_count).toBe(2);
      expect((await store.senders.get('back@old.example')).domain).not.toBeNull();
    });

    it('prunes refresh tokens expired past retention only', async () => {
      const repo = createRetentionRepository(sql);
      const tok = (s: string) => createHash('sha256').update(s).digest('hex');
      const rows = [
        { t: 'expired-long-ago', exp: daysAgo(60) },
        { t: 'expired-yesterday', exp: daysAgo(1) },
        { t: 'valid', exp: new Date(Date.now() + 7 * DAY_MS) },
      ];
      for (const r of rows) {
        await store.refreshTokens.store({
          token_hash: tok(r.t),
          username: 'retention-user',
          family_id: 'fam-retention',
          expires_at: r.exp,
        });
      }
      expect(await repo.pruneRefreshTokens(daysAgo(30), 500)).toBe(1);
      const left = await sql.query<{ token_hash: string }>(
        `SELECT token_hash FROM refresh_tokens WHERE family_id = 'fam-retention'`,
      );
      expect(left.rows.map((r) => r.token_hash).sort()).toEqual(
        [tok('expired-yesterday'), tok('valid')].sort(),
      );
    });
  });
}
