import { type Email, safeParseEmail, toProblems } from '@trawl/contracts';
import { z } from 'zod';

const JobIdOnly = z.object({ job_id: z.uuid() });

/** The job id of a message that may hold nothing else valid (an invalid request, a dead letter). */
export function jobIdOf(body: unknown): string | undefined {
  const r = JobIdOnly.safeParse(body);
  return r.success ? r.data.job_id : undefined;
}

/**
 * The Email a claimed job row holds (claim check, ADR 005): JSON text written by the gateway,
 * parsed and validated here, at the boundary. A row that does not hold a valid Email answers why.
 */
export function storedEmail(
  raw: unknown,
): { ok: true; email: Email } | { ok: false; detail: string } {
  let value: unknown;
  try {
    value = typeof raw === 'string' ? JSON.parse(raw) : raw;
  } catch {
    return { ok: false, detail: 'it is not JSON' };
  }
  const r = safeParseEmail(value);
  if (r.success) return { ok: true, email: r.data };
  return {
    ok: false,
    detail: toProblems(r.error)
      .slice(0, 5)
      .map((p) => `${p.path || '/'}: ${p.message}`)
      .join('; '),
  };
}
