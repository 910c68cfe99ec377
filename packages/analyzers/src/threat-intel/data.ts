import { z } from 'zod';

/** What a message held that a feed lists. */
const MATCH_KINDS = ['url', 'host', 'domain', 'ip', 'attachment'] as const;

export const IntelMatch = z.object({
  /**
   * `url`: a link of the message is listed; `domain`: the registrable domain of a link; `host`: a
   * link's host name (or a parent below its registrable domain); `ip`: a link's IP literal;
   * `attachment`: an attachment's md5, sha1 or sha256.
   */
  kind: z.enum(MATCH_KINDS),
  /** What the feeds list: the link as the message wrote it, the domain, host, IP or hash. */
  value: z.string(),
  /** Names of the feeds that list it. */
  feeds: z.array(z.string()).min(1),
  /** For a domain, host or IP match: the link's host. */
  host: z.string().optional(),
  /** For an attachment: its file name and the hash that matched. */
  attachment: z.string().optional(),
  hash_type: z.enum(['md5', 'sha1', 'sha256']).optional(),
});
export type IntelMatch = z.output<typeof IntelMatch>;

export const FeedStatus = z.object({
  name: z.string(),
  format: z.string(),
  loaded: z.boolean(),
  entries: z.number().int().nonnegative(),
  loaded_at: z.string().nullable(),
  /** The last load's failure; with `loaded`, the feed answers from its last good copy. */
  error: z.object({ code: z.string(), message: z.string(), at: z.string() }).nullable(),
  /** A load that succeeded with losses (MISP event files that failed, entries over the limit). */
  note: z.string().optional(),
});
export type FeedStatus = z.output<typeof FeedStatus>;

/** `data` of the threat-intel provider's answer; what the `intel` analyzer reads. */
export const ThreatIntelData = z.object({
  /** At least one feed is loaded: a message without matches was checked. False: abstained. */
  available: z.boolean(),
  feeds: z.array(FeedStatus),
  checked: z.object({
    urls: z.number().int().nonnegative(),
    hosts: z.number().int().nonnegative(),
    attachments: z.number().int().nonnegative(),
  }),
  matches: z.array(IntelMatch),
});
export type ThreatIntelData = z.output<typeof ThreatIntelData>;
