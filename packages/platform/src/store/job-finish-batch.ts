import { type Job, ROW_TERM_KINDS } from '@trawl/contracts';
import type { FinishedJob, JobFinish } from './repositories.ts';
import {
  HEADLINE_COLUMNS,
  type HeadlineRow,
  headlineFields,
  iso,
  isoOrNull,
  json,
  jsonParam,
  splitEvidence,
} from './rows.ts';
import { senderKey, senderUpsertSql } from './sender-history-repository.ts';
import {
  createJobStatementBatcher,
  isUnavailable,
  memoByRows,
  preparedName,
  valuesRows,
} from './statement-batch.ts';
import type { SqlClient } from './types.ts';

/** The casts of pushFinishValues's values, in order. */
export const FINISH_CASTS = [
  'text',
  'jsonb',
  'jsonb',
  'jsonb',
  'text',
  'text',
  'timestamptz',
  'int',
  'jsonb',
  'text',
];

/**
 * Indexes the search terms of the jobs the statement changed (job search, issue 16): the terms the
 * caller computed (`kind:value`) and the row's reporter (origin.report). The workflow, submitter,
 * verdict, threat level and action are searched in the row itself (migration 015), so no term of
 * theirs is written (pushParams drops any the caller passes).
 * A job's terms are written once, by the statement that finishes it (the UPDATE above only changes
 * an unfinished job), and made distinct here: a plain insert, without ON CONFLICT, whose
 * speculative insertion made this the dearest part of the statement (about 40% more than a plain
 * insert for 26 terms a job, docs/benchmarks.md). Campaigns and feedback add kinds of their own
 * (`camp`, `fb`) later, never in this statement.
 */
const INDEX_TERMS = `, indexed AS (
      INSERT INTO job_terms (kind, value, created_at, job_id)
      SELECT DISTINCT split_part(x.t, ':', 1), substr(x.t, strpos(x.t, ':') + 1), d.created_at,
        d.job_id
      FROM done d, LATERAL (
        SELECT jsonb_array_elements_text(COALESCE(d.terms, '[]'::jsonb)) AS t
        UNION ALL SELECT 'reporter:' || left(lower(d.origin->'report'->>'reporter'), 200)
          WHERE d.origin->'report'->>'reporter' IS NOT NULL
      ) x
      WHERE strpos(x.t, ':') > 1
    )`;

/**
 * Webhook events of the jobs the statement changed (issue 17): `job.completed` or `job.failed`,
 * carrying the job's subject, sender and reporter (issue 32: a SOAR need not call back for them),
 * and `verdict.phishing` for a phishing verdict, each stored with one delivery per enabled endpoint
 * subscribed to it, in the same statement as the job's result: a finished job's events cannot be
 * lost (no window between the result and the outbox). With no subscribed endpoint, nothing is
 * written (one lookup of a small table per row).
 */
const WEBHOOK_EVENTS = `, hook_events AS (
      INSERT INTO webhook_events (id, type, payload)
      SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), x.type,
        jsonb_build_object('type', x.type,
          'timestamp', to_char(d.completed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'data', jsonb_strip_nulls(jsonb_build_object(
            'job_id', d.job_id, 'email_id', d.email_id, 'workflow', d.workflow_id,
            'status', d.status, 'submitted_by', d.submitted_by,
            'subject', d.subject, 'sender', d.sender,
            'reporter', d.origin->'report'->>'reporter',
            'created_at', to_char(d.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'completed_at', to_char(d.completed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'result', CASE WHEN d.status = 'completed' THEN d.result - 'evidence' END,
            'error', CASE WHEN d.status = 'failed' THEN d.error END)))
      FROM done d, LATERAL (
        SELECT 'job.' || d.status AS type
        UNION ALL SELECT 'verdict.phishing'
          WHERE d.status = 'completed' AND (d.result ->> 'is_phishing') = 'true'
      ) x
      WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.enabled AND x.type = ANY (e.events))
      RETURNING id, type
    ), hook_deliveries AS (
      INSERT INTO webhook_deliveries (event_id, endpoint_id)
      SELECT h.id, e.id FROM hook_events h
      JOIN webhook_endpoints e ON e.enabled AND h.type = ANY (e.events)
    )`;

/**
 * What follows `done` (the jobs a statement finished, with their finish values) in a statement
 * that finishes jobs: their terms, their webhook events and, with `senders`, their senders recorded
 * (as `senders.record`, one row per address however many of its jobs the statement holds, in
 * address order so that concurrent statements lock rows in one order); then it answers the rows.
 */
export function finishedJobsTail(senders: boolean, webhooks = true): string {
  const record = senders
    ? `, recorded AS (${senderUpsertSql(`SELECT address, min(domain), min(seen_at), max(seen_at), count(*), sum(phishing)
         FROM done WHERE address IS NOT NULL GROUP BY address ORDER BY address`)})`
    : '';
  return `${INDEX_TERMS}${webhooks ? WEBHOOK_EVENTS : ''}${record}
    SELECT job_id, email_id, workflow_id, created_at, started_at, completed_at, kept_trace,
      origin->'report' AS report, ${HEADLINE_COLUMNS('done')} FROM done`;
}

/**
 * completes or fails n unfinished jobs (as `complete` and `fail` do, row by row) and, with `senders`,
 * records the senders of the jobs it changed (finishedJobsTail).
 */
/** `webhooks: false` leaves the webhook events out (only bench/webhooks measures it so). */
export function buildFinishSql(n: number, senders: boolean, webhooks = true): string {
  return `WITH v (job_id, status, result, error, trace, address, domain, seen_at, phishing, terms,
      evidence) AS (
      VALUES ${valuesRows(n, ['uuid', ...FINISH_CASTS])}
    ), done AS (
      UPDATE jobs AS j SET status = v.status,
        result = CASE WHEN v.status = 'completed' THEN v.result ELSE j.result END,
        evidence = CASE WHEN v.status = 'completed' THEN v.evidence ELSE j.evidence END,
        error = CASE WHEN v.status = 'completed' THEN NULL ELSE v.error END,
        trace = CASE WHEN v.status = 'completed' THEN v.trace ELSE COALESCE(v.trace, j.trace) END,
        started_at = CASE WHEN v.status = 'completed' THEN COALESCE(j.started_at, now())
          ELSE j.started_at END,
        completed_at = now()
      FROM v WHERE j.job_id = v.job_id AND j.status IN ('queued', 'processing')
      RETURNING j.job_id, j.email_id, j.workflow_id, j.created_at, j.started_at, j.completed_at,
        CASE WHEN v.trace IS NULL THEN j.trace END AS kept_trace,
        v.address, v.domain, v.seen_at, v.phishing, v.terms, j.submitted_by, j.origin, j.status,
        j.result, j.error, ${HEADLINE_COLUMNS('j')}
    )${finishedJobsTail(senders, webhooks)}`;
}

/** The terms to index as JSON, without the kinds searched in the row (ROW_TERM_KINDS); or null. */
function termsParam(terms: readonly string[] | undefined): string | null {
  if (!terms || terms.length === 0) return null;
  const kept = terms.filter((t) => !ROW_TERM_KINDS.has(t.slice(0, t.indexOf(':'))));
  return kept.length > 0 ? jsonParam(kept) : null;
}

/** Appends one finished job's values to a batch statement's parameters. */
export function pushParams(params: unknown[], f: JobFinish, withSender: boolean): void {
  params.push(f.job_id);
  pushFinishValues(params, f, withSender);
}

/**
 * Appends one finished job's values but its id (status, result, error, trace, sender address,
 * domain, time and verdict, terms, evidence: FINISH_CASTS) to a batch statement's parameters.
 */
export function pushFinishValues(params: unknown[], f: JobFinish, withSender: boolean): void {
  const o = f.outcome;
  const sender = withSender && f.sender ? f.sender : undefined;
  const k = sender ? senderKey(sender.address) : undefined;
  const stored = o.status === 'completed' ? splitEvidence(o.result) : undefined;
  params.push(
    o.status,
    stored ? stored.result : null,
    o.status === 'failed' ? jsonParam(o.error) : null,
    jsonParam(o.trace),
    k?.address ?? null,
    k?.domain ?? null,
    sender?.at ?? null,
    sender?.is_phishing === true ? 1 : 0,
    termsParam(f.terms),
    stored ? stored.evidence : null,
  );
}

/** A row answered by a statement that finishes jobs (finishedJobsTail). */
interface FinishedRow extends HeadlineRow {
  job_id: string;
  email_id: string;
  workflow_id: string;
  created_at: unknown;
  started_at: unknown;
  completed_at: unknown;
  kept_trace: unknown;
}

/** The stored job, as `jobs.get` would read it back: the row's columns and what was written. */
function finishedJobOf(f: JobFinish, r: FinishedRow): Job {
  const o = f.outcome;
  const job: Job = {
    job_id: r.job_id,
    email_id: r.email_id,
    status: o.status,
    workflow: r.workflow_id,
    created_at: iso(r.created_at),
    started_at: isoOrNull(r.started_at),
    completed_at: isoOrNull(r.completed_at),
  };
  if (o.status === 'completed') job.result = o.result;
  else job.error = o.error;
  if (o.trace !== undefined) job.trace = o.trace;
  else if (r.kept_trace !== null && r.kept_trace !== undefined) job.trace = json(r.kept_trace);
  return Object.assign(job, headlineFields(r, job.result));
}

/** A statement that finishes jobs (finishedJobsTail): its text by row count and senders, its name. */
export interface FinishStatement {
  text(n: number, senders: boolean): string;
  /** The prepared statement's kind (`_senders` added when it records them). */
  name: string;
}

/** A FinishStatement whose texts `build` makes, each once per row count. */
export function finishStatement(
  name: string,
  build: (n: number, senders: boolean) => string,
): FinishStatement {
  const withSenders = memoByRows((n) => build(n, true));
  const jobsOnly = memoByRows((n) => build(n, false));
  return { name, text: (n, senders) => (senders ? withSenders(n) : jobsOnly(n)) };
}

/**
 * Runs `statement` for `finishes` (`push` appends the parameters of the i-th), recording their
 * senders when `withSenders` and one has a sender; answers each job it changed as `get` reads it.
 */
export async function writeFinished(
  sql: SqlClient,
  statement: FinishStatement,
  finishes: JobFinish[],
  withSenders: boolean,
  push: (params: unknown[], i: number) => void,
): Promise<Map<string, FinishedJob | null>> {
  const params: unknown[] = [];
  for (let i = 0; i < finishes.length; i++) push(params, i);
  const senders = withSenders && finishes.some((f) => f.sender !== undefined);
  const n = finishes.length;
  const name = preparedName(senders ? `${statement.name}_senders` : statement.name, n);
  const r = await sql.query<FinishedRow>(statement.text(n, senders), params, name);
  return finishedAnswers(finishes, r.rows);
}

const FINISH = finishStatement('job_finish', buildFinishSql);

/** What a statement that finished jobs answers: each job it changed as `get` reads it, by id. */
function finishedAnswers(
  finishes: JobFinish[],
  rows: FinishedRow[],
): Map<string, FinishedJob | null> {
  const byId = new Map<string, JobFinish>();
  for (const f of finishes) byId.set(f.job_id.toLowerCase(), f);
  const out = new Map<string, FinishedJob | null>();
  for (const row of rows) {
    const key = String(row.job_id).toLowerCase();
    const f = byId.get(key);
    if (f) out.set(key, { job: finishedJobOf(f, row) });
  }
  return out;
}

/**
 * One finish written alone by `write` with its sender; when that statement fails for another
 * reason than the connection, written again without it (`senderError` says why).
 */
export async function withSenderOrWithout(
  f: JobFinish,
  write: (withSenders: boolean) => Promise<Map<string, FinishedJob | null>>,
): Promise<FinishedJob | null> {
  const key = f.job_id.toLowerCase();
  try {
    return (await write(true)).get(key) ?? null;
  } catch (err) {
    if (f.sender === undefined || isUnavailable(err)) throw err;
    const alone = (await write(false)).get(key) ?? null;
    return alone && { ...alone, senderError: err };
  }
}

/**
 * `jobs.finish` with group commit: finishes of one event-loop turn share one statement that stores
 * each result (or error) and trace, records the senders and answers what `jobs.get` would read back.
 * A job that is already finished or unknown is not changed (its caller gets null, and its sender is
 * not recorded). A finish whose statement fails for another reason than the connection is written
 * again without its sender: the job is stored and `senderError` says why the sender was not.
 */
export function createJobFinishBatcher(sql: SqlClient, maxRows = 64) {
  const write = (items: JobFinish[], senders: boolean) =>
    writeFinished(sql, FINISH, items, senders, (params, i) =>
      pushParams(params, items[i] as JobFinish, senders),
    );
  return createJobStatementBatcher<JobFinish, FinishedJob>((f) => f.job_id, {
    maxRows,
    many: (items) => write(items, true),
    one: (f) => withSenderOrWithout(f, (senders) => write([f], senders)),
  });
}
