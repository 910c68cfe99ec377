import type { Job } from '@trawl/contracts';
import { PLATFORM_ERRORS, storeConflict } from '../errors.ts';
import type { NewJob } from './repositories.ts';
import { iso, jsonParam } from './rows.ts';
import { preparedName } from './statement-batch.ts';
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

const PARAMS_PER_ROW = 6;
const COLUMNS = 'job_id, email_id, workflow_id, status, email, submitted_by, origin';

/** `($1::uuid, $2, $3, 'queued', $4, $5, $6::jsonb), …` for n rows; memoised by n. */
const statements: string[] = [];
function insertSql(n: number): string {
  let s = statements[n];
  if (s !== undefined) return s;
  const rows: string[] = [];
  for (let i = 0; i < n; i++) {
    const b = i * PARAMS_PER_ROW;
    rows.push(
      `($${b + 1}::uuid, $${b + 2}, $${b + 3}, 'queued', $${b + 4}, $${b + 5}, $${b + 6}::jsonb)`,
    );
  }
  s = `INSERT INTO jobs (${COLUMNS}) VALUES ${rows.join(', ')} RETURNING job_id, created_at`;
  statements[n] = s;
  return s;
}

interface Pending {
  job: NewJob;
  params: unknown[];
  resolve(job: Job): void;
  reject(err: unknown): void;
}

type Created = { job_id: string; created_at: unknown };

function newJobOf(j: NewJob, row: Created): Job {
  return {
    job_id: row.job_id,
    email_id: j.email_id,
    status: 'queued',
    workflow: j.workflow_id,
    created_at: iso(row.created_at),
    started_at: null,
    completed_at: null,
  };
}

function conflictOr(err: unknown, j: NewJob): unknown {
  return (err as { code?: unknown }).code === '23505'
    ? storeConflict(`job ${j.job_id} exists`)
    : err;
}

/** A connection-level failure (pg-client wraps those): the batch is not retried row by row. */
function isUnavailable(err: unknown): boolean {
  return (err as { code?: unknown }).code === PLATFORM_ERRORS.storeUnavailable;
}

/**
 * Collects `jobs.create` calls made in the same event-loop turn and inserts them with one
 * multi-row `INSERT … VALUES (…), (…)` (flushed on setImmediate, or at once when a batch reaches
 * its row or size cap). Each caller gets its own promise and result. When the statement fails for
 * a reason other than the connection (e.g. a duplicate job id), its rows are inserted one by one, in
 * arrival order, so that one bad row fails only its own caller; a connection failure fails every caller of the batch.
 * `created_at` is the database's `now()`: every row of one statement shares it (the listing's order
 * and cursors are on `(created_at, job_id)`, so ties are fine).
 */
export function createJobInsertBatcher(
  sql: SqlClient,
  opts: JobInsertBatchOptions = {},
): (j: NewJob) => Promise<Job> {
  const maxRows = Math.max(1, Math.trunc(opts.maxRows ?? 64));
  const maxBytes = Math.max(1, opts.maxBytes ?? 8 * 1024 * 1024);
  let batch: Pending[] = [];
  let bytes = 0;
  let scheduled = false;

  async function insertOne(p: Pending): Promise<void> {
    try {
      const r = await sql.query<Created>(insertSql(1), p.params, preparedName('job_insert', 1));
      p.resolve(newJobOf(p.job, r.rows[0] as Created));
    } catch (err) {
      p.reject(conflictOr(err, p.job));
    }
  }

  async function insertMany(rows: Pending[]): Promise<void> {
    const params: unknown[] = [];
    for (const p of rows) params.push(...p.params);
    let created: Created[];
    try {
      created = (
        await sql.query<Created>(
          insertSql(rows.length),
          params,
          preparedName('job_insert', rows.length),
        )
      ).rows;
    } catch (err) {
      if (isUnavailable(err)) {
        for (const p of rows) p.reject(err);
        return;
      }
      // One statement is atomic: nothing of it was stored. Row by row, in arrival order (the first
      // of two callers with the same job id wins), each caller its own outcome.
      for (const p of rows) await insertOne(p);
      return;
    }
    const byId = new Map<string, Created>();
    for (const c of created) byId.set(String(c.job_id).toLowerCase(), c);
    for (const p of rows) {
      try {
        const c = byId.get(p.job.job_id.toLowerCase());
        if (!c) throw new Error(`job ${p.job.job_id} was not returned by its insert`);
        p.resolve(newJobOf(p.job, c));
      } catch (err) {
        p.reject(err);
      }
    }
  }

  function flush(): void {
    const rows = batch;
    batch = [];
    bytes = 0;
    if (rows.length === 0) return;
    void (rows.length === 1 ? insertOne(rows[0] as Pending) : insertMany(rows));
  }

  function onImmediate(): void {
    scheduled = false;
    flush();
  }

  return (j) =>
    new Promise<Job>((resolve, reject) => {
      const email = j.email_json ?? (jsonParam(j.email) as string);
      const size = email.length;
      if (batch.length > 0 && bytes + size > maxBytes) flush();
      batch.push({
        job: j,
        params: [
          j.job_id,
          j.email_id,
          j.workflow_id,
          email,
          j.submitted_by ?? null,
          jsonParam(j.origin),
        ],
        resolve,
        reject,
      });
      bytes += size;
      if (batch.length >= maxRows || bytes >= maxBytes) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(onImmediate);
      }
    });
}
