import { z } from 'zod';
import { EnvelopeAddress } from './retrievers.ts';

/**
 * Quarantine release (issue 32): the SMTP filter records the original of each message it
 * quarantines (POST /api/v1/quarantine, with its retriever credential); an analyst releases it
 * (POST /api/v1/quarantine/{id}/release), and the gateway has the filter deliver it to its
 * recipients once (POST <filter>/internal/release).
 */
export const QUARANTINE_STATES = ['held', 'releasing', 'released'] as const;

/** Largest original recorded (base64 of the filter's largest message, 25 MiB by default). */
export const QUARANTINE_MAX_RAW_BYTES = 100 * 1024 * 1024;

const Base64 = z.string().max(Math.ceil(QUARANTINE_MAX_RAW_BYTES / 3) * 4 + 4);

/** What the filter records (its name comes from its credential). */
export const QuarantineSubmit = z.object({
  /** sha256 of the bytes (the filter's message id): a retry of the same message is one record. */
  message_ref: z.string().regex(/^[a-f0-9]{64}$/),
  job_id: z.uuid().optional(),
  envelope_from: z.union([EnvelopeAddress, z.literal('')]),
  recipients: z.array(EnvelopeAddress).min(1).max(1000),
  subject: z.string().max(998).default(''),
  /** The message as received, base64. */
  raw: Base64.min(1),
});
export type QuarantineSubmit = z.output<typeof QuarantineSubmit>;

/** A quarantined message as the API shows it (never its content). */
export const QuarantineRecord = z.object({
  id: z.uuid(),
  retriever: z.string(),
  job_id: z.string().nullable(),
  envelope_from: z.string(),
  recipients: z.array(z.string()),
  subject: z.string(),
  size: z.number().int().nonnegative(),
  quarantined_at: z.string(),
  state: z.enum(QUARANTINE_STATES),
  released_at: z.string().nullable(),
  released_by: z.string().nullable(),
});
export type QuarantineRecord = z.infer<typeof QuarantineRecord>;

/** What the gateway asks the filter to deliver (POST /internal/release). */
export const ReleaseRequest = z.object({
  id: z.uuid(),
  envelope_from: z.union([EnvelopeAddress, z.literal('')]),
  recipients: z.array(EnvelopeAddress).min(1).max(1000),
  released_by: z.string().min(1).max(200),
  raw: Base64.min(1),
});
export type ReleaseRequest = z.infer<typeof ReleaseRequest>;
