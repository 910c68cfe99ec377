import { z } from 'zod';
import { VerdictRulesJson } from './verdict-rules.ts';

/** A comma-separated list of mailboxes (lower-cased, without repeats), each matching `pattern`. */
export function mailboxList(pattern: RegExp, message: string) {
  return z
    .string()
    .transform((s) => [
      ...new Set(
        s
          .split(',')
          .map((x) => x.trim().toLowerCase())
          .filter(Boolean),
      ),
    ])
    .pipe(z.array(z.string().min(3).max(320).regex(pattern, message)).min(1).max(50));
}

/** The settings every API retriever has, with its own defaults and bounds. */
export function apiRetrieverFields(o: {
  pageSize: number;
  maxPageSize: number;
  maxConcurrency: number;
  name: string;
}) {
  return {
    /** Verdict rules by action or threat level (JSON), over the defaults (docs/mail-ingestion.md). */
    verdict_rules: VerdictRulesJson.optional(),
    /** Messages per page of changes. */
    page_size: z.coerce.number().int().min(1).max(o.maxPageSize).default(o.pageSize),
    /** Requests in flight per mailbox. */
    concurrency: z.coerce.number().int().min(1).max(o.maxConcurrency).default(4),
    /** Largest message fetched; a larger one fails its fetch (default 36 MiB). */
    max_message_bytes: z.coerce
      .number()
      .int()
      .min(1024)
      .default(36 * 1024 * 1024),
    request_timeout_ms: z.coerce.number().int().min(100).default(30_000),
    /** Names the sync tokens in the shared cache (one retriever per name). */
    name: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,64}$/)
      .default(o.name),
  };
}
