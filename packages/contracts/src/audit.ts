import { z } from 'zod';

const RowRef = z.object({ id: z.string(), hash: z.string() });

/** GET /api/v1/audit/verify answer: what checking the audit log's hash chain found. */
export const AuditVerification = z.object({
  ok: z.boolean(),
  /** Rows of the chain checked (the anchor excluded). */
  checked: z.number().int().nonnegative(),
  /** Rows older than the chain (written before it existed) still stored; not covered. */
  unchained: z.number().int().nonnegative(),
  /** Where the chain starts: the last row outside it (purged or older), with its hash. */
  anchor: RowRef,
  /** The last row appended, with its hash: an operator may record it elsewhere. */
  head: RowRef,
  /** The first row where the chain breaks, and how. */
  broken: z.object({ id: z.string(), reason: z.string() }).optional(),
});
export type AuditVerification = z.infer<typeof AuditVerification>;
