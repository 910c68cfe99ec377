import { z } from 'zod';

export const ContextSettings = z.object({
  /** Internal domains used when no directory provider ran (merged with the directory's). */
  internal_domains: z.array(z.string().toLowerCase()).default([]),
  /** Confidence of vip_impersonation for a VIP's name, and for any other person's name. */
  vip_confidence: z.number().min(0).max(1).default(0.9),
  person_confidence: z.number().min(0).max(1).default(0.7),
  /** Confidence of first_time_sender when the message asks for payment or credentials. */
  first_time_sender_confidence: z.number().min(0).max(1).default(0.7),
  /** A sender with at least this many clean past messages counts as established. */
  established_after_messages: z.number().int().positive().default(5),
});
export type ContextSettings = z.output<typeof ContextSettings>;
