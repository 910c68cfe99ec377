import { isSpaceCode } from './char-codes.ts';

/** What separates the candidate runs of addressesInText. */
const ADDRESS_SEPARATORS = /[\s<>"(),;:]+/;

/**
 * Pulls addr-specs out of free text such as Delivered-To, Return-Path or Received "for <...>": what
 * `/<?([^\s<>"(),;:]+@[^\s<>"(),;:]+)>?/g` captures, without its quadratic retries on a long run
 * without `@`. A match takes a whole run of those characters, so the runs with an `@` that has a
 * character before and after it are the captures.
 */
export function addressesInText(text: string): string[] {
  const out: string[] = [];
  for (const run of text.slice(0, 4096).split(ADDRESS_SEPARATORS)) {
    const at = run.indexOf('@', 1);
    if (at >= 0 && at <= run.length - 2) out.push(run);
  }
  return out;
}

/** `for <addr>;` in a Received header: the start of a candidate (checked by receivedForAddresses). */
const RECEIVED_FOR = /\bfor\s+<?([^\s<>;]+)/gi;

/**
 * The addresses of `for <addr>;` in a Received header: what
 * `/\bfor\s+<?([^\s<>;]+@[^\s<>;]+?)>?\s*;/gi` captures, in linear time (that expression tries
 * every `@` of a long run, each up to the run's end). The lazy part can only end where the run of
 * `[^\s<>;]` ends, so a match is a whole run with an `@` inside it, then `>`, white space and `;`.
 */
export function receivedForAddresses(r: string): string[] {
  const out: string[] = [];
  const n = r.length;
  let pos = 0;
  for (;;) {
    RECEIVED_FOR.lastIndex = pos;
    const m = RECEIVED_FOR.exec(r);
    if (m === null) break;
    const run = m[1] as string;
    const at = run.indexOf('@', 1);
    let end = m.index + m[0].length;
    if (at >= 0 && at <= run.length - 2) {
      if (r.charCodeAt(end) === 0x3e /* > */) end++;
      while (end < n && isSpaceCode(r.charCodeAt(end))) end++;
      if (r.charCodeAt(end) === 0x3b /* ; */) {
        out.push(run);
        pos = end + 1;
        continue;
      }
    }
    pos = m.index + 1;
  }
  return out;
}
