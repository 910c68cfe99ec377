import { isSpaceCode } from './char-codes.ts';
import { execFrom, nextIndexOf } from './scan-ahead.ts';

const URL_OPEN = /url\(/gi;

/** `[^)'"\s]`: a character of an unquoted `url(...)` value. */
function isBareUrlCode(c: number): boolean {
  return c !== 0x29 && c !== 0x27 && c !== 0x22 && !isSpaceCode(c);
}

/**
 * The `url(...)` values of a style text, in order: what
 * `/url\(\s*(?:"([^"]*)"|'([^']*)'|([^)'"\s]*))\s*\)/gi` matches, in one pass. That expression is
 * quadratic on `url(url(url(...` (each try reads the unquoted value to its end again) and on
 * `url(` then many spaces; here the value after a `url(` is read once: when a later `url(` starts
 * inside a value already read, the end found then is reused, and so are the next quotes found.
 */
export function cssUrlValues(css: string): string[] {
  const out: string[] = [];
  const n = css.length;
  let pos = 0;
  // the unquoted value read last ends at valueEnd, and the spaces after it at valueSpacesEnd
  let valueEnd = -1;
  let valueSpacesEnd = -1;
  // the next `"` and `'` (at or after a position asked for before), -1: none left
  const dqAfter = nextIndexOf(css, '"');
  const sqAfter = nextIndexOf(css, "'");
  for (;;) {
    const m = execFrom(URL_OPEN, css, pos);
    if (m === null) break;
    let q = m.index + 4;
    while (q < n && isSpaceCode(css.charCodeAt(q))) q++;
    const c = css.charCodeAt(q);
    let value: string | undefined;
    let close = -1;
    if (c === 0x22 /* " */) {
      close = dqAfter(q + 1);
      if (close >= 0) value = css.slice(q + 1, close);
    } else if (c === 0x27 /* ' */) {
      close = sqAfter(q + 1);
      if (close >= 0) value = css.slice(q + 1, close);
    } else {
      // a `url(` that starts inside the value read last ends where that value ends
      if (q >= valueEnd) {
        let r = q;
        while (r < n && isBareUrlCode(css.charCodeAt(r))) r++;
        let t = r;
        while (t < n && isSpaceCode(css.charCodeAt(t))) t++;
        valueEnd = r;
        valueSpacesEnd = t;
      }
      value = css.slice(q, valueEnd);
      close = valueSpacesEnd - 1;
    }
    if (value !== undefined) {
      let t = close + 1;
      while (t < n && isSpaceCode(css.charCodeAt(t))) t++;
      if (css.charCodeAt(t) === 0x29 /* ) */) {
        out.push(value);
        pos = t + 1;
        continue;
      }
    }
    pos = m.index + 1;
  }
  return out;
}
