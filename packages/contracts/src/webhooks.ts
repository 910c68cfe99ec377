import { z } from 'zod';

/**
 * Feedback on verdicts and webhooks (issue 17): the shapes of the HTTP surface
 * (docs/feedback-and-webhooks.md).
 */

export const FeedbackVerdictValue = z.enum(['phishing', 'legitimate']);
export type FeedbackVerdictValue = z.infer<typeof FeedbackVerdictValue>;

/** POST /api/v1/analyze/{job_id}/feedback body. */
export const FeedbackRequest = z.strictObject({
  verdict: FeedbackVerdictValue,
  note: z.string().max(2000).optional(),
});
export type FeedbackRequest = z.infer<typeof FeedbackRequest>;

/** A job's analyst feedback, as the job shows it. */
export const JobFeedback = z.object({
  verdict: FeedbackVerdictValue,
  note: z.string().nullable(),
  by: z.string().nullable(),
  at: z.string(),
});
export type JobFeedback = z.infer<typeof JobFeedback>;

/** POST /api/v1/analyze/{job_id}/feedback answer. */
export const FeedbackAnswer = z.object({
  job_id: z.uuid(),
  feedback: JobFeedback,
  /** The feedback it replaced. */
  previous: JobFeedback.nullable(),
  /**
   * What the classifier did: learned, unchanged (the same label again), pending (not learnt now;
   * caught up later), off (no classifier learning here), no-email.
   */
  learning: z.string(),
});
export type FeedbackAnswer = z.infer<typeof FeedbackAnswer>;

/**
 * A webhook URL: http or https only (an admin sets it; other schemes such as file: or data: are
 * refused), with a host, no credentials in it, at most 2048 characters.
 */
export const WebhookUrl = z
  .string()
  .max(2048)
  .superRefine((v, ctx) => {
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be an absolute http(s) URL' });
      return;
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') {
      ctx.addIssue({ code: 'custom', message: 'must use the http or https scheme' });
    } else if (!u.hostname) {
      ctx.addIssue({ code: 'custom', message: 'must name a host' });
    } else if (u.username || u.password) {
      ctx.addIssue({ code: 'custom', message: 'must not carry credentials' });
    }
  });

/** The events a webhook can subscribe to. */
export const WEBHOOK_EVENT_TYPES = [
  'job.completed',
  'job.failed',
  'verdict.phishing',
  'feedback.created',
  'campaign.updated',
] as const;
/** An event a webhook can subscribe to (WEBHOOK_EVENT_TYPES). */
export const WebhookEventType = z.enum(WEBHOOK_EVENT_TYPES);
export type WebhookEventType = z.infer<typeof WebhookEventType>;

const Events = z
  .array(WebhookEventType)
  .min(1)
  .max(WEBHOOK_EVENT_TYPES.length)
  .transform((e) => [...new Set(e)]);

/** POST /api/v1/webhooks body. */
export const CreateWebhook = z.strictObject({
  url: WebhookUrl,
  events: Events,
  description: z.string().max(500).optional(),
  enabled: z.boolean().default(true),
});
export type CreateWebhook = z.output<typeof CreateWebhook>;

/** PATCH /api/v1/webhooks/{id} body. */
export const UpdateWebhook = z
  .strictObject({
    url: WebhookUrl.optional(),
    events: Events.optional(),
    description: z.string().max(500).nullable().optional(),
    enabled: z.boolean().optional(),
  })
  .refine((u) => Object.keys(u).length > 0, {
    message: 'give at least one of url, events, description, enabled',
  });
export type UpdateWebhook = z.output<typeof UpdateWebhook>;

/** A registered endpoint as the API shows it (the secret only once, when created). */
export const Webhook = z.object({
  id: z.uuid(),
  url: z.string(),
  events: z.array(WebhookEventType),
  description: z.string().nullable(),
  enabled: z.boolean(),
  disabled_reason: z.string().nullable(),
  failing_since: z.string().nullable(),
  created_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Webhook = z.infer<typeof Webhook>;
