export interface HtmlTag {
  /** Lower-case element name. */
  name: string;
  closing: boolean;
  /** The raw attribute text between the name and `>`. */
  attrs: string;
  /** Index of `<`. */
  start: number;
  /** Index just after `>`. */
  end: number;
}

/** Longest tag looked at (a `<img src="data:...">` longer than this is skipped). */
const MAX_TAG = 16 * 1024;

/**
 * Walks the tags of an HTML text in order, skipping comments, doctype and processing instructions.
 * Quote-aware (`>` inside an attribute value does not end a tag; a tag longer than 16 KB ends at
 * its first `>`). Bounded on any input: a missing `>` ends the walk, and so does a total scanning
 * effort over 16 times the length of the text.
 */
export function* scanTags(html: string): Generator<HtmlTag> {
  const n = html.length;
  const nameRe = /[a-zA-Z][a-zA-Z0-9:-]{0,63}/y;
  const stopRe = /[>"']/g;
  let i = 0;
  let work = 0;
  const budget = 16 * n + 1_000_000;
  while (i < n) {
    if (work > budget) return;
    const lt = html.indexOf('<', i);
    if (lt < 0 || lt + 1 >= n) return;
    const c = html[lt + 1];
    if (c === '!' || c === '?') {
      if (html.startsWith('<!--', lt)) {
        const end = html.indexOf('-->', lt + 4);
        if (end < 0) return;
        i = end + 3;
      } else {
        const end = html.indexOf('>', lt + 2);
        if (end < 0) return;
        i = end + 1;
      }
      continue;
    }
    const closing = c === '/';
    nameRe.lastIndex = closing ? lt + 2 : lt + 1;
    const m = nameRe.exec(html);
    if (m === null) {
      i = lt + 1;
      continue;
    }
    const attrsStart = nameRe.lastIndex;
    // find the `>` that ends the tag, skipping quoted values; an unclosed quote falls back to the
    // first `>` after it
    let p = attrsStart;
    let end = -1;
    stopRe.lastIndex = p;
    for (;;) {
      const s = stopRe.exec(html);
      if (s === null) break;
      if (s.index - lt > MAX_TAG) {
        work += s.index - lt;
        end = html.indexOf('>', attrsStart);
        break;
      }
      if (s[0] === '>') {
        end = s.index;
        break;
      }
      const close = html.indexOf(s[0], s.index + 1);
      if (close < 0 || close - lt > MAX_TAG) {
        work += Math.min(n, lt + MAX_TAG) - lt;
        end = html.indexOf('>', s.index + 1);
        break;
      }
      p = close + 1;
      stopRe.lastIndex = p;
    }
    if (end < 0) {
      if (html.indexOf('>', attrsStart) < 0) return;
      i = lt + 1;
      continue;
    }
    work += end - lt;
    yield {
      name: m[0].toLowerCase(),
      closing,
      attrs: html.slice(attrsStart, end),
      start: lt,
      end: end + 1,
    };
    i = end + 1;
  }
}
