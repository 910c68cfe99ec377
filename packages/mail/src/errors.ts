import type { ValidationProblem } from '@trawl/contracts';
import { BadInputError } from '@trawl/contracts';

/** Stable error codes of @trawl/mail (listed in docs/errors.md). */
export const MAIL_ERROR_CODES = {
  /** The bytes could not be read as a message at all (limits of the MIME splitter, timeout, nesting). */
  unparseable: 'TRAWL_ERR_MAIL_UNPARSEABLE',
  /** The message was parsed but cannot become a valid Email (no sender, no recipient, no date, ...). */
  invalid: 'TRAWL_ERR_MAIL_INVALID',
  /** The raw message is larger than `maxBytes`. */
  tooLarge: 'TRAWL_ERR_MAIL_TOO_LARGE',
} as const;

/** A message that could not be parsed (422 TRAWL_ERR_MAIL_UNPARSEABLE). */
export class MailUnparseableError extends BadInputError {
  constructor(
    message: string,
    problems: ValidationProblem[] = [{ path: '', message }],
    cause?: unknown,
  ) {
    super(MAIL_ERROR_CODES.unparseable, message, { status: 422, problems, cause });
  }
}

/** A parsed message that is not a valid Email (422 TRAWL_ERR_MAIL_INVALID). */
export class MailInvalidError extends BadInputError {
  constructor(message: string, problems: ValidationProblem[]) {
    super(MAIL_ERROR_CODES.invalid, message, { status: 422, problems });
  }
}

/** A raw message over the size bound (413). */
export class MailTooLargeError extends BadInputError {
  constructor(size: number, maxBytes: number) {
    super(MAIL_ERROR_CODES.tooLarge, `raw message is ${size} bytes, the limit is ${maxBytes}`, {
      status: 413,
      problems: [{ path: '', message: `must be at most ${maxBytes} bytes` }],
    });
  }
}
