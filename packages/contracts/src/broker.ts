import { z } from 'zod';
import { AnalysisResult } from './analysis.ts';
import { Email } from './email.ts';
import { JOB_IDS, JobError } from './job.ts';

/**
 * Broker topology. Every name can be given a prefix (tests use one per file) with `topology(prefix)`.
 *
 *  trawl.analysis (direct) --analysis.requested--> trawl.analysis.requests (quorum, delivery limit,
 *                                                   dead letters -> trawl.dead-letter -> trawl.analysis.dead)
 *  trawl.results  (topic)  analysis.completed | analysis.failed  (subscribers bind their own queues)
 *  trawl.control  (topic)  config.reloaded | lists.changed        (each replica binds its own queue)
 */
export const ROUTING_KEYS = {
  analysisRequested: 'analysis.requested',
  analysisCompleted: 'analysis.completed',
  analysisFailed: 'analysis.failed',
  configReloaded: 'config.reloaded',
  /** The allow and block lists changed (issue 32): analyzers read them again. */
  listsChanged: 'lists.changed',
  deadLetter: 'dead',
} as const;

/** The broker's exchanges and queues, their names under `prefix`. */
export function topology(prefix = '') {
  const p = prefix ? `${prefix}.` : '';
  return {
    exchanges: {
      analysis: `${p}trawl.analysis`,
      results: `${p}trawl.results`,
      control: `${p}trawl.control`,
      deadLetter: `${p}trawl.dead-letter`,
    },
    queues: {
      analysisRequests: `${p}trawl.analysis.requests`,
      analysisDead: `${p}trawl.analysis.dead`,
      mailVerdicts: `${p}trawl.mail.verdicts`,
    },
    routingKeys: ROUTING_KEYS,
    /** Deliveries of one message before it goes to the dead-letter queue. */
    deliveryLimit: 5,
  } as const;
}
/** The names topology() gives. */
export type Topology = ReturnType<typeof topology>;

/**
 * Message on trawl.analysis / analysis.requested. A claim check (ADR 005): the job row, stored
 * before the message is published, holds the Email; the orchestrator reads it back when it claims
 * the job. `email` is only carried by messages of gateways older than ADR 005 (still accepted, and
 * validated when present).
 */
export const AnalysisRequestMessage = z.object({
  ...JOB_IDS,
  workflow_id: z.string(),
  email: Email.optional(),
  submitted_at: z.string(),
  /** Retriever that brought the message in, if any (for verdict callbacks). */
  origin: z.object({ retriever: z.string(), message_id: z.string() }).optional(),
});
export type AnalysisRequestMessage = z.output<typeof AnalysisRequestMessage>;

/** Event on trawl.results. */
export const AnalysisEvent = z.object({
  event: z.enum(['analysis.completed', 'analysis.failed']),
  ...JOB_IDS,
  workflow: z.string(),
  result: AnalysisResult.optional(),
  error: JobError.optional(),
  origin: z.object({ retriever: z.string(), message_id: z.string() }).optional(),
  at: z.string(),
});
export type AnalysisEvent = z.infer<typeof AnalysisEvent>;

/**
 * A message the gateway refused for what it is (unparseable, too large, invalid): no job exists, so
 * the mail orchestrator puts this on its own durable queue (`queues.mailVerdicts`, by the default
 * exchange) and delivers an `unanalyzed` verdict from it like the verdict of a job.
 */
export const MailUnanalyzedEvent = z.object({
  event: z.literal('mail.unanalyzed'),
  retriever: z.string(),
  /** The retriever's id of the message. */
  id: z.string(),
  /** sha256 (hex) of the raw message: the retriever gets `unanalyzed:<ref>` as the job_id. */
  ref: z.string().regex(/^[0-9a-f]{64}$/),
  error: JobError,
  at: z.string(),
});
export type MailUnanalyzedEvent = z.infer<typeof MailUnanalyzedEvent>;

/** Event on trawl.control / config.reloaded. */
export const ConfigReloadedEvent = z.object({
  old_version: z.string(),
  new_version: z.string(),
  at: z.string(),
});
export type ConfigReloadedEvent = z.infer<typeof ConfigReloadedEvent>;
