import { TransientError, TrawlError } from '@trawl/contracts';
import type { VerdictRule } from './verdict-rules.ts';

/** One page of changes of the watched folder: the messages added, and where to go on. */
export interface ChangePage {
  /** Ids (at the source) of messages that arrived or changed, in the order given. */
  ids: string[];
  /** The cursor of the next request: the next page, or (done) the next round's sync token. */
  next: string;
  /** True on the last page of a round (Graph: @odata.deltaLink; Gmail: no nextPageToken). */
  done: boolean;
}

/**
 * One mailbox of an API (a Graph user's folder, a Gmail user's label), as the sync engine uses it.
 * The engine keeps the sync token; the source speaks the API.
 */
export interface MailboxSource {
  /** The mailbox's address (ids are `<mailbox>:<source id>`). */
  readonly mailbox: string;
  /** Creates the folders or labels the verdicts and the ack use (idempotent). */
  prepare(): Promise<void>;
  /** A page of changes from `cursor` (undefined: a full sync). Throws CursorExpiredError. */
  changes(cursor: string | undefined): Promise<ChangePage>;
  /**
   * The message's MIME, or null when it is no longer waiting in the watched folder (moved out by
   * an earlier ack, deleted): then it is not handed out again.
   */
  fetchRaw(id: string): Promise<Buffer | null>;
  /** The gateway accepted it: move it out of the watched folder (Graph: a folder; Gmail: labels). */
  markProcessed(id: string): Promise<void>;
  /** Applies a verdict's rule; answers where the message is now. Throws MessageGoneError. */
  applyVerdict(id: string, rule: VerdictRule): Promise<string>;
}

/** The sync token expired (Graph 410 / syncStateNotFound, Gmail history 404): resync in full. */
export class CursorExpiredError extends Error {
  constructor(what: string) {
    super(`${what}: the sync token expired; a full resync follows`);
  }
}

/** The message is gone from the mailbox (deleted by a person): 404 to the verdict callback. */
export class MessageGoneError extends TrawlError {
  constructor(code: string, id: string) {
    super(code, `message ${id} is no longer in the mailbox`, { status: 404, retryable: false });
  }
}

/** A message id of the retriever protocol that is not this retriever's (`<mailbox>:<id>`). */
export class UnknownIdError extends TrawlError {
  constructor(code: string, id: string) {
    super(code, `${id.slice(0, 80)} is not a message id of this retriever`, {
      status: 404,
      retryable: false,
    });
  }
}

/** The API refused the mailbox (permission, access policy, no such mailbox): 503, fixed by an admin. */
export class MailboxAccessError extends TransientError {
  constructor(code: string, message: string) {
    super(code, message, { retryAfterSeconds: 60 });
  }
}
