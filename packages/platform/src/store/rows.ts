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

/** A parameter for a `$n::jsonb` placeholder. */
export function jsonParam(v: unknown): string | null {
  return v === undefined || v === null ? null : JSON.stringify(v);
}

/**
 * A completed result as stored: the result without its evidence (`jobs.result`, jsonb) and the
 * evidence as JSON text (`jobs.evidence`, migration 011), or null when it has none.
 */
export function splitEvidence(result: { evidence?: unknown }): {
  result: string;
  evidence: string | null;
} {
  if (result.evidence === undefined) return { result: JSON.stringify(result), evidence: null };
  const { evidence, ...rest } = result;
  return { result: JSON.stringify(rest), evidence: JSON.stringify(evidence) };
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
