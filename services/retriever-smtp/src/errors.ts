/** Stable error codes of the SMTP content filter (listed in docs/errors.md and docs/smtp-filter.md). */
export const SMTP_ERRORS = {
  /** Missing or wrong X-Internal-API-Key on /internal/*. */
  unauthorized: 'TRAWL_ERR_SMTP_UNAUTHORIZED',
  /** A request body that is not the retriever protocol's. */
  badRequest: 'TRAWL_ERR_SMTP_BAD_REQUEST',
  /** The mail orchestrator could not be reached or asked for a retry (the message gets 451). */
  trawlUnavailable: 'TRAWL_ERR_SMTP_TRAWL_UNAVAILABLE',
  /** The mail orchestrator refused the filter's credential or request: a configuration error. */
  trawlRefused: 'TRAWL_ERR_SMTP_TRAWL_REFUSED',
  /** Postfix's return port did not take the message back (the message gets 451). */
  reinject: 'TRAWL_ERR_SMTP_REINJECT',
  /** The authentication check (SPF, DKIM, DMARC, ARC) failed unexpectedly: analysed unverified. */
  authCheck: 'TRAWL_ERR_SMTP_AUTH_CHECK',
  /** The gateway did not record a quarantined original (the message gets 451). */
  quarantineRecord: 'TRAWL_ERR_SMTP_QUARANTINE_RECORD',
  /** The milter closed a connection for a protocol error (oversized packet, unknown command). */
  milterProtocol: 'TRAWL_ERR_SMTP_MILTER_PROTOCOL',
  /** A release the filter could not deliver (answered 503 to the gateway). */
  release: 'TRAWL_ERR_SMTP_RELEASE',
} as const;
