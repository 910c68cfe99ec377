import { z } from 'zod';
import { RecommendedAction, ThreatLevel } from './analysis.ts';
import { JobCampaign, JobStatus, PAGE_QUERY, pageOf } from './job.ts';

/**
 * Campaigns and the message view (issue 16). A campaign groups the messages that share their lure
 * (a registrable domain or an exact URL, an attachment's sha256, a near-identical text); a job shows
 * the campaign it belongs to with how many messages, recipients and reporters it reached.
 */

export const LURE_KINDS = ['domain', 'url', 'attachment', 'text'] as const;
/** The kind of lure a campaign uses (LURE_KINDS). */
export const LureKind = z.enum(LURE_KINDS);
export type LureKind = z.infer<typeof LureKind>;

/** One campaign as listed (GET /api/v1/campaigns). */
export const Campaign = JobCampaign.extend({
  /** Subject of the message that started it. */
  subject: z.string(),
  /** The kinds of lure its members were grouped by. */
  lures: z.array(LureKind),
  first_seen: z.string(),
  last_seen: z.string(),
});
export type Campaign = z.infer<typeof Campaign>;

/** A page of campaigns (GET /api/v1/campaigns). */
export const CampaignList = pageOf(Campaign);
export type CampaignList = z.infer<typeof CampaignList>;

/** A member of a campaign, with its recipients and verdict. */
export const CampaignMember = z.object({
  job_id: z.uuid(),
  created_at: z.string(),
  joined_at: z.string(),
  /** The lure it shares with the campaign: `domain:…`, `url:…`, `attachment:<sha256>`, `text`. */
  matched: z.string(),
  status: JobStatus,
  subject: z.string().optional(),
  sender: z.string().optional(),
  recipients: z.array(z.string()),
  reporter: z.string().optional(),
  is_phishing: z.boolean().optional(),
  threat_level: ThreatLevel.optional(),
  recommended_action: RecommendedAction.optional(),
  confidence: z.number().optional(),
});
export type CampaignMember = z.infer<typeof CampaignMember>;

/** GET /api/v1/campaigns/{id}: the campaign and a page of its members, newest first. */
export const CampaignDetail = Campaign.extend({
  members: z.array(CampaignMember),
  next_cursor: z.string().nullable(),
});
export type CampaignDetail = z.infer<typeof CampaignDetail>;

/** The query of GET /api/v1/campaigns: limit and cursor. */
export const CampaignListQuery = z.strictObject(PAGE_QUERY);
export type CampaignListQuery = z.output<typeof CampaignListQuery>;

/** GET /api/v1/analyze/{job_id}/message. */
export const MessageView = z.object({
  job_id: z.uuid(),
  /** Every header of the message, in the order stored (repeated names once per value). */
  headers: z.array(z.object({ name: z.string(), value: z.string() })),
  /** The text body (or the text of the HTML body when the message has none). */
  text: z.string(),
  /**
   * The HTML body made inert (docs/investigation.md): no scripts, no event handlers, no remote
   * loads, links as `data-trawl-href`, forms removed. Render it only in a sandboxed iframe with
   * CSP `default-src 'none'; style-src 'unsafe-inline'; img-src data:`. Null without an HTML body.
   */
  html: z.string().nullable(),
  attachments: z.array(
    z.object({
      name: z.string(),
      type: z.string(),
      size: z.number().int().nonnegative(),
      sha256: z.string().nullable(),
    }),
  ),
});
export type MessageView = z.infer<typeof MessageView>;
