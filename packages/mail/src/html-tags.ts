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

const GT = 0x3e;
const DQUOTE = 0x22;
const SQUOTE = 0x27;
/** Longest element name read (the characters after it are attribute text). */
const MAX_NAME = 64;

/** `[a-zA-Z]`: the first character of an element name. */
function isNameStart(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
}

/** `[a-zA-Z0-9:-]`: a character of an element name. */
function isNameChar(c: number): boolean {
  return (
    (c >= 0x61 && c <= 0x7a) ||
    (c >= 0x41 && c <= 0x5a) ||
    (c >= 0x30 && c <= 0x3a) /* 0-9 : */ ||
    c === 0x2d /* - */
  );
}

/** An ASCII element name, lower-cased (copied a second time only when it has capitals). */
export function lowerName(s: string, from: number, to: number): string {
  for (let k = from; k < to; k++) {
    const c = s.charCodeAt(k);
    if (c >= 0x41 && c <= 0x5a) return s.slice(from, to).toLowerCase();
  }
  return s.slice(from, to);
}

/**
 * A cursor over the tags of an HTML text, in order: what scanTags yields, without allocating an
 * object (or the attribute text) per tag. `next()` moves to the next tag and answers false at the
 * end; the fields describe the current tag (attribute text is `html.slice(attrsStart, attrsEnd)`).
 */
export class TagCursor {
  /** Lower-case element name. */
  name = '';
  closing = false;
  attrsStart = 0;
  /** Index of the `>` that ends the tag. */
  attrsEnd = 0;
  /** Index of `<`. */
  start = 0;
  /** Index just after `>`. */
  end = 0;
  private i = 0;
  private work = 0;
  private readonly budget: number;

  constructor(readonly html: string) {
    this.budget = 16 * html.length + 1_000_000;
  }

  /** The raw attribute text of the current tag. */
  attrs(): string {
    return this.html.slice(this.attrsStart, this.attrsEnd);
  }

  next(): boolean {
    const html = this.html;
    const n = html.length;
    let i = this.i;
    while (i < n) {
      if (this.work > this.budget) break;
      const lt = html.indexOf('<', i);
      if (lt < 0 || lt + 1 >= n) break;
      const c = html.charCodeAt(lt + 1);
      if (c === 0x21 /* ! */ || c === 0x3f /* ? */) {
        if (html.startsWith('<!--', lt)) {
          const end = html.indexOf('-->', lt + 4);
          if (end < 0) break;
          i = end + 3;
        } else {
          const end = html.indexOf('>', lt + 2);
          if (end < 0) break;
          i = end + 1;
        }
        continue;
      }
      const closing = c === 0x2f; /* / */
      const nameStart = closing ? lt + 2 : lt + 1;
      // the name: a letter, then at most MAX_NAME - 1 of [a-zA-Z0-9:-]
      if (nameStart >= n || !isNameStart(html.charCodeAt(nameStart))) {
        i = lt + 1;
        continue;
      }
      let attrsStart = nameStart + 1;
      const nameMax = Math.min(n, nameStart + MAX_NAME);
      while (attrsStart < nameMax && isNameChar(html.charCodeAt(attrsStart))) attrsStart++;
      // find the `>` that ends the tag, skipping quoted values; an unclosed quote falls back to the
      // first `>` after it
      let end = -1;
      for (let at = attrsStart; at < n; at++) {
        const q = html.charCodeAt(at);
        if (q !== GT && q !== DQUOTE && q !== SQUOTE) continue;
        if (at - lt > MAX_TAG) {
          this.work += at - lt;
          end = html.indexOf('>', attrsStart);
          break;
        }
        if (q === GT) {
          end = at;
          break;
        }
        const close = html.indexOf(q === DQUOTE ? '"' : "'", at + 1);
        if (close < 0 || close - lt > MAX_TAG) {
          this.work += Math.min(n, lt + MAX_TAG) - lt;
          end = html.indexOf('>', at + 1);
          break;
        }
        at = close;
      }
      if (end < 0) {
        if (html.indexOf('>', attrsStart) < 0) break;
        i = lt + 1;
        continue;
      }
      this.work += end - lt;
      this.name = lowerName(html, nameStart, attrsStart);
      this.closing = closing;
      this.attrsStart = attrsStart;
      this.attrsEnd = end;
      this.start = lt;
      this.end = end + 1;
      this.i = end + 1;
      return true;
    }
    this.i = n;
    return false;
  }
}

/**
 * Walks the tags of an HTML text in order, skipping comments, doctype and processing instructions.
 * Quote-aware (`>` inside an attribute value does not end a tag; a tag longer than 16 KB ends at
 * its first `>`). Bounded on any input: a missing `>` ends the walk, and so does a total scanning
 * effort over 16 times the length of the text.
 */
export function* scanTags(html: string): Generator<HtmlTag> {
  const t = new TagCursor(html);
  while (t.next()) {
    yield { name: t.name, closing: t.closing, attrs: t.attrs(), start: t.start, end: t.end };
  }
}
