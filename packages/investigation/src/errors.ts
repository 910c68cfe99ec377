import { ERROR_CODES } from '@trawl/contracts';

/** Error codes of the reporter notifier (listed in docs/errors.md). */
export const NOTIFY_ERROR_CODES = {
  /** The template file is missing, unreadable or has no `Subject:` line (start-up). */
  template: 'TRAWL_ERR_NOTIFY_TEMPLATE',
  /** The SMTP relay refused or could not be reached (logged; retried). */
  send: 'TRAWL_ERR_NOTIFY_SEND',
  /** A notification failed for a reason without a code of its own (a bug; logged, retried). */
  internal: ERROR_CODES.internal,
} as const;
