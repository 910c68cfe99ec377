import { z } from 'zod';
import { DEFAULT_LEXICON_DIR } from '../content/lexicons.ts';

export const UrlsWeights = z.object({
  ip_url: z.number().default(2.0),
  punycode: z.number().default(1.5),
  mixed_script: z.number().default(2.0),
  lookalike: z.number().default(2.5),
  brand_in_subdomain: z.number().default(1.5),
  brand_in_path: z.number().default(0.6),
  link_text_mismatch: z.number().default(0.3),
  brand_link_text_mismatch: z.number().default(2.0),
  shortener: z.number().default(0.9),
  risky_tld: z.number().default(0.7),
  free_hosting: z.number().default(1.0),
  credential_form: z.number().default(2.5),
  external_form: z.number().default(0),
  script_url: z.number().default(1.5),
  userinfo: z.number().default(1.5),
  recipient_in_url: z.number().default(0.2),
  random_domain: z.number().default(1.0),
  many_hidden_links: z.number().default(0.3),
});

export const UrlsSettings = z.object({
  phishing_score_threshold: z.number().min(0).max(1).default(0.5),
  base_probability: z.number().min(0.001).max(0.999).default(0.1),
  /** Brand ids (brands.yaml) whose look-alikes are flagged; empty: all. */
  protected_brands: z.array(z.string()).default([]),
  organisation_domains: z.array(z.string()).default([]),
  /** Extra URL shortener domains, added to the lexicon's list. */
  url_shorteners: z.array(z.string()).default([]),
  /** Extra risky TLDs (without the dot), added to the lexicon's list. */
  risky_tlds: z.array(z.string()).default([]),
  lexicon_dir: z.string().default(DEFAULT_LEXICON_DIR),
  cache_ttl_seconds: z.number().int().nonnegative().default(0),
  weights: UrlsWeights.default(UrlsWeights.parse({})),
});
export type UrlsSettings = z.output<typeof UrlsSettings>;
