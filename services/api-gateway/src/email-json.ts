import type { Email } from '@trawl/contracts';
import { emailId } from '@trawl/mail';

/** The Email's id and the JSON text its job row stores (ADR 004, ADR 006). */
export interface SerializedEmail {
  /** `emailId(email)` of @trawl/mail. */
  id: string;
  /** JSON text of the whole Email: `JSON.parse` gives back (a deep copy of) the Email. */
  json: string;
}

/**
 * The validated Email's id and row text. The id no longer comes from a JSON text (ADR 006: one
 * sha256 over a length-prefixed encoding), so the row's text is plain `JSON.stringify`.
 */
export function serializeEmail(email: Email): SerializedEmail {
  return { id: emailId(email), json: JSON.stringify(email) };
}
