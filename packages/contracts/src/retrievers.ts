import { z } from 'zod';
import { AnalysisResult } from './analysis.ts';
import { JobError } from './job.ts';

export const RetrieverEntry = z.object({
  url: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }),
  priority: z.number().int().default(0),
  enabled: z.boolean().default(true),
});
export type RetrieverEntry = z.output<typeof RetrieverEntry>;

/** TRAWL_MAIL_RETRIEVERS: a JSON object keyed by retriever name. */
export const MailRetrievers = z.record(
  z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, {
    message: 'retriever names hold letters, digits, _ . -',
  }),
  RetrieverEntry,
);
export type MailRetrievers = z.output<typeof MailRetrievers>;

export const FetchRequest = z.object({ max_messages: z.number().int().positive().max(1000) });
export type FetchRequest = z.infer<typeof FetchRequest>;

export const RetrievedMessage = z.object({
  id: z.string().min(1).max(1024),
  /** base64 of the RFC 822 message. */
  raw: z.string(),
});
export type RetrievedMessage = z.infer<typeof RetrievedMessage>;

export const FetchResponse = z.object({ messages: z.array(RetrievedMessage) });
export type FetchResponse = z.infer<typeof FetchResponse>;

export const AckRequest = z.object({ ids: z.array(z.string()) });
export type AckRequest = z.infer<typeof AckRequest>;

export const VerdictRequest = z.object({
  id: z.string(),
  job_id: z.string(),
  /** When the analysis failed: a `review` result that says so, and the job's error here. */
  result: AnalysisResult,
  error: JobError.optional(),
});
export type VerdictRequest = z.infer<typeof VerdictRequest>;

/** POST /internal/ingest on the mail orchestrator. */
export const IngestRequest = z.object({
  retriever: z.string().optional(),
  messages: z.array(RetrievedMessage).min(1),
});
export type IngestRequest = z.infer<typeof IngestRequest>;
