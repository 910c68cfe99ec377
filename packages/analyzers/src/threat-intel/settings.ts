import { z } from 'zod';

/** The published formats a feed can be in. */
const FEED_FORMATS = [
  /** OpenPhish `feed.txt`: one URL per line. */
  'openphish',
  /** Any plain URL list, one per line, `#` comments (URLhaus `text` export, in-house lists). */
  'url_list',
  /** PhishTank `online-valid.json` or `online-valid.csv` (told apart by content; gzip accepted). */
  'phishtank',
  /** URLhaus `csv` / `csv_recent` / `csv_online` export: `#` comment header, quoted CSV rows. */
  'urlhaus',
  /** A MISP feed: `<source>/manifest.json` and one `<event uuid>.json` per event. */
  'misp_feed',
  /** One domain or host name per line, `#` comments. */
  'domain_list',
  /** One md5, sha1 or sha256 per line (first word of the line), `#` comments. */
  'hash_list',
] as const;

const FeedName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9 ._-]*$/, {
    message: 'letters, digits, space, dot, underscore and dash only',
  });

export const FeedSpec = z.object({
  /** Shown in indicators and in the provider's feed status. Unique. */
  name: FeedName,
  format: z.enum(FEED_FORMATS),
  /**
   * Where the feed is: an http(s) URL or a file path (relative: from the working directory). For
   * `misp_feed`, the folder or URL that holds `manifest.json`. Never logged or returned (feed URLs
   * often carry an account key, as PhishTank's do): status and logs name the feed by `name`.
   */
  source: z.string().min(1),
  enabled: z.boolean().default(true),
  /** Seconds between two loads of this feed; default: the provider's `refresh_seconds`. */
  refresh_seconds: z.number().int().positive().max(604_800).optional(),
});
export type FeedSpec = z.output<typeof FeedSpec>;

/** MISP attribute types the provider understands (composite `a|b` types are split). */
const MISP_TYPES = [
  'url',
  'uri',
  'domain',
  'hostname',
  'md5',
  'sha1',
  'sha256',
  'ip-dst',
  'domain|ip',
  'hostname|port',
  'ip-dst|port',
  'filename|md5',
  'filename|sha1',
  'filename|sha256',
] as const;

export const MispSettings = z.object({
  /** Base URL of the MISP instance (`https://misp.example.org`); empty = no MISP instance. */
  url: z.union([z.literal(''), z.url({ protocol: /^https?$/ })]).default(''),
  /**
   * File holding the API key (sent as the `Authorization` header). A file, not an inline setting:
   * service.yaml settings are served by the configuration API, a key must not be.
   */
  api_key_file: z.string().default(''),
  /** Name shown in indicators. */
  name: FeedName.default('misp'),
  /** Attribute types asked for. */
  types: z
    .array(z.enum(MISP_TYPES))
    .min(1)
    .default([...MISP_TYPES]),
  /** restSearch `last`: only attributes of events published within this window (`30d`, `12h`). */
  last: z
    .string()
    .regex(/^\d+[smhdw]$/)
    .default('30d'),
  /** Only attributes marked for detection (`to_ids`). */
  to_ids: z.boolean().default(true),
  /** restSearch `limit` (attributes per page) and the most pages read per load. */
  page_size: z.number().int().positive().max(100_000).default(10_000),
  max_pages: z.number().int().positive().max(1000).default(50),
  refresh_seconds: z.number().int().positive().max(604_800).optional(),
});
export type MispSettings = z.output<typeof MispSettings>;

export const ThreatIntelSettings = z
  .object({
    /** Feeds to load. Empty (the default): the provider answers `available: false`. */
    feeds: z.array(FeedSpec).default([]),
    misp: MispSettings.default(MispSettings.parse({})),
    /** Seconds between two loads of a feed (each feed may set its own). */
    refresh_seconds: z.number().int().positive().max(604_800).default(3600),
    /** Seconds a retry waits after a failed load (capped at the feed's refresh interval). */
    retry_seconds: z.number().int().positive().max(86_400).default(300),
    /** Whole-download deadline of one fetch (a feed file, a MISP event file, a MISP page). */
    fetch_timeout_ms: z.number().int().positive().max(600_000).default(60_000),
    /** Largest feed accepted, in bytes (after gzip inflation); a MISP feed counts all its files. */
    max_feed_bytes: z
      .number()
      .int()
      .positive()
      .max(2 * 1024 ** 3)
      .default(256 * 1024 * 1024),
    /** Most entries kept per feed (the rest are dropped and reported). */
    max_entries_per_feed: z.number().int().positive().max(20_000_000).default(5_000_000),
    /** Most event files read from one MISP feed (newest first, by the manifest's timestamp). */
    misp_feed_max_events: z.number().int().positive().max(100_000).default(10_000),
    /** MISP feeds: only attributes marked for detection (`to_ids`). */
    misp_feed_to_ids_only: z.boolean().default(true),
    /** Most URLs of one message looked up. */
    max_urls: z.number().int().positive().max(5000).default(500),
    /** Cache hint returned to the platform. */
    ttl_seconds: z.number().int().nonnegative().default(300),
  })
  .refine(
    (s) => {
      const names = [...s.feeds.map((f) => f.name), ...(s.misp.url ? [s.misp.name] : [])];
      return new Set(names).size === names.length;
    },
    { message: 'feed names (and misp.name) must be unique', path: ['feeds'] },
  );
export type ThreatIntelSettings = z.output<typeof ThreatIntelSettings>;
