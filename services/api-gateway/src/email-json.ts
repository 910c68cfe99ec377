import { createHash } from 'node:crypto';
import type { Email } from '@trawl/contracts';
import { emailId } from '@trawl/mail';

/** The Email's id and its JSON text, produced by one serialisation (see ADR 004). */
export interface SerializedEmail {
  /** Exactly `emailId(email)` of @trawl/mail. */
  id: string;
  /** JSON of the whole Email (keys sorted, analysis_context first); `JSON.parse` gives it back. */
  json: string;
}

/** Property keys JSON.stringify would emit before the others (array-index-like: "0", "12"). */
const INDEX_KEY = /^(?:0|[1-9][0-9]{0,9})$/;

/**
 * A copy of `value` with every object's keys in sorted order and undefined members left out, or
 * null when JSON.stringify of such a copy might not equal @trawl/mail's canonical form: an object
 * that is not plain (toJSON, Date...) or a key JSON.stringify would reorder (an integer-like key).
 */
function sortedCopy(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const c = sortedCopy(value[i]);
      if (c === null && value[i] !== null && typeof value[i] === 'object') return null;
      out[i] = c;
    }
    return out;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return null;
  const src = value as Record<string, unknown>;
  const keys = Object.keys(src).sort();
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    const v = src[k];
    if (v === undefined) continue;
    if (INDEX_KEY.test(k)) return null;
    const c = sortedCopy(v);
    if (c === null && v !== null && typeof v === 'object') return null;
    out[k] = c;
  }
  return out;
}

function hashId(canonical: string): string {
  return `em_${createHash('sha256').update(canonical).digest('hex').slice(0, 32)}`;
}

/**
 * Serialises a validated Email once for its id, the job row and the broker message. The id is the
 * sha256 of @trawl/mail's canonical JSON (keys sorted, without analysis_context); a key-sorted copy
 * stringified natively gives that same text in one pass, so it is reused as the stored JSON.
 * Inputs where that shortcut could differ fall back to emailId() plus JSON.stringify.
 */
export function serializeEmail(email: Email): SerializedEmail {
  const { analysis_context: context, ...rest } = email;
  const copy = sortedCopy(rest);
  if (copy === null) return { id: emailId(email), json: JSON.stringify(email) };
  const canonical = JSON.stringify(copy);
  const id = hashId(canonical);
  if (context === undefined) return { id, json: canonical };
  const ctx = JSON.stringify(context);
  const json =
    canonical === '{}'
      ? `{"analysis_context":${ctx}}`
      : `{"analysis_context":${ctx},${canonical.slice(1)}`;
  return { id, json };
}
