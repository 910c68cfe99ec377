import { z } from 'zod';
import { DEFAULT_LEXICON_DIR } from '../content/lexicons.ts';

export const HeadersWeights = z.object({
  spf_fail: z.number().default(1.3),
  spf_softfail: z.number().default(1.0),
  dkim_fail: z.number().default(1.3),
  dmarc_fail: z.number().default(2.0),
  arc_fail: z.number().default(0.5),
  reply_to_mismatch: z.number().default(0.8),
  reply_to_free_mail: z.number().default(1.6),
  return_path_mismatch: z.number().default(0.4),
  display_name_address: z.number().default(2.0),
  display_name_brand: z.number().default(2.2),
  display_name_brand_free_mail: z.number().default(3.0),
  sender_lookalike: z.number().default(2.5),
  sender_punycode: z.number().default(1.5),
  self_addressed: z.number().default(1.5),
  recipient_in_subject: z.number().default(1.5),
  random_domain: z.number().default(1.2),
  risky_tld: z.number().default(0.6),
  message_id_missing: z.number().default(0.4),
  message_id_malformed: z.number().default(0.4),
  date_future: z.number().default(0.5),
  junk_suffix: z.number().default(1.0),
  display_name_malformed: z.number().default(0.8),
  broken_words: z.number().default(1.0),
  fake_reply: z.number().default(0.6),
  unrelated_org_name: z.number().default(0.5),
  generated_local_part: z.number().default(0.5),
  address_in_subject: z.number().default(1.0),
  generated_subdomain: z.number().default(0.6),
});

export const HeadersSettings = z.object({
  /** p at or above which the analyzer answers is_phishing. */
  phishing_score_threshold: z.number().min(0).max(1).default(0.5),
  /** p when nothing suspicious is found. */
  base_probability: z.number().min(0.001).max(0.999).default(0.1),
  /** Brand ids (brands.yaml) to protect; empty: all. */
  protected_brands: z.array(z.string()).default([]),
  /** The organisation's own registrable domains (look-alikes are flagged). */
  organisation_domains: z.array(z.string()).default([]),
  /** Names the organisation is known by (an external display name using one is flagged). */
  organisation_names: z.array(z.string()).default([]),
  lexicon_dir: z.string().default(DEFAULT_LEXICON_DIR),
  cache_ttl_seconds: z.number().int().nonnegative().default(0),
  weights: HeadersWeights.default(HeadersWeights.parse({})),
});
export type HeadersSettings = z.output<typeof HeadersSettings>;
