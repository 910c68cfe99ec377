import { type Email, headlineOf, type JobHeadline } from '@trawl/contracts';
import { emailId } from '@trawl/mail';
import { topLevelMember } from './json-member.ts';
import { isPlainObject } from './plain-object.ts';

/** The Email's id and the JSON text its job row stores (ADR 004, ADR 006). */
export interface SerializedEmail {
  /** `emailId(email)` of @trawl/mail. */
  id: string;
  /** JSON text of the whole Email: `JSON.parse` gives back (a deep copy of) the Email. */
  json: string;
  /** What the jobs list shows of it (issue 32), made where the Email was parsed. */
  headline: JobHeadline;
}

/** What a JSON submission sent: the body's text and its parsed `email` member (before validation). */
export interface SentEmail {
  body: string;
  input: unknown;
}

/**
 * The validated Email's id and row text. With `sent` (the JSON route), the text is cut from the
 * body when that gives exactly the validated Email (submittedEmailJson); otherwise, and for an Email
 * the gateway built itself (the raw route), it is `JSON.stringify(email)`.
 */
export function serializeEmail(email: Email, sent?: SentEmail): SerializedEmail {
  const json = sent ? submittedEmailJson(sent.body, sent.input, email) : undefined;
  return { id: emailId(email), json: json ?? JSON.stringify(email), headline: headlineOf(email) };
}

/**
 * Whether `output` is what JSON.parse of the text that produced `input` gives: the same JSON value
 * (members whose value is undefined count as absent; key order does not matter). Strings are
 * compared with `===`, which costs nothing when validation handed back the same string.
 */
function sameJson(input: unknown, output: unknown): boolean {
  if (input === output) return true;
  if (Array.isArray(input)) {
    if (!Array.isArray(output) || output.length !== input.length) return false;
    for (let i = 0; i < input.length; i++) if (!sameJson(input[i], output[i])) return false;
    return true;
  }
  if (!isPlainObject(input) || !isPlainObject(output)) return false;
  return sameMembers(input, output, undefined);
}

/** `sameJson` for two objects, `skip` (a key of `output`) left out of the comparison. */
function sameMembers(
  input: Record<string, unknown>,
  output: Record<string, unknown>,
  skip: string | undefined,
): boolean {
  let n = 0;
  for (const k of Object.keys(output)) {
    if (k === skip) continue;
    const v = output[k];
    if (v === undefined) {
      if (Object.hasOwn(input, k)) return false;
      continue;
    }
    if (!Object.hasOwn(input, k) || !sameJson(input[k], v)) return false;
    n++;
  }
  return n === Object.keys(input).length;
}

const DEFAULT_CONTEXT = '{"analysis_context":{},';

/**
 * The job row's JSON text of a submitted Email, cut from the request body as it arrived instead of
 * serialised again (ADR 006): the body's `email` member, when JSON.parse of it gives exactly the
 * validated Email. The Email schema may add to what was sent (a default `analysis_context`, an
 * attachment's default content type or computed size) or drop unknown members; the only addition
 * taken care of here is the default empty `analysis_context`, written in front. Anything else
 * answers undefined, and the caller stringifies the validated Email.
 *
 * @param body the request body text that JSON.parse turned into `input`'s parent
 * @param input the body's parsed `email` member, as validation received it
 * @param email the validated Email
 */
export function submittedEmailJson(body: string, input: unknown, email: Email): string | undefined {
  if (!isPlainObject(input)) return undefined;
  const validated = email as unknown as Record<string, unknown>;
  const context = validated.analysis_context;
  const addedContext =
    !Object.hasOwn(input, 'analysis_context') &&
    isPlainObject(context) &&
    Object.keys(context).length === 0;
  if (!sameMembers(input, validated, addedContext ? 'analysis_context' : undefined)) {
    return undefined;
  }
  const span = topLevelMember(body, 'email');
  if (!span || body.charCodeAt(span.start) !== 0x7b) return undefined;
  if (!addedContext) return body.slice(span.start, span.end);
  // `{` + at least one member (an Email has headers): the default goes in as the first member
  return DEFAULT_CONTEXT + body.slice(span.start + 1, span.end);
}
