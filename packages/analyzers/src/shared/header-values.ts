import { isSpaceCode } from '@trawl/mail';

// the raw-header readers live in @trawl/mail (the auth-results reader uses them too)
export { firstHeader, headerValues } from '@trawl/mail';

export interface ParsedAddress {
  address: string;
  display_name: string;
}

/** Characters of `[A-Za-z0-9!#$%&'*+/=?^_\`{|}~.-]` (a local part), by code. */
const LOCAL = new Uint8Array(128);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+/=?^_`{|}~.-")
  LOCAL[c.charCodeAt(0)] = 1;

const isLocal = (c: number) => c < 128 && LOCAL[c] === 1;
/** `[A-Za-z0-9-]`: a character of a domain label. */
const isLabel = (c: number) =>
  (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 45;

/**
 * What `/[A-Za-z0-9!#$%&'*+/=?^_\`{|}~.-]+@[A-Za-z0-9.-]+\.[A-Za-z0-9-]{2,}/.exec(v)?.[0]` answers:
 * for the first `@` that has a local part before it and, in the run of `[A-Za-z0-9.-]` after it, a
 * dot with a character before it and two label characters after it, the local part, the `@` and
 * the run up to the end of the label after the last such dot. A scan from each `@`; the regex read
 * a long run of address characters again from each of its positions (quadratic).
 */
export function firstAddress(v: string): string | undefined {
  for (let at = v.indexOf('@'); at !== -1; at = v.indexOf('@', at + 1)) {
    let start = at;
    while (start > 0 && isLocal(v.charCodeAt(start - 1))) start--;
    if (start === at) continue;
    let end = at + 1; // the run of [A-Za-z0-9.-] after the @ is [at + 1, end)
    while (end < v.length && (isLabel(v.charCodeAt(end)) || v.charCodeAt(end) === 46)) end++;
    // the last dot at at + 2 or later that two label characters follow
    for (let dot = end - 3; dot >= at + 2; dot--) {
      if (
        v.charCodeAt(dot) === 46 &&
        v.charCodeAt(dot + 1) !== 46 &&
        v.charCodeAt(dot + 2) !== 46
      ) {
        let stop = dot + 3;
        while (stop < end && v.charCodeAt(stop) !== 46) stop++;
        return v.slice(start, stop);
      }
    }
  }
  return undefined;
}

/**
 * What `/<([^<>]*@[^<>]*)>/.exec(v)` answers, as the index of the `<` and the text inside: the first
 * `<…>` (no `<` or `>` inside) that holds an `@`. One pass; the regex backtracked over every `@` of
 * a long bracket.
 */
function bracketWithAt(v: string): { index: number; inner: string } | undefined {
  let lt = -1;
  let at = false;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c === 0x3c /* < */) {
      lt = i;
      at = false;
    } else if (c === 0x3e /* > */) {
      if (lt !== -1 && at) return { index: lt, inner: v.slice(lt + 1, i) };
      lt = -1;
    } else if (c === 0x40 /* @ */) at = true;
  }
  return undefined;
}

/** Parses one `Name <addr@host>` / `addr@host (Name)` value; the first address found wins. */
export function parseAddressHeader(value: string): ParsedAddress | undefined {
  const v = value.trim();
  const last = /<([^<>]*)>\s*$/.exec(v);
  const angle = last ? { index: last.index, inner: last[1] ?? '' } : bracketWithAt(v);
  if (angle) {
    const inner = firstAddress(angle.inner);
    const display = v
      .slice(0, angle.index)
      .trim()
      .replace(/^"(.*)"$/s, '$1')
      .replace(/\\"/g, '"')
      .trim();
    return inner ? { address: inner.toLowerCase(), display_name: display } : undefined;
  }
  const m = firstAddress(v);
  if (!m) return undefined;
  return { address: m.toLowerCase(), display_name: parenthesised(v)?.trim() ?? '' };
}

/** What `/\(([^)]*)\)/.exec(v)?.[1]` answers: the text between the first `(` and the next `)`. */
function parenthesised(v: string): string | undefined {
  const open = v.indexOf('(');
  if (open === -1) return undefined;
  const close = v.indexOf(')', open + 1);
  return close === -1 ? undefined : v.slice(open + 1, close);
}

/** Characters `/[>\].\s]+$/` strips from the end of a domain. */
const isTrailing = (c: number) => c === 0x3e || c === 0x5d || c === 0x2e || isSpaceCode(c);

export function domainOf(address: string | undefined): string | undefined {
  if (!address) return undefined;
  const at = address.lastIndexOf('@');
  if (at < 0) return undefined;
  const d = address.slice(at + 1).toLowerCase();
  // what .replace(/[>\].\s]+$/, '') does, without its retries on a long run of those characters
  let end = d.length;
  while (end > 0 && isTrailing(d.charCodeAt(end - 1))) end--;
  return end > 0 ? d.slice(0, end) : undefined;
}

/**
 * What `/<([^>]+)>/.exec(s)?.[1]` answers: the text between the first `<` that is followed (not
 * at once) by a `>`, and that `>`. A scan with indexOf; the regex retried the rest of the value
 * at every `<` (quadratic on a value of many `<`).
 */
export function angleContent(s: string): string | undefined {
  for (let lt = s.indexOf('<'); lt !== -1; lt = s.indexOf('<', lt + 1)) {
    const gt = s.indexOf('>', lt + 1);
    if (gt === -1) return undefined;
    if (gt > lt + 1) return s.slice(lt + 1, gt);
  }
  return undefined;
}

const isLocalChar = (c: number) =>
  (c >= 97 && c <= 122) ||
  (c >= 65 && c <= 90) ||
  (c >= 48 && c <= 57) ||
  c === 46 /* . */ ||
  c === 95 /* _ */ ||
  c === 37 /* % */ ||
  c === 43 /* + */ ||
  c === 45; /* - */
const isLabelChar = (c: number) =>
  (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 45;

/**
 * What `/[A-Za-z0-9._%+-]+@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)/.exec(s)` answers, as
 * `[match, domain]`: the first `@` with a local part before it and a dotted domain after it. A scan
 * from each `@`; the regex read the run of address characters again from each of its positions
 * (quadratic on a long run without `@`).
 */
export function addressIn(s: string): [string, string] | undefined {
  for (let at = s.indexOf('@'); at !== -1; at = s.indexOf('@', at + 1)) {
    let start = at;
    while (start > 0 && isLocalChar(s.charCodeAt(start - 1))) start--;
    if (start === at) continue;
    let end = at + 1;
    while (end < s.length && isLabelChar(s.charCodeAt(end))) end++;
    if (end === at + 1) continue;
    let dots = 0;
    while (end + 1 < s.length && s.charCodeAt(end) === 46 && isLabelChar(s.charCodeAt(end + 1))) {
      end += 2;
      while (end < s.length && isLabelChar(s.charCodeAt(end))) end++;
      dots++;
    }
    if (dots === 0) continue;
    return [s.slice(start, end), s.slice(at + 1, end)];
  }
  return undefined;
}
