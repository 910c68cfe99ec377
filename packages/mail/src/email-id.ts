import { createHash, type Hash } from 'node:crypto';
import type { Email, EmailInput } from '@trawl/contracts';

/** `String.prototype.isWellFormed` (ES2024; Node 20 has it, the ES2023 lib types do not). */
type WellFormedCheck = { isWellFormed(): boolean };

/** Strings at least this long go to the hash on their own instead of into the rope. */
const LONG_STRING = 1024;

/**
 * Feeds the canonical encoding of a JSON value to `hash`: appended to `out` (a rope that `+` builds
 * and the hash flattens once), a long string handed to the hash directly (no copy of it into the
 * rope); answers what is left to feed. Every value is a tag and, where it has one, its length, so
 * no value's encoding is a prefix of another's and the encoding is injective (two different values
 * never encode alike):
 * - string: `s<length in UTF-16 units>:<the string>`, hashed as UTF-8; a string with a lone surrogate
 *   (which UTF-8 cannot carry: it would become U+FFFD) is `u<length>:<its JSON.stringify>` instead;
 * - number: `n<String(n)>;` (a non-finite number is `z`, as JSON writes it null);
 * - `t`, `f`, `z` for true, false, null;
 * - array: `a<count>:` and its elements (a member JSON cannot write, such as undefined, is `z`);
 * - object: `o<count>:` and, in sorted key order, each key (encoded as a string) and its value;
 *   members whose value is undefined are left out, as JSON leaves them out. `toJSON` is honoured.
 * No JSON escaping: the strings go in as they are.
 */
function encode(value: unknown, hash: Hash, out: string): string {
  switch (typeof value) {
    case 'string':
      if (!(value as unknown as WellFormedCheck).isWellFormed()) {
        const json = JSON.stringify(value);
        return `${out}u${json.length}:${json}`;
      }
      if (value.length < LONG_STRING) return `${out}s${value.length}:${value}`;
      hash.update(`${out}s${value.length}:`);
      hash.update(value);
      return '';
    case 'number':
      return Number.isFinite(value) ? `${out}n${String(value)};` : `${out}z`;
    case 'boolean':
      return `${out}${value ? 't' : 'f'}`;
    case 'object':
      break;
    default:
      return `${out}z`;
  }
  if (value === null) return `${out}z`;
  const toJson = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJson === 'function') return encode(toJson.call(value), hash, out);
  if (Array.isArray(value)) {
    let s = `${out}a${value.length}:`;
    for (let i = 0; i < value.length; i++) s = encode(value[i], hash, s);
    return s;
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  let count = 0;
  for (const k of keys) if (obj[k] !== undefined) count++;
  let s = `${out}o${count}:`;
  for (const k of keys) {
    const v = obj[k];
    if (v !== undefined) s = encode(v, hash, encode(k, hash, s));
  }
  return s;
}

/**
 * Stable id of a message: `em_` + the first 32 hex digits of the sha256 of the canonical encoding
 * (above; docs/api.md "email_id") of the Email without `analysis_context`. The same Email always gets
 * the same id, whatever the key order it arrived in; Emails that differ in any field get different
 * ids. One definition, shared by the gateway and the mail orchestrator.
 */
export function emailId(email: Email | EmailInput): string {
  const { analysis_context: _ignored, ...rest } = email as Email;
  const hash = createHash('sha256');
  hash.update(encode(rest, hash, ''));
  return `em_${hash.digest('hex').slice(0, 32)}`;
}
