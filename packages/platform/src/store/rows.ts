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

/** Timestamp rendered by SQL with microseconds, for exact cursors. */
export const CURSOR_TS = `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
