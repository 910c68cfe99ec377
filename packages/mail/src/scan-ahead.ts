/**
 * Linear scans that look ahead: the next match of a regular expression, or the next occurrence of
 * a string, found once and answered again while later asks do not pass it.
 */

/** The match of a global regular expression at or after `from`. */
export function execFrom(re: RegExp, s: string, from: number): RegExpExecArray | null {
  re.lastIndex = from;
  return re.exec(s);
}

/**
 * The first match of global `re` in `s` at or after a position: a match found for an earlier ask
 * answers again while it is not before the position; once none is left, `s` is not read again.
 */
export function nextMatch(re: RegExp, s: string): (from: number) => RegExpExecArray | null {
  let found: RegExpExecArray | null | undefined;
  return (from) => {
    if (found !== null && (found === undefined || found.index < from))
      found = execFrom(re, s, from);
    return found;
  };
}

/** `s.indexOf(needle, from)` the same way: -1 when none is left (and `s` is not read again). */
export function nextIndexOf(s: string, needle: string): (from: number) => number {
  let at = -2;
  return (from) => {
    if (at !== -1 && at < from) at = s.indexOf(needle, from);
    return at;
  };
}
