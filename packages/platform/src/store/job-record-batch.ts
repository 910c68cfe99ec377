import {
  FINISH_CASTS,
  finishedJobsTail,
  finishStatement,
  pushFinishValues,
  withSenderOrWithout,
  writeFinished,
} from './job-finish-batch.ts';
import { INSERT_CASTS, type InsertRow, insertRowOf } from './job-insert-batch.ts';
import type { FinishedJob, JobFinish, NewJob } from './repositories.ts';
import { createJobStatementBatcher, valuesRows } from './statement-batch.ts';
import type { SqlClient } from './types.ts';

/** The email text of one statement at most (as the insert batch's default): a larger row goes alone. */
const MAX_EMAIL_CHARS = 8 * 1024 * 1024;

/**
 * Inserts n jobs analysed before they were stored, finished (ADR 024: the inline milter records
 * after its answer), as `jobs.create` then `jobs.finish` would store them: the row with its
 * Email, headline, result (or error), evidence and trace, `started_at` (completed jobs) and
 * `completed_at` the statement's now(); then the same terms, webhook events and sender history as
 * the finish statement (finishedJobsTail), for the rows it inserted. A job id that exists is left
 * as it is (ON CONFLICT DO NOTHING: a row written by an attempt whose answer was lost) and its
 * row is not answered.
 */
function buildRecordSql(n: number, senders: boolean): string {
  return `WITH v (job_id, email_id, workflow_id, email, submitted_by, origin, subject, sender,
      sender_name, recipients, recipient_count, status, result, error, trace, address, domain,
      seen_at, phishing, terms, evidence) AS (
      VALUES ${valuesRows(n, [...INSERT_CASTS, ...FINISH_CASTS])}
    ), ins AS (
      INSERT INTO jobs (job_id, email_id, workflow_id, status, email, submitted_by, origin, subject,
        sender, sender_name, recipients, recipient_count, result, evidence, error, trace,
        started_at, completed_at)
      SELECT job_id, email_id, workflow_id, status, email, submitted_by, origin, subject, sender,
        sender_name, recipients, recipient_count,
        CASE WHEN status = 'completed' THEN result END,
        CASE WHEN status = 'completed' THEN evidence END,
        CASE WHEN status = 'completed' THEN NULL ELSE error END,
        trace, CASE WHEN status = 'completed' THEN now() END, now()
      FROM v
      ON CONFLICT (job_id) DO NOTHING
      RETURNING job_id, email_id, workflow_id, created_at, started_at, completed_at, submitted_by,
        origin, status, result, error, subject, sender, sender_name, recipients, recipient_count
    ), done AS (
      SELECT i.*, NULL::jsonb AS kept_trace, v.address, v.domain, v.seen_at, v.phishing, v.terms
      FROM ins i JOIN v USING (job_id)
    )${finishedJobsTail(senders)}`;
}

/** A record to write: the new job's row and its finish. */
interface Item {
  row: InsertRow;
  finish: JobFinish;
}

const RECORD = finishStatement('job_record', buildRecordSql);

function recordRows(
  sql: SqlClient,
  items: Item[],
  withSenders: boolean,
): Promise<Map<string, FinishedJob | null>> {
  const finishes = items.map((it) => it.finish);
  return writeFinished(sql, RECORD, finishes, withSenders, (params, i) => {
    const it = items[i] as Item;
    params.push(...it.row.params);
    pushFinishValues(params, it.finish, withSenders);
  });
}

/**
 * `jobs.createFinished` with group commit: records of one event-loop turn share one statement
 * (buildRecordSql) that inserts each job finished, indexes its terms, writes its webhook events
 * and records its sender, and answers what `jobs.get` would read back. A job id already stored
 * answers null and changes nothing (its sender is not recorded again). A record whose statement
 * fails for another reason than the connection is written again without its sender: the job is
 * stored and `senderError` says why the sender was not.
 */
export function createJobRecordBatcher(
  sql: SqlClient,
  maxRows = 64,
): (job: NewJob, finish: JobFinish) => Promise<FinishedJob | null> {
  const record = createJobStatementBatcher<Item, FinishedJob>((it) => it.finish.job_id, {
    maxRows,
    maxWeight: MAX_EMAIL_CHARS,
    weight: (it) => (it.row.params[3] as string).length,
    many: (items) => recordRows(sql, items, true),
    one: (it) => withSenderOrWithout(it.finish, (senders) => recordRows(sql, [it], senders)),
  });
  return async (job, finish) => {
    if (job.job_id.toLowerCase() !== finish.job_id.toLowerCase()) {
      throw new TypeError(`job ${job.job_id}: its finish is of job ${finish.job_id}`);
    }
    return record({ row: insertRowOf(job), finish });
  };
}
