import type { Email } from '@trawl/contracts';
import { z } from 'zod';

/** The parts of the directory provider's data the analyzer uses (validated loosely). */
const DirectoryData = z.object({
  configured: z.boolean().default(true),
  sender_internal: z.boolean().default(false),
  sender_partner: z.boolean().default(false),
  internal_domains: z.array(z.string()).default([]),
  partner_domains: z.array(z.string()).default([]),
  recipient_vips: z
    .array(z.object({ name: z.string(), email: z.string(), title: z.string().default('') }))
    .default([]),
  display_name_matches_person: z
    .object({
      matched: z.boolean(),
      display_name: z.string().default(''),
      name: z.string().optional(),
      email: z.string().optional(),
      title: z.string().optional(),
      vip: z.boolean().optional(),
      same_address: z.boolean().optional(),
    })
    .default({ matched: false, display_name: '' }),
});
type DirectoryData = z.output<typeof DirectoryData>;

const History = z.object({
  known: z.boolean(),
  message_count: z.number(),
  phishing_count: z.number(),
  first_seen: z.string().nullable().default(null),
  days_known: z.number().nullable().default(null),
});

/** The parts of the sender-history provider's data the analyzer uses. */
const SenderHistoryData = z.object({
  available: z.boolean(),
  sender: History,
  domain_history: History,
  first_time_sender: z.boolean(),
  first_time_domain: z.boolean(),
});
type SenderHistoryData = z.output<typeof SenderHistoryData>;

export interface Gathered {
  directory?: DirectoryData;
  history?: SenderHistoryData;
  /** Provider data present but malformed. */
  problems: string[];
}

/** Reads `analysis_context.<stage>.providers.{directory,sender-history}` of every completed stage. */
export function gatherContext(email: Email): Gathered {
  const out: Gathered = { problems: [] };
  for (const [stage, value] of Object.entries(email.analysis_context ?? {})) {
    const providers = (value as { providers?: Record<string, unknown> } | null)?.providers;
    if (!providers || typeof providers !== 'object') continue;
    if (providers.directory !== undefined) {
      const r = DirectoryData.safeParse(providers.directory);
      if (r.success) out.directory = r.data;
      else out.problems.push(`${stage}.providers.directory is malformed`);
    }
    if (providers['sender-history'] !== undefined) {
      const r = SenderHistoryData.safeParse(providers['sender-history']);
      if (r.success) out.history = r.data;
      else out.problems.push(`${stage}.providers.sender-history is malformed`);
    }
  }
  return out;
}
