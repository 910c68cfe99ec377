import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStore, loadMigrations, migrate, type Store } from '../../src/index.ts';
import type { SqlClient } from '../../src/store/types.ts';
import { newJob, sampleResult, sampleTrace } from '../../src/testing/index.ts';
import type { BatchTarget } from './job-batching.ts';

const ROW_KINDS = ['phish', 'threat', 'action', 'wf', 'by'];

/**
 * Migration 015 (issue 29) on a database that already holds finished jobs: the verdict, threat
 * level, action, workflow and submitter are searched in the job row, the old term rows of those
 * kinds are removed, and every job finished before the upgrade is still found by them. Run on
 * PostgreSQL and PGlite alike. `makeTarget` answers an empty, unmigrated database.
 */
export function searchColumnsUpgradeSuite(
  name: string,
  makeTarget: () => Promise<BatchTarget>,
): void {
  describe(`migration 015, search kinds read from the job row: ${name}`, () => {
    let target: BatchTarget;
    let sql: SqlClient;
    let store: Store;
    const before: { id: string; phishing: boolean }[] = [];
    let queuedId = '';

    /** Finishes a job as the code before 015 did: its row-kind terms written as term rows. */
    async function finishOld(i: number): Promise<{ id: string; phishing: boolean }> {
      const phishing = i % 2 === 0;
      const j = newJob({ workflow_id: i < 3 ? 'deep' : 'default', submitted_by: 'ann' });
      await store.jobs.create(j);
      const result = sampleResult(phishing ? 0.9 : 0.1);
      const f = await store.jobs.finish({
        job_id: j.job_id,
        outcome: { status: 'completed', result, trace: sampleTrace },
        terms: ['from_dom:example.com'],
      });
      expect(f).not.toBeNull();
      const row = (
        await sql.query<{ created_at: unknown }>('SELECT created_at FROM jobs WHERE job_id = $1', [
          j.job_id,
        ])
      ).rows[0];
      for (const [kind, value] of [
        ['phish', String(result.is_phishing)],
        ['threat', result.threat_level],
        ['action', result.recommended_action],
        ['wf', j.workflow_id],
        ['by', 'ann'],
      ]) {
        await sql.query(
          'INSERT INTO job_terms (kind, value, created_at, job_id) VALUES ($1, $2, $3, $4)',
          [kind, value, row?.created_at, j.job_id],
        );
      }
      await new Promise((r) => setTimeout(r, 2));
      return { id: j.job_id, phishing };
    }

    const ids = async (terms: string[]) =>
      (await store.jobs.list({ limit: 50, filters: { terms } })).items.map((x) => x.job_id);

    beforeAll(async () => {
      target = await makeTarget();
      sql = target.sql;
      store = createStore(sql);
      const all = await loadMigrations();
      await migrate(sql, { migrations: all.filter((m) => m.id < '015') });
      for (let i = 0; i < 6; i++) before.push(await finishOld(i));
      const queued = newJob({ workflow_id: 'deep', submitted_by: 'ann' });
      await store.jobs.create(queued);
      queuedId = queued.job_id;
      expect(await migrate(sql)).toContain('015-job-search-columns');
    }, 180_000);
    afterAll(async () => {
      await target?.cleanup();
    });

    it('removes the term rows of the kinds the row now answers, and keeps the others', async () => {
      const r = await sql.query<{ kind: string; n: unknown }>(
        'SELECT kind, count(*) AS n FROM job_terms GROUP BY kind ORDER BY kind',
      );
      expect(r.rows.map((x) => [x.kind, Number(x.n)])).toEqual([['from_dom', 6]]);
      const idx = await sql.query<{ indexname: string }>(
        `SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()
           AND tablename = 'jobs' AND indexname LIKE 'jobs_search_%' ORDER BY indexname`,
      );
      expect(idx.rows.map((x) => x.indexname)).toEqual([
        'jobs_search_action_idx',
        'jobs_search_submitter_idx',
        'jobs_search_threat_idx',
        'jobs_search_verdict_idx',
        'jobs_search_workflow_idx',
      ]);
    });

    it('finds the jobs finished before the upgrade by each of those kinds, newest first', async () => {
      const newest = (pick: (b: { id: string; phishing: boolean }, i: number) => boolean) =>
        before
          .filter(pick)
          .map((b) => b.id)
          .reverse();
      expect(await ids(['phish:true'])).toEqual(newest((b) => b.phishing));
      expect(await ids(['phish:false'])).toEqual(newest((b) => !b.phishing));
      expect(await ids(['threat:high'])).toEqual(newest((b) => b.phishing));
      expect(await ids(['action:allow'])).toEqual(newest((b) => !b.phishing));
      expect(await ids(['wf:deep'])).toEqual(newest((_, i) => i < 3));
      expect(await ids(['by:ann'])).toEqual(newest(() => true));
      expect(await ids(['by:bob'])).toEqual([]);
      expect(await ids(['from_dom:example.com', 'wf:deep', 'phish:true'])).toEqual(
        newest((b, i) => i < 3 && b.phishing),
      );
      // only finished jobs match, as only they had terms
      expect(await ids(['wf:deep'])).not.toContain(queuedId);
    });

    it('finds a job finished after the upgrade without writing a term row of those kinds', async () => {
      const j = newJob({ workflow_id: 'deep', submitted_by: 'cy' });
      await store.jobs.create(j);
      await store.jobs.finish({
        job_id: j.job_id,
        outcome: { status: 'completed', result: sampleResult(0.95), trace: sampleTrace },
        // what an older orchestrator (or a careless caller) may still pass
        terms: ['phish:true', 'threat:high', 'subj:invoice'],
      });
      const kinds = await sql.query<{ kind: string }>(
        'SELECT kind FROM job_terms WHERE job_id = $1 ORDER BY kind',
        [j.job_id],
      );
      expect(kinds.rows.map((x) => x.kind)).toEqual(['subj']);
      for (const k of ROW_KINDS) {
        const r = await sql.query('SELECT 1 FROM job_terms WHERE kind = $1', [k]);
        expect(r.rows).toHaveLength(0);
      }
      expect((await ids(['by:cy', 'wf:deep', 'phish:true', 'threat:high']))[0]).toBe(j.job_id);
      expect(await ids(['subj:invoice', 'by:cy'])).toEqual([j.job_id]);
      const failed = newJob({ workflow_id: 'deep', submitted_by: 'cy' });
      await store.jobs.create(failed);
      await store.jobs.finish({
        job_id: failed.job_id,
        outcome: { status: 'failed', error: { code: 'X', message: 'x' } },
      });
      expect(await ids(['by:cy'])).toEqual([failed.job_id, j.job_id]);
      expect(await ids(['by:cy', 'phish:true'])).toEqual([j.job_id]);
    });
  });
}
