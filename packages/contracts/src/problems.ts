import type { z } from 'zod';

/** One validation problem: `path` is a JSON pointer (RFC 6901) into the validated document. */
export interface ValidationProblem {
  path: string;
  message: string;
}

/** Escapes one reference token of a JSON pointer. */
export function escapePointerToken(token: string | number): string {
  return String(token).replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Builds a JSON pointer from path segments (`['a', 0, 'b']` → `/a/0/b`; `[]` → `''`). */
export function toJsonPointer(path: ReadonlyArray<PropertyKey>): string {
  return path.map((p) => `/${escapePointerToken(typeof p === 'symbol' ? String(p) : p)}`).join('');
}

/** Turns a zod error into problems, each with a JSON pointer prefixed by `prefix`. */
export function toProblems(error: z.ZodError, prefix = ''): ValidationProblem[] {
  return error.issues.map((issue) => ({
    path: prefix + toJsonPointer(issue.path),
    message: issue.message,
  }));
}

/** A parse's value, or the problems that stopped it. */
export type ParseOutcome<T> = { ok: true; value: T } | { ok: false; problems: ValidationProblem[] };

/** Parses `data` with `schema`, answering either the value or every problem found. */
export function parseWith<T>(
  schema: { safeParse(data: unknown): z.ZodSafeParseResult<T> },
  data: unknown,
  prefix = '',
): ParseOutcome<T> {
  const r = schema.safeParse(data);
  if (r.success) return { ok: true, value: r.data };
  return { ok: false, problems: toProblems(r.error, prefix) };
}
