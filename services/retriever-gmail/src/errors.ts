/** Stable error codes of the Gmail API retriever (listed in docs/errors.md). */
export const GMAIL_ERRORS = {
  /**
   * The Gmail API refused the mailbox (403): the token's scope is not gmail.modify, or the
   * delegation does not cover this user.
   */
  accessDenied: 'TRAWL_ERR_GMAIL_ACCESS_DENIED',
  /** The user has no Gmail (400 failedPrecondition "Mail service not enabled"). */
  mailboxNotFound: 'TRAWL_ERR_GMAIL_MAILBOX_NOT_FOUND',
  /** The Gmail API answered with another error (retried). */
  api: 'TRAWL_ERR_GMAIL_API',
  /** The verdict's message is no longer in the mailbox. */
  messageNotFound: 'TRAWL_ERR_GMAIL_MESSAGE_NOT_FOUND',
  /** A request body that is not the retriever protocol's. */
  badRequest: 'TRAWL_ERR_GMAIL_BAD_REQUEST',
  /** Missing or wrong X-Internal-API-Key. */
  unauthorized: 'TRAWL_ERR_GMAIL_UNAUTHORIZED',
} as const;
