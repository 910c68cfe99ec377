import { z } from 'zod';
import { AnalysisResult } from './analysis.ts';
import { JobError } from './job.ts';

/** A retriever the mail orchestrator polls: its name, URL and settings. */
export const RetrieverEntry = z.object({
  url: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }),
  priority: z.number().int().default(0),
  enabled: z.boolean().default(true),
  /**
   * A reporting mailbox (issue 16): each message is a user's report wrapping the message they
   * report; the original inside it is analysed and the sender of the wrapper recorded as reporter.
   */
  report: z.boolean().optional(),
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

/** A mail orchestrator's request for messages (POST /fetch of a retriever). */
export const FetchRequest = z.object({ max_messages: z.number().int().positive().max(1000) });
export type FetchRequest = z.infer<typeof FetchRequest>;

/**
 * An address of the SMTP envelope as a retriever knows it (the mailbox a message was delivered to).
 * Plain ASCII `local@domain` (an IDN domain as its A-label), no display name, no list: it travels
 * in an HTTP header to the gateway. Linear pattern: neither class holds `@`.
 */
export const EnvelopeAddress = z
  .string()
  .min(3)
  .max(320)
  .regex(/^[^\s\p{Cc}\P{ASCII},;<>"@]+@[^\s\p{Cc}\P{ASCII},;<>"@]+$/u, {
    message: 'must be a plain address local@domain',
  });
export type EnvelopeAddress = z.infer<typeof EnvelopeAddress>;

/** One message a retriever hands over: its id and the raw message (base64). */
export const RetrievedMessage = z.object({
  id: z.string().min(1).max(1024),
  /** base64 of the RFC 822 message. */
  raw: z.string(),
  /**
   * What the retriever knows of the SMTP envelope. `to`: the mailbox the message was delivered to,
   * used as the recipient only when the headers name none (a Bcc copy). Optional: retrievers that
   * do not send it are answered as before.
   */
  envelope: z.object({ to: z.array(EnvelopeAddress).min(1).max(16).optional() }).optional(),
});
export type RetrievedMessage = z.infer<typeof RetrievedMessage>;

/** A retriever's answer to /fetch: the messages it holds. */
export const FetchResponse = z.object({
  messages: z.array(RetrievedMessage),
  /** Messages still waiting at the source after this batch, when the retriever knows (metrics). */
  backlog: z.number().int().nonnegative().optional(),
});
export type FetchResponse = z.infer<typeof FetchResponse>;

/** The messages a mail orchestrator has submitted (POST /ack of a retriever). */
export const AckRequest = z.object({ ids: z.array(z.string()) });
export type AckRequest = z.infer<typeof AckRequest>;

/**
 * What kind of verdict a retriever is given:
 *  - analyzed:   Trawl analysed the message; `result` is its verdict;
 *  - unanalyzed: Trawl could not analyse it (the gateway refused the message: unparseable, too
 *                large, no sender, a parse that timed out; or its analysis failed). `result` is a
 *                `review` result that says so and `error` says why; for a refused message `job_id`
 *                is `unanalyzed:<sha256 of the raw message>` (there is no job). Never file such a
 *                message as clean: hold it for a person.
 * Absent in requests of mail orchestrators older than this field: read `recommended_action` alone.
 */
export const VERDICT_KINDS = ['analyzed', 'unanalyzed'] as const;
/** What a retriever is told to do with an analysed message (VERDICT_KINDS). */
export const VerdictKind = z.enum(VERDICT_KINDS);
export type VerdictKind = z.infer<typeof VerdictKind>;

/** A verdict for a retriever to act on (POST /verdict). */
export const VerdictRequest = z.object({
  id: z.string(),
  job_id: z.string(),
  /** When the message was not analysed: a `review` result that says so, and the reason in `error`. */
  result: AnalysisResult,
  error: JobError.optional(),
  verdict: VerdictKind.optional(),
});
export type VerdictRequest = z.infer<typeof VerdictRequest>;

/** POST /internal/ingest on the mail orchestrator. */
export const IngestRequest = z.object({
  retriever: z.string().optional(),
  messages: z.array(RetrievedMessage).min(1),
});
export type IngestRequest = z.infer<typeof IngestRequest>;
