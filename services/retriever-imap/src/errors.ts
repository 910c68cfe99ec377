import { TransientError, TrawlError } from '@trawl/contracts';

/** Stable error codes of the IMAP retriever (listed in docs/errors.md). */
export const IMAP_ERRORS = {
  /** Not connected to the IMAP server (reconnecting): retry later. */
  disconnected: 'TRAWL_ERR_IMAP_DISCONNECTED',
  /** An IMAP command failed (server error, connection dropped mid-command). */
  command: 'TRAWL_ERR_IMAP_COMMAND',
  /** The verdict's message is in none of the folders it can be in (deleted by a person?). */
  messageNotFound: 'TRAWL_ERR_IMAP_MESSAGE_NOT_FOUND',
  /** A request body that is not the retriever protocol's. */
  badRequest: 'TRAWL_ERR_IMAP_BAD_REQUEST',
  /** Missing or wrong X-Internal-API-Key. */
  unauthorized: 'TRAWL_ERR_IMAP_UNAUTHORIZED',
} as const;

export class ImapDisconnectedError extends TransientError {
  constructor() {
    super(IMAP_ERRORS.disconnected, 'not connected to the IMAP server; retry later');
  }
}

export class ImapCommandError extends TransientError {
  constructor(what: string, cause: unknown) {
    const c = cause as { responseText?: string; message?: string };
    super(
      IMAP_ERRORS.command,
      `${what} failed: ${c?.responseText ?? c?.message ?? String(cause)}`,
      {
        cause,
      },
    );
  }
}

export class MessageNotFoundError extends TrawlError {
  constructor(id: string) {
    super(
      IMAP_ERRORS.messageNotFound,
      `message ${id} is not in the mailbox, processed or quarantine folder`,
      {
        status: 404,
        retryable: false,
      },
    );
  }
}
