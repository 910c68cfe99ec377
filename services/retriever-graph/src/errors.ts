/** Stable error codes of the Microsoft Graph retriever (listed in docs/errors.md). */
export const GRAPH_ERRORS = {
  /**
   * Graph refused the mailbox (403 ErrorAccessDenied): no Mail.ReadWrite application permission
   * with admin consent, or an application access policy that leaves this mailbox out.
   */
  accessDenied: 'TRAWL_ERR_GRAPH_ACCESS_DENIED',
  /** The mailbox does not exist or has no Exchange Online mailbox (ErrorInvalidUser). */
  mailboxNotFound: 'TRAWL_ERR_GRAPH_MAILBOX_NOT_FOUND',
  /** Graph answered a request with an error that is neither of the above (retried). */
  api: 'TRAWL_ERR_GRAPH_API',
  /** The verdict's message is no longer in the mailbox (deleted by a person?). */
  messageNotFound: 'TRAWL_ERR_GRAPH_MESSAGE_NOT_FOUND',
  /** A request body that is not the retriever protocol's. */
  badRequest: 'TRAWL_ERR_GRAPH_BAD_REQUEST',
  /** Missing or wrong X-Internal-API-Key. */
  unauthorized: 'TRAWL_ERR_GRAPH_UNAUTHORIZED',
} as const;
