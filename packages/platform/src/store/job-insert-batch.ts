import { headlineOf, type Job } from '@trawl/contracts';
import { storeConflict } from '../errors.ts';
import type { NewJob } from './repositories.ts';
import { iso, jsonParam } from './rows.ts';
import { createStatementBatcher, memoByRows, preparedName } from './statement-batch.ts';
import { storableJson } from './storable-text.ts';
import type { SqlClient } from './types.ts';

/** Group commit of job inserts (ADR 005): caps of one multi-row statement. */
export interface JobInsertBatchOptions {
  /** Rows per statement (default 64; 1 turns grouping off). */
  maxRows?: number;
  /**
   * Email text per statement, in UTF-16 code units (about bytes for mail, which is mostly ASCII;
   * default 8 MiB). A batch is flushed before a row would take it past this; a larger row goes alone.
   */
  maxBytes?: number;
}

const PARAMS_PER_ROW = 11;
const COLUMNS = `job_id, email_id, workflow_id, status, email, submitted_by, origin, subject, sender,
  sender_name, recipients, recipient_count`;

/** `($1::uuid, $2, $3, 'queued', $4, $5, $6::jsonb, $7, …), …` for n rows; memoised by n. */
const insertSql = memoByRows((n) => {
  const rows: string[] = [];
  for (let i = 0; i < n; i++) {
    const b = i * PARAMS_PER_ROW;
    rows.push(
      `($${b + 1}::uuid, $${b + 2}, $${b + 3}, 'queued', $${b + 4}, $${b + 5}, $${b + 6}::jsonb, ` +
        `$${b + 7}, $${b + 8}, $${b + 9}, $${b + 10}::jsonb, $${b + 11}::int)`,
    );
  }
  return `INSERT INTO jobs (${COLUMNS}) VALUES ${rows.join(', ')} RETURNING job_id, created_at`;
});

/**
 * The casts of a row's parameters (insertRowOf), in order: job_id, email_id, workflow_id, email,
 * submitted_by, origin, subject, sender, sender_name, recipients, recipient_count.
 */
export const INSERT_CASTS = [
  'uuid',
  'text',
  'text',
  'text',
  'text',
  'jsonb',
  'text',
  'text',
  'text',
  'jsonb',
  'int',
] as const;

/** A job to insert with its statement parameters (the Email text computed once). */
export interface InsertRow {
  job: NewJob;
  params: unknown[];
}

type Created = { job_id: string; created_at: unknown };

function newJobOf(j: NewJob, row: Created): Job {
  const job: Job = {
    job_id: row.job_id,
    email_id: j.email_id,
    status: 'queued',
    workflow: j.workflow_id,
    created_at: iso(row.created_at),
    started_at: null,
    completed_at: null,
    ...j.headline,
  };
  const reporter = j.origin?.report?.reporter;
  if (j.origin?.report) job.report = j.origin.report;
  if (reporter) job.reporter = reporter;
  return job;
}

/** A new job's row: its statement parameters (INSERT_CASTS) and the job with its headline. */
export function insertRowOf(j: NewJob): InsertRow {
  if (j.email_json === undefined && j.email === undefined)
    throw new TypeError(`job ${j.job_id}: neither email nor email_json`);
  const email =
    j.email_json === undefined ? (jsonParam(j.email) as string) : storableJson(j.email_json);
  // what the list shows (issue 32): given by the caller, else read from the Email
  const h = j.headline ?? (j.email ? headlineOf(j.email) : undefined);
  const job = h && !j.headline ? { ...j, headline: h } : j;
  return {
    job,
    params: [
      j.job_id,
      j.email_id,
      j.workflow_id,
      email,
      j.submitted_by ?? null,
      jsonParam(j.origin),
      h?.subject ?? null,
      h?.sender ?? null,
      h?.sender_name ?? null,
      h ? jsonParam(h.recipients) : null,
      h?.recipient_count ?? null,
    ],
  };
}

/**
 * Collects `jobs.create` calls made in the same event-loop turn and inserts them with one
 * multi-row `INSERT … VALUES (…), (…)` (createStatementBatcher: flushed on setImmediate, or at once
 * when a batch reaches its row or size cap). Each caller gets its own promise and result. When the
 * statement fails for a reason other than the connection (e.g. a duplicate job id), its rows are
 * inserted one by one, in arrival order, so that one bad row fails only its own caller (the first
 * of two callers with the same job id wins); a connection failure fails every caller of the batch.
 * `created_at` is the database's `now()`: every row of one statement shares it (the listing's order
 * and cursors are on `(created_at, job_id)`, so ties are fine).
 */
export function createJobInsertBatcher(
  sql: SqlClient,
  opts: JobInsertBatchOptions = {},
): (j: NewJob) => Promise<Job> {
  const insert = createStatementBatcher<InsertRow, Job>({
    maxRows: opts.maxRows ?? 64,
    maxWeight: Math.max(1, opts.maxBytes ?? 8 * 1024 * 1024),
    weight: (r) => (r.params[3] as string).length,
    key: (r) => r.job.job_id.toLowerCase(),
    keepRepeatedKeys: true,
    async many(rows) {
      const params: unknown[] = [];
      for (const r of rows) params.push(...r.params);
      const created = await sql.query<Created>(
        insertSql(rows.length),
        params,
        preparedName('job_insert', rows.length),
      );
      const byId = new Map<string, Created>();
      for (const c of created.rows) byId.set(String(c.job_id).toLowerCase(), c);
      const out = new Map<string, Job>();
      for (const r of rows) {
        const c = byId.get(r.job.job_id.toLowerCase());
        if (c) out.set(r.job.job_id.toLowerCase(), newJobOf(r.job, c));
      }
      return out;
    },
    async one(r) {
      try {
        const res = await sql.query<Created>(insertSql(1), r.params, preparedName('job_insert', 1));
        return newJobOf(r.job, res.rows[0] as Created);
      } catch (err) {
        throw (err as { code?: unknown }).code === '23505'
          ? storeConflict(`job ${r.job.job_id} exists`)
          : err;
      }
    },
    onAbsent(r) {
      throw new Error(`job ${r.job.job_id} was not returned by its insert`);
    },
  });
  return async (j) => insert(insertRowOf(j));
}
