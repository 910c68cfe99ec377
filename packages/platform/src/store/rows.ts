import type { Indicator, Job, JobReport } from '@trawl/contracts';
import { storableJson } from './storable-text.ts';

/** Row value helpers shared by the repositories (pg and PGlite return the same JS types). */
export function iso(v: unknown): string {
  if (v instanceof Date) return v.toISOString();
  return new Date(String(v)).toISOString();
}

export function isoOrNull(v: unknown): string | null {
  return v === null || v === undefined ? null : iso(v);
}

/** jsonb comes back parsed; tolerate a string (a driver without the jsonb parser). */
export function json<T>(v: unknown): T {
  return (typeof v === 'string' ? JSON.parse(v) : v) as T;
}

/** A parameter for a `$n::jsonb` placeholder (or JSON text in a text column): storable JSON. */
export function jsonParam(v: unknown): string | null {
  return v === undefined || v === null ? null : storableJson(JSON.stringify(v));
}

/**
 * A completed result as stored: the result without its evidence (`jobs.result`, jsonb) and the
 * evidence as JSON text (`jobs.evidence`, migration 011), or null when it has none.
 */
export function splitEvidence(result: { evidence?: unknown }): {
  result: string;
  evidence: string | null;
} {
  if (result.evidence === undefined) return { result: jsonParam(result) as string, evidence: null };
  const { evidence, ...rest } = result;
  // storable: a link's `%00` decoded into the evidence reads back as the text `\u0000` (ADR 014)
  return { result: jsonParam(rest) as string, evidence: jsonParam(evidence) };
}

/** A stored result with its evidence put back (the column's, when it is set). */
export function withStoredEvidence<T extends object>(result: T, evidence: unknown): T {
  if (evidence === null || evidence === undefined) return result;
  return { ...result, evidence: json(evidence) };
}

/**
 * SQL: a job's evidence as jsonb, from the column (migration 011) or, for a job finished before
 * it, from its result. `j`: the jobs table's alias.
 */
export const EVIDENCE_OF = (j: string) => `COALESCE(${j}.evidence::jsonb, ${j}.result->'evidence')`;

/** Timestamp rendered by SQL with microseconds, for exact cursors. */
export const CURSOR_TS = `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** SQL: the columns of what the jobs list shows (migration 013). `j`: the jobs table's alias. */
export const HEADLINE_COLUMNS = (j: string) =>
  `${j}.subject, ${j}.sender, ${j}.sender_name, ${j}.recipients, ${j}.recipient_count`;

/** The row of HEADLINE_COLUMNS (nulls for a job stored before migration 013). */
export interface HeadlineRow {
  subject?: string | null;
  sender?: string | null;
  sender_name?: string | null;
  recipients?: unknown;
  recipient_count?: number | null;
  /** `jobs.origin.report` (reported mail, issue 16), or null. */
  report?: unknown;
}

/**
 * What the jobs list shows of a job (issue 32): its headline columns, the reporter of a reported
 * message and, of a completed result, the indicator of highest confidence (the first of a tie).
 */
export function headlineFields(
  r: HeadlineRow,
  result?: { indicators?: Indicator[] } | undefined,
): Pick<
  Job,
  | 'subject'
  | 'sender'
  | 'sender_name'
  | 'recipients'
  | 'recipient_count'
  | 'report'
  | 'reporter'
  | 'top_indicator'
> {
  const out: ReturnType<typeof headlineFields> = {};
  if (typeof r.subject === 'string') out.subject = r.subject;
  if (typeof r.sender === 'string') out.sender = r.sender;
  if (typeof r.sender_name === 'string') out.sender_name = r.sender_name;
  if (r.recipients !== null && r.recipients !== undefined) out.recipients = json(r.recipients);
  if (r.recipient_count !== null && r.recipient_count !== undefined)
    out.recipient_count = Number(r.recipient_count);
  if (r.report !== null && r.report !== undefined) {
    out.report = json<JobReport>(r.report);
    out.reporter = out.report.reporter;
  }
  let top: Indicator | undefined;
  for (const i of result?.indicators ?? []) if (!top || i.confidence > top.confidence) top = i;
  if (top) out.top_indicator = top;
  return out;
}
