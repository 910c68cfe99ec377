/** Error codes of the sender-history provider (listed in docs/errors.md). */
export const SENDER_HISTORY_ERROR_CODES = {
  /** The database behind the sender history cannot be read. */
  unavailable: 'TRAWL_ERR_SENDER_HISTORY_UNAVAILABLE',
} as const;
