/** The tag cursor (src/html-tags.ts) before the CPU work of bench:mail --urls: the reference of the differential tests. */
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
/** Shared by every cursor: each use sets lastIndex first. */
const NAME = /[a-zA-Z][a-zA-Z0-9:-]{0,63}/y;
const STOP = /[>"']/g;

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
    const nameRe = NAME;
    const stopRe = STOP;
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
      nameRe.lastIndex = nameStart;
      if (!nameRe.test(html)) {
        i = lt + 1;
        continue;
      }
      const attrsStart = nameRe.lastIndex;
      // find the `>` that ends the tag, skipping quoted values; an unclosed quote falls back to the
      // first `>` after it
      let end = -1;
      stopRe.lastIndex = attrsStart;
      while (stopRe.test(html)) {
        const at = stopRe.lastIndex - 1;
        if (at - lt > MAX_TAG) {
          this.work += at - lt;
          end = html.indexOf('>', attrsStart);
          break;
        }
        const q = html.charCodeAt(at);
        if (q === GT) {
          end = at;
          break;
        }
        const close = html.indexOf(q === 0x22 ? '"' : "'", at + 1);
        if (close < 0 || close - lt > MAX_TAG) {
          this.work += Math.min(n, lt + MAX_TAG) - lt;
          end = html.indexOf('>', at + 1);
          break;
        }
        stopRe.lastIndex = close + 1;
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
