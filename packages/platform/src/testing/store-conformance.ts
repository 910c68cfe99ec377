import { randomUUID } from 'node:crypto';
import type { AnalysisResult, Email, JobSearchFilters, Trace } from '@trawl/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStore } from '../store/create-store.ts';
import { createJobRepository } from '../store/job-repository.ts';
import { loadMigrations, migrate } from '../store/migrate.ts';
import type { NewJob, Store } from '../store/repositories.ts';
import type { SqlClient } from '../store/types.ts';

export interface StoreTarget {
  /** A client on an empty database/schema (not migrated yet). */
  sql: SqlClient;
  /** A second client on the same database/schema (another replica); may be `sql` itself. */
  other: SqlClient;
  cleanup(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const sampleEmail: Email = {
  headers: {
    subject: 'Your invoice',
    sender: 'billing@example.com',
    recipients: ['alice@example.org'],
    date: '2024-05-01T10:00:00Z',
  },
  body_text: 'Please find the invoice attached.',
  analysis_context: {},
};

export function sampleResult(confidence: number): AnalysisResult {
  return {
    is_phishing: confidence >= 0.5,
    threat_level: confidence >= 0.5 ? 'high' : 'none',
    confidence,
    summary: `verdict ${confidence}`,
    recommended_action: confidence >= 0.5 ? 'quarantine' : 'allow',
    indicators: [],
  };
}

export const sampleTrace: Trace = { workflow_id: 'default', duration_ms: 12, stages: [] };

export function newJob(over: Partial<NewJob> = {}): NewJob {
  return {
    job_id: randomUUID(),
    email_id: `em-${randomUUID()}`,
    workflow_id: 'default',
    email: sampleEmail,
    ...over,
  };
}

/**
 * The store conformance suite: PostgreSQL and PGlite must both pass it.
 * `makeTarget` is called once for the suite.
 */
export function storeConformance(name: string, makeTarget: () => Promise<StoreTarget>): void {
  describe(`store conformance: ${name}`, () => {
    let target: StoreTarget;
    let store: Store;
    let other: Store;

    beforeAll(async () => {
      target = await makeTarget();
      store = createStore(target.sql);
      other = createStore(target.other);
    }, 180_000);
    afterAll(async () => {
      await target?.cleanup();
    });

    describe('migrations', () => {
      it('applies every migration once, even when two replicas migrate at the same time', async () => {
        const all = (await loadMigrations()).map((m) => m.id);
        const [a, b] = await Promise.all([migrate(target.sql), migrate(target.other)]);
        expect([...a, ...b].sort()).toEqual(all);
        expect(a.filter((id) => b.includes(id))).toEqual([]);
        const r = await target.sql.query<{ id: string }>(
          'SELECT id FROM trawl_migrations ORDER BY id',
        );
        expect(r.rows.map((x) => x.id)).toEqual(all);
      });

      it('is idempotent: migrating again applies nothing', async () => {
        expect(await migrate(target.sql)).toEqual([]);
        expect(await migrate(target.other)).toEqual([]);
      });

      it('rolls back a failing migration and records nothing of it', async () => {
        const bad = [
          { id: '999-broken', sql: 'CREATE TABLE broken_one (x int); SELECT * FROM nope_table;' },
        ];
        await expect(migrate(target.sql, { migrations: bad })).rejects.toMatchObject({
          code: 'TRAWL_ERR_STORE_MIGRATION',
        });
        const t = await target.sql.query(
          `SELECT 1 FROM information_schema.tables WHERE table_name = 'broken_one'`,
        );
        expect(t.rowCount).toBe(0);
        const m = await target.sql.query(`SELECT 1 FROM trawl_migrations WHERE id = '999-broken'`);
        expect(m.rowCount).toBe(0);
      });
    });

    describe('sql client', () => {
      it('rolls a transaction back when it throws', async () => {
        const job = newJob();
        await expect(
          target.sql.transaction(async (tx) => {
            await createJobRepository(tx).create(job);
            throw new Error('boom');
          }),
        ).rejects.toThrow('boom');
        expect(await store.jobs.get(job.job_id)).toBeNull();
      });

      it('serialises work under an advisory lock across clients', async () => {
        const events: string[] = [];
        const section = (c: SqlClient, who: string) =>
          c.withAdvisoryLock(424242, async () => {
            events.push(`${who}:in`);
            await sleep(50);
            await c.query('SELECT 1');
            events.push(`${who}:out`);
          });
        await Promise.all([
          section(target.sql, 'a'),
          section(target.other, 'b'),
          section(target.sql, 'c'),
        ]);
        expect(events).toHaveLength(6);
        for (let i = 0; i < 6; i += 2) {
          const who = (events[i] as string).split(':')[0];
          expect(events[i + 1]).toBe(`${who}:out`);
        }
      });

      it('answers ping', async () => {
        expect(await target.sql.ping()).toBeGreaterThanOrEqual(0);
      });
    });

    describe('jobs', () => {
      it('creates a queued job and reads it back without result, error or trace', async () => {
        const j = newJob({
          submitted_by: 'alice',
          origin: { retriever: 'imap', message_id: '<m@x>' },
        });
        const created = await store.jobs.create(j);
        expect(created).toMatchObject({
          job_id: j.job_id,
          email_id: j.email_id,
          status: 'queued',
          workflow: 'default',
        });
        expect(Number.isNaN(Date.parse(created.created_at))).toBe(false);
        const got = await store.jobs.get(j.job_id);
        expect(got).toEqual(created);
        expect(got?.result).toBeUndefined();
        expect(await store.jobs.get(randomUUID())).toBeNull();
      });

      it('refuses a duplicate job id', async () => {
        const j = newJob();
        await store.jobs.create(j);
        await expect(store.jobs.create(j)).rejects.toMatchObject({
          code: 'TRAWL_ERR_STORE_CONFLICT',
        });
      });

      it('moves queued → processing → completed once; a redelivery cannot run or overwrite it', async () => {
        const j = newJob();
        await store.jobs.create(j);
        const deadline = new Date(Date.now() + 60_000);
        expect(await store.jobs.markProcessing(j.job_id, deadline, 'v1')).toBe(true);
        expect((await store.jobs.get(j.job_id))?.status).toBe('processing');
        // redelivery after a worker died: processing → processing is allowed
        expect(await store.jobs.markProcessing(j.job_id, deadline)).toBe(true);
        expect(await store.jobs.complete(j.job_id, sampleResult(0.9), sampleTrace)).toBe(true);
        expect(await store.jobs.complete(j.job_id, sampleResult(0.1), sampleTrace)).toBe(false);
        expect(await store.jobs.fail(j.job_id, { code: 'X', message: 'late' })).toBe(false);
        expect(await store.jobs.markProcessing(j.job_id, deadline)).toBe(false);
        const got = await store.jobs.get(j.job_id);
        expect(got?.status).toBe('completed');
        expect(got?.result).toEqual(sampleResult(0.9));
        expect(got?.trace).toEqual(sampleTrace);
        expect(got?.error).toBeUndefined();
        expect(got?.completed_at).toBeTruthy();
        expect(got?.started_at).toBeTruthy();
      });

      it('stores the evidence beside the result and reads it back whole, also from a job stored before', async () => {
        const evidence = { message: { subject: 'Invoice', to: ['a@example.org'] }, urls: [] };
        const withEv = { ...sampleResult(0.9), evidence } as unknown as AnalysisResult;
        const viaComplete = newJob();
        const viaFinish = newJob();
        await store.jobs.create(viaComplete);
        await store.jobs.create(viaFinish);
        expect(await store.jobs.complete(viaComplete.job_id, withEv, sampleTrace)).toBe(true);
        const finished = await store.jobs.finish({
          job_id: viaFinish.job_id,
          outcome: { status: 'completed', result: withEv, trace: sampleTrace },
        });
        expect(finished?.job.result).toEqual(withEv);
        for (const id of [viaComplete.job_id, viaFinish.job_id]) {
          expect((await store.jobs.get(id))?.result).toEqual(withEv);
          // stored in its own column (migration 011), not parsed into the result's jsonb
          const row = await store.sql.query<{ in_result: boolean; evidence: string | null }>(
            `SELECT result ? 'evidence' AS in_result, evidence FROM jobs WHERE job_id = $1`,
            [id],
          );
          expect(row.rows[0]?.in_result).toBe(false);
          expect(JSON.parse(row.rows[0]?.evidence ?? 'null')).toEqual(evidence);
        }
        // a job finished before migration 011 keeps its evidence inside the result
        await store.sql.query(
          `UPDATE jobs SET result = result || jsonb_build_object('evidence', evidence::jsonb),
             evidence = NULL WHERE job_id = $1`,
          [viaComplete.job_id],
        );
        expect((await store.jobs.get(viaComplete.job_id))?.result).toEqual(withEv);
      });

      it('fails a job with an error and keeps it failed', async () => {
        const j = newJob();
        await store.jobs.create(j);
        expect(
          await store.jobs.fail(j.job_id, { code: 'TRAWL_ERR_DEADLINE', message: 'too slow' }),
        ).toBe(true);
        expect(await store.jobs.complete(j.job_id, sampleResult(0.9), sampleTrace)).toBe(false);
        const got = await store.jobs.get(j.job_id);
        expect(got?.status).toBe('failed');
        expect(got?.error).toEqual({ code: 'TRAWL_ERR_DEADLINE', message: 'too slow' });
        expect(got?.result).toBeUndefined();
      });

      it('answers false for transitions of an unknown job', async () => {
        expect(await store.jobs.markProcessing(randomUUID(), new Date())).toBe(false);
        expect(await store.jobs.complete(randomUUID(), sampleResult(0.5), sampleTrace)).toBe(false);
      });

      it('stores exactly one result when two replicas race on the same jobs', async () => {
        const jobs = Array.from({ length: 20 }, () => newJob());
        for (const j of jobs) await store.jobs.create(j);
        const deadline = new Date(Date.now() + 60_000);
        const run = async (s: Store, confidence: number, id: string) => {
          await s.jobs.markProcessing(id, deadline);
          return s.jobs.complete(id, sampleResult(confidence), sampleTrace);
        };
        for (const j of jobs) {
          const [a, b] = await Promise.all([
            run(store, 0.91, j.job_id),
            run(other, 0.11, j.job_id),
          ]);
          expect([a, b].filter(Boolean)).toHaveLength(1);
          const got = await store.jobs.get(j.job_id);
          expect(got?.result?.confidence).toBe(a ? 0.91 : 0.11);
        }
      });

      it('finds jobs processing past their deadline plus grace', async () => {
        const late = newJob();
        const fresh = newJob();
        await store.jobs.create(late);
        await store.jobs.create(fresh);
        const now = new Date();
        await store.jobs.markProcessing(late.job_id, new Date(now.getTime() - 10_000));
        await store.jobs.markProcessing(fresh.job_id, new Date(now.getTime() + 60_000));
        const stuck = await store.jobs.findStuck(now, 5_000, 1000);
        expect(stuck).toContain(late.job_id);
        expect(stuck).not.toContain(fresh.job_id);
        expect(await store.jobs.findStuck(now, 20_000, 1000)).not.toContain(late.job_id);
        await store.jobs.fail(late.job_id, { code: 'TRAWL_ERR_DEADLINE', message: 'deadline' });
        expect(await store.jobs.findStuck(now, 5_000, 1000)).not.toContain(late.job_id);
      });

      it('finds jobs still queued long after they were stored', async () => {
        const old = newJob();
        const started = newJob();
        await store.jobs.create(old);
        await store.jobs.create(started);
        await store.jobs.markProcessing(started.job_id, new Date(Date.now() + 60_000));
        const later = new Date(Date.now() + 3_600_000);
        const found = await store.jobs.findUndispatched(later, 60_000, 100_000);
        expect(found).toContain(old.job_id);
        expect(found).not.toContain(started.job_id);
        expect(await store.jobs.findUndispatched(later, 7_200_000, 100_000)).not.toContain(
          old.job_id,
        );
        await store.jobs.fail(old.job_id, { code: 'TRAWL_ERR_NOT_DISPATCHED', message: 'lost' });
        expect(await store.jobs.findUndispatched(later, 60_000, 100_000)).not.toContain(old.job_id);
      });

      it('counts jobs by status', async () => {
        const counts = await store.jobs.countByStatus();
        expect(Object.keys(counts).sort()).toEqual(['completed', 'failed', 'processing', 'queued']);
        expect(counts.completed).toBeGreaterThan(0);
      });

      it('removes a job', async () => {
        const j = newJob();
        await store.jobs.create(j);
        await store.jobs.remove(j.job_id);
        expect(await store.jobs.get(j.job_id)).toBeNull();
      });
    });

    describe('job listing', () => {
      const wf = `list-${randomUUID().slice(0, 8)}`;
      it('pages newest first with an opaque cursor, ties included, no row twice or missed', async () => {
        await target.sql.query('DELETE FROM jobs');
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) {
          const j = newJob({ workflow_id: wf });
          ids.push(j.job_id);
          await store.jobs.create(j);
          await sleep(2);
        }
        // seven jobs with the very same created_at (one transaction: now() is fixed)
        await target.sql.transaction(async (tx) => {
          for (let i = 0; i < 7; i++) {
            const j = newJob({ workflow_id: wf });
            ids.push(j.job_id);
            await createJobRepository(tx).create(j);
          }
        });
        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await store.jobs.list(
            cursor === undefined ? { limit: 3 } : { limit: 3, cursor },
          );
          seen.push(...page.items.map((x) => x.job_id));
          cursor = page.next_cursor ?? undefined;
          pages++;
        } while (cursor !== undefined && pages < 20);
        expect(seen).toHaveLength(12);
        expect(new Set(seen)).toEqual(new Set(ids));
        const all = await store.jobs.list({ limit: 100 });
        expect(all.next_cursor).toBeNull();
        expect(all.items.map((x) => x.job_id)).toEqual(seen);
        const times = all.items.map((x) => Date.parse(x.created_at));
        expect([...times].sort((a, b) => b - a)).toEqual(times);
      });

      it('filters by status', async () => {
        const first = (await store.jobs.list({ limit: 1 })).items[0];
        expect(first).toBeDefined();
        await store.jobs.fail(first?.job_id as string, { code: 'X', message: 'x' });
        const failed = await store.jobs.list({ limit: 50, status: 'failed' });
        expect(failed.items.map((x) => x.job_id)).toEqual([first?.job_id]);
        const queued = await store.jobs.list({ limit: 50, status: 'queued' });
        expect(queued.items).toHaveLength(11);
      });

      it('searches finished jobs by their terms, newest first, page by page', async () => {
        await target.sql.query('DELETE FROM jobs');
        await target.sql.query('DELETE FROM job_terms');
        const made: { id: string; phishing: boolean }[] = [];
        for (let i = 0; i < 7; i++) {
          const j = newJob({ workflow_id: i < 5 ? 'default' : 'deep', submitted_by: 'ann' });
          await store.jobs.create(j);
          const phishing = i % 2 === 0;
          const terms = ['from:billing@example.com', 'from_dom:example.com', 'subj:invoice'];
          if (phishing) terms.push('phish:true', 'url:evil.example');
          else terms.push('phish:false');
          const f = await store.jobs.finish({
            job_id: j.job_id,
            outcome: {
              status: 'completed',
              result: sampleResult(phishing ? 0.9 : 0.1),
              trace: sampleTrace,
            },
            terms,
          });
          expect(f).not.toBeNull();
          made.push({ id: j.job_id, phishing });
          await sleep(2);
        }
        const unfinished = newJob();
        await store.jobs.create(unfinished);
        const newest = made.map((m) => m.id).reverse();
        const ids = async (filters: JobSearchFilters, limit = 50) =>
          (await store.jobs.list({ limit, filters })).items.map((x) => x.job_id);
        expect(await ids({ terms: ['from_dom:example.com'] })).toEqual(newest);
        expect(await ids({ terms: ['phish:true'] })).toEqual(
          made
            .filter((m) => m.phishing)
            .map((m) => m.id)
            .reverse(),
        );
        expect(await ids({ terms: ['url:evil.example', 'wf:deep'] })).toEqual([made[6]?.id]);
        expect(await ids({ terms: ['by:ann', 'subj:invoice', 'phish:false'] })).toHaveLength(3);
        expect(await ids({ terms: ['subj:nothing'] })).toEqual([]);
        expect(await ids({ terms: ['from_dom:example.com'], status: 'queued' })).toEqual([]);
        expect(await ids({ email_id: unfinished.email_id })).toEqual([unfinished.job_id]);
        const firstAt = (await store.jobs.get(made[3]?.id as string))?.created_at as string;
        expect(await ids({ terms: ['wf:default'], since: firstAt })).toEqual([
          made[4]?.id,
          made[3]?.id,
        ]);
        expect(await ids({ terms: ['wf:default'], until: firstAt })).toEqual([
          made[2]?.id,
          made[1]?.id,
          made[0]?.id,
        ]);
        // pages of a search keep its filters and do not overlap
        const seen: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await store.jobs.list({
            limit: 2,
            filters: { terms: ['from:billing@example.com'] },
            ...(cursor ? { cursor } : {}),
          });
          seen.push(...page.items.map((x) => x.job_id));
          cursor = page.next_cursor ?? undefined;
        } while (cursor !== undefined && seen.length < 20);
        expect(seen).toEqual(newest);
      });

      it('lists each job with its subject, sender, recipients, reporter and top indicator', async () => {
        const email: Email = {
          ...sampleEmail,
          headers: {
            ...sampleEmail.headers,
            subject: 'Overdue invoice 4471',
            sender: 'billing@vendor.example',
            recipients: ['a@corp.example', 'b@corp.example'],
            cc: ['c@corp.example', 'd@corp.example'],
            bcc: ['e@corp.example'],
            raw_headers: { from: '"Vendor Billing" <billing@vendor.example>' },
          },
        };
        const report = {
          reporter: 'ann@corp.example',
          reported_at: '2026-11-01T09:00:00.000Z',
          wrapper_subject: 'FW: Overdue invoice 4471',
          found: 'rfc822' as const,
        };
        const reported = newJob({ email, origin: { report } });
        const plain = newJob({
          email_json: JSON.stringify(email),
          headline: { subject: 'Given', sender: 'x@y.example', recipients: [], recipient_count: 0 },
        });
        delete plain.email;
        const created = await store.jobs.create(reported);
        await store.jobs.create(plain);
        const headline = {
          subject: 'Overdue invoice 4471',
          sender: 'billing@vendor.example',
          sender_name: 'Vendor Billing',
          recipients: ['a@corp.example', 'b@corp.example', 'c@corp.example'],
          recipient_count: 5,
        };
        expect(created).toMatchObject({ ...headline, reporter: report.reporter });
        const result = {
          ...sampleResult(0.9),
          indicators: [
            { type: 'urgency_language', value: 'overdue', confidence: 0.6 },
            { type: 'reply_to_mismatch', value: 'Reply-To elsewhere', confidence: 0.8 },
            { type: 'credential_request', value: 'sign in', confidence: 0.8 },
          ],
        };
        const finished = await store.jobs.finish({
          job_id: reported.job_id,
          outcome: { status: 'completed', result, trace: sampleTrace },
        });
        const top = { type: 'reply_to_mismatch', value: 'Reply-To elsewhere', confidence: 0.8 };
        expect(finished?.job).toMatchObject({ ...headline, top_indicator: top });
        const items = (await store.jobs.list({ limit: 2 })).items;
        const byId = new Map(items.map((j) => [j.job_id, j]));
        expect(byId.get(reported.job_id)).toMatchObject({
          ...headline,
          reporter: report.reporter,
          report,
          top_indicator: top,
        });
        expect(byId.get(plain.job_id)).toMatchObject({ subject: 'Given', recipient_count: 0 });
        expect(byId.get(plain.job_id)?.top_indicator).toBeUndefined();
        expect(await store.jobs.get(reported.job_id)).toMatchObject(headline);
      });

      it('rejects a forged cursor as bad input', async () => {
        for (const c of ['nope', Buffer.from('["x","y"]').toString('base64url'), '']) {
          await expect(store.jobs.list({ limit: 5, cursor: c })).rejects.toMatchObject({
            code: 'TRAWL_ERR_STORE_BAD_CURSOR',
            status: 400,
          });
        }
      });
    });

    describe('users', () => {
      it('creates, reads, updates, lists, counts and removes users', async () => {
        const before = await store.users.count();
        const u = await store.users.create({
          username: 'ann',
          password_hash: 'scrypt$x',
          roles: ['analyst'],
        });
        expect(u).toMatchObject({ username: 'ann', roles: ['analyst'], disabled: false });
        await expect(
          store.users.create({ username: 'ann', password_hash: 'h', roles: [] }),
        ).rejects.toMatchObject({ code: 'TRAWL_ERR_STORE_CONFLICT' });
        expect((await store.users.get('ann'))?.password_hash).toBe('scrypt$x');
        const upd = await store.users.update('ann', { roles: ['admin', 'viewer'], disabled: true });
        expect(upd).toMatchObject({ roles: ['admin', 'viewer'], disabled: true });
        expect((await store.users.get('ann'))?.password_hash).toBe('scrypt$x');
        expect(await store.users.update('nobody', { disabled: true })).toBeNull();
        expect((await store.users.list()).map((x) => x.username)).toContain('ann');
        expect(await store.users.count()).toBe(before + 1);
        expect(await store.users.remove('ann')).toBe(true);
        expect(await store.users.remove('ann')).toBe(false);
        expect(await store.users.get('ann')).toBeNull();
      });

      it('moves auth_version on with every change of access; a rehash keeps it', async () => {
        await store.users.create({ username: 'vera', password_hash: 'old', roles: ['viewer'] });
        const v1 = (await store.users.get('vera'))?.auth_version as number;
        expect(await store.users.accessVersion('vera')).toBe(v1);
        await store.users.update('vera', { roles: ['analyst'] });
        expect(await other.users.accessVersion('vera')).toBe(v1 + 1);
        expect(await store.users.rehash('vera', 'stale', 'new')).toBe(false);
        expect(await store.users.rehash('vera', 'old', 'new')).toBe(true);
        expect((await store.users.get('vera'))?.password_hash).toBe('new');
        expect(await store.users.accessVersion('vera')).toBe(v1 + 1);
        await store.users.update('vera', { disabled: true });
        expect(await store.users.accessVersion('vera')).toBeNull();
        await store.users.update('vera', { disabled: false });
        expect(await store.users.accessVersion('vera')).toBe(v1 + 3);
        await store.users.remove('vera');
        expect(await store.users.accessVersion('vera')).toBeNull();
      });
    });

    describe('refresh tokens', () => {
      const future = () => new Date(Date.now() + 3600_000);
      /** Stores a refresh token of `username` (bob by default), valid for an hour unless told. */
      const issue = (
        token_hash: string,
        family_id: string,
        username = 'bob',
        expires_at = future(),
      ) => store.refreshTokens.store({ token_hash, username, family_id, expires_at });
      const use = (hash: string, s: Store = store) => s.refreshTokens.consume(hash, new Date());

      it('is single use', async () => {
        await issue('h-single', 'f1');
        expect(await use('h-single')).toEqual({ username: 'bob', family_id: 'f1' });
        expect(await use('h-single')).toBeNull();
        expect(await use('h-unknown')).toBeNull();
      });

      it('revokes the whole family when a used token is presented again', async () => {
        await issue('h-a1', 'fam-a');
        expect(await use('h-a1')).not.toBeNull();
        // the legitimate client rotated to h-a2
        await issue('h-a2', 'fam-a');
        // the thief replays h-a1
        expect(await use('h-a1')).toBeNull();
        // now h-a2 is dead too
        expect(await use('h-a2')).toBeNull();
      });

      it('refuses an expired token', async () => {
        await issue('h-old', 'f-old', 'bob', new Date(Date.now() - 1000));
        expect(await use('h-old')).toBeNull();
      });

      it('lets exactly one of two concurrent uses win', async () => {
        for (let i = 0; i < 10; i++) {
          const h = `h-race-${i}`;
          await issue(h, `f-race-${i}`);
          const [a, b] = await Promise.all([use(h), use(h, other)]);
          expect([a, b].filter((x) => x !== null)).toHaveLength(1);
        }
      });

      it('revokes every token of a user', async () => {
        await issue('h-u1', 'fc', 'carol');
        await store.refreshTokens.revokeUser('carol');
        expect(await use('h-u1')).toBeNull();
      });
    });

    describe('audit log', () => {
      /** Appends a successful action with no address or request id. */
      const record = (actor: string | null, action: string, target: string | null) =>
        store.audit.append({
          actor,
          action,
          target,
          outcome: 'success',
          address: null,
          request_id: null,
        });

      it('appends and lists newest first with cursor and filters', async () => {
        for (let i = 0; i < 5; i++) {
          await store.audit.append({
            actor: i % 2 ? 'admin' : 'ann',
            action: i < 3 ? 'config.reload' : 'user.create',
            target: `t${i}`,
            outcome: 'success',
            address: '127.0.0.1',
            request_id: `r${i}`,
            ...(i === 0 ? { details: { changed: ['a'] } } : {}),
          });
        }
        const p1 = await store.audit.list({ limit: 2 });
        expect(p1.items.map((x) => x.target)).toEqual(['t4', 't3']);
        expect(p1.next_cursor).not.toBeNull();
        const p2 = await store.audit.list({ limit: 10, cursor: p1.next_cursor as string });
        expect(p2.items.map((x) => x.target)).toEqual(['t2', 't1', 't0']);
        expect(p2.items[2]?.details).toEqual({ changed: ['a'] });
        expect(p2.next_cursor).toBeNull();
        expect((await store.audit.list({ limit: 10, action: 'user.create' })).items).toHaveLength(
          2,
        );
        expect((await store.audit.list({ limit: 10, actor: 'admin' })).items).toHaveLength(2);
      });

      it('lists newest first by number once ids pass 999 (not by their text)', async () => {
        await target.sql.query(`SELECT setval(pg_get_serial_sequence('audit_log', 'id'), 995)`);
        for (let i = 0; i < 8; i++) {
          await record('seq', 'test.seq', `n${i}`);
        }
        const page = await store.audit.list({ limit: 3, action: 'test.seq' });
        expect(page.items.map((x) => x.target)).toEqual(['n7', 'n6', 'n5']);
        expect(page.items.map((x) => x.id)).toEqual(['1003', '1002', '1001']);
        const rest = await store.audit.list({
          limit: 10,
          action: 'test.seq',
          cursor: page.next_cursor as string,
        });
        expect(rest.items.map((x) => x.id)).toEqual(['1000', '999', '998', '997', '996']);
      });

      it('chains every row to the one before it; concurrent appends from two replicas keep one chain', async () => {
        const entry = (i: number, who: string) => ({
          actor: who,
          action: 'test.chain',
          target: `c${i}`,
          outcome: 'failure' as const,
          address: '192.0.2.1',
          request_id: `rq${i}`,
          // attacker-chosen text: NUL and a lone surrogate are stored as visible escapes (ADR 014),
          // the hash agrees
          details: { z: 1, a: { y: [1, 'x\u0000y'], b: 'lone \ud800' }, n: 0.1 },
        });
        await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            (i % 2 ? other : store).audit.append(entry(i, i % 2 ? 'b' : 'a')),
          ),
        );
        const v = await store.audit.verify();
        expect(v).toMatchObject({ ok: true });
        expect(v.checked).toBeGreaterThanOrEqual(12 + 8 + 5);
        const newest = (await store.audit.list({ limit: 1 })).items[0];
        expect(newest?.hash).toBe(v.head.hash);
        expect(newest?.details).toEqual({
          z: 1,
          a: { y: [1, 'x\\u0000y'], b: 'lone \\ud800' },
          n: 0.1,
        });
      });

      it('verify finds an edited row, a removed row and a removed head; retention moves the anchor past them', async () => {
        const ids = (await store.audit.list({ limit: 4, action: 'test.chain' })).items.map(
          (x) => x.id,
        );
        const [head, , , older] = ids as [string, string, string, string];
        await target.sql.query(`UPDATE audit_log SET details = '{"z":2}'::jsonb WHERE id = $1`, [
          older,
        ]);
        expect((await store.audit.verify()).broken).toMatchObject({
          id: older,
          reason: expect.stringContaining('content'),
        });
        await target.sql.query('DELETE FROM audit_log WHERE id = $1', [older]);
        const afterDelete = await store.audit.verify();
        expect(afterDelete.ok).toBe(false);
        expect(afterDelete.broken?.reason).toContain('prev_hash');
        await target.sql.query('DELETE FROM audit_log WHERE id = $1', [head]);
        // retention purges everything older than now: the anchor moves to the newest purged row
        const purged = await store.audit.purge(new Date(Date.now() + 1000));
        expect(purged).toBeGreaterThan(0);
        expect((await store.audit.list({ limit: 10 })).items).toEqual([]);
        // the chain's head row itself was deleted: the purge cannot vouch for it
        const v = await store.audit.verify();
        expect(v.ok).toBe(false);
        await record(null, 'test.after-purge', null);
        expect(await store.audit.purge(new Date(Date.now() - 3_600_000))).toBe(0);
      });

      it('after a retention purge the remaining chain still verifies', async () => {
        for (let i = 0; i < 3; i++) {
          await record('r', 'test.retained', `r${i}`);
        }
        // purge everything but the newest three rows
        const rows = (await store.audit.list({ limit: 4 })).items;
        const cutoff = rows[3]?.at as string;
        await target.sql.query(`UPDATE audit_log SET at = at - interval '1 day' WHERE id <= $1`, [
          rows[3]?.id,
        ]);
        expect(await store.audit.purge(new Date(cutoff))).toBeGreaterThan(0);
        const v = await store.audit.verify();
        expect(v).toMatchObject({ ok: true, checked: 3, anchor: { id: rows[3]?.id } });
      });
    });

    describe('configuration versions', () => {
      it('records versions idempotently and answers the latest', async () => {
        expect(await store.configVersions.latest()).toBeNull();
        const record = (version: string, service_yaml: string, actor: string | null) =>
          store.configVersions.record({ version, service_yaml, workflows_yaml: 'b', actor });
        await record('v1', 'a', null);
        await record('v2', 'a2', 'admin');
        await record('v2', 'a2', 'admin');
        expect((await store.configVersions.latest())?.version).toBe('v2');
        const n = await target.sql.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM config_versions',
        );
        expect(n.rows[0]?.n).toBe(2);
        // a revert to v1 makes v1 the latest again
        await record('v1', 'a', 'admin');
        expect((await store.configVersions.latest())?.version).toBe('v1');
      });
    });

    describe('sender history', () => {
      it('counts messages per sender and per domain', async () => {
        const t0 = new Date('2024-01-01T00:00:00Z');
        const t1 = new Date('2024-02-01T00:00:00Z');
        await store.senders.record('Eve@Evil.example', t1, true);
        await store.senders.record('eve@evil.example', t0, false);
        await store.senders.record('mallory@evil.example', t1, null);
        const r = await store.senders.get('EVE@evil.example');
        expect(r.sender).toEqual({
          address: 'eve@evil.example',
          first_seen: t0.toISOString(),
          last_seen: t1.toISOString(),
          message_count: 2,
          phishing_count: 1,
        });
        expect(r.domain).toMatchObject({
          address: '@evil.example',
          message_count: 3,
          phishing_count: 1,
        });
        const none = await store.senders.get('nobody@nowhere.example');
        expect(none).toEqual({ sender: null, domain: null });
      });
    });
  });
}
