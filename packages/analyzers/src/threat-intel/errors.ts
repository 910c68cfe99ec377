import { TrawlError } from '@trawl/contracts';

/**
 * Error codes of the threat-intel provider (listed in docs/errors.md). None of them fails an
 * analysis: a feed that cannot be loaded keeps its last good copy, and the code is reported in the
 * provider's `feeds[].error` and logged.
 */
export const THREAT_INTEL_ERROR_CODES = {
  /** The feed's server could not be reached, or answered other than 2xx. */
  unavailable: 'TRAWL_ERR_THREAT_INTEL_FEED_UNAVAILABLE',
  /** The feed did not arrive within `fetch_timeout_ms`. */
  timeout: 'TRAWL_ERR_THREAT_INTEL_FEED_TIMEOUT',
  /** The feed (or one MISP event file, or a gzip feed once inflated) is over `max_feed_bytes`. */
  tooLarge: 'TRAWL_ERR_THREAT_INTEL_FEED_TOO_LARGE',
  /** The feed is not in its declared format, or holds no usable entry. */
  invalid: 'TRAWL_ERR_THREAT_INTEL_FEED_INVALID',
  /** The MISP instance refused the key (401/403), or `misp.api_key_file` cannot be read. */
  mispRejected: 'TRAWL_ERR_THREAT_INTEL_MISP_REJECTED',
} as const;

export type ThreatIntelErrorCode =
  (typeof THREAT_INTEL_ERROR_CODES)[keyof typeof THREAT_INTEL_ERROR_CODES];

/** A feed load that failed; `retryable` when the next scheduled load may well succeed. */
export class FeedError extends TrawlError {
  constructor(
    code: ThreatIntelErrorCode,
    feed: string,
    detail: string,
    opts: { retryable?: boolean; cause?: unknown } = {},
  ) {
    super(code, `feed ${feed}: ${detail}`, {
      status: 502,
      retryable: opts.retryable ?? code !== THREAT_INTEL_ERROR_CODES.invalid,
      ...(opts.cause === undefined ? {} : { cause: opts.cause }),
    });
  }
}
