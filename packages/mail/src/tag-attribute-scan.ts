/**
 * Counts what `/<tag\b[^>]{0,max}?attribute/gi` counts (`tag` and `attribute` as regular
 * expressions, `attribute` such as `\btype\s*=\s*["']?password`), in linear time. The regular
 * expression retries up to `max` characters from every `<tag` (so `<input <input <input ...` costs
 * `max` steps a character); here each `<tag` is answered by the first `attribute` after it, which
 * matches only when it is within `max` characters and no `>` comes before it.
 *
 * `tagRe` and `attributeRe` must be global (`g`) and `attributeRe` must not match text that holds
 * another of its matches (non-overlapping matches are then all the matches).
 */
export function countTagAttribute(
  s: string,
  tagRe: RegExp,
  attributeRe: RegExp,
  max: number,
  firstOnly = false,
): number {
  let count = 0;
  let pos = 0;
  // the first attribute match at or after the last position asked for: start, end (-2: none left)
  let attrAt = -1;
  let attrEnd = -1;
  // the first `>` at or after the last position asked for (Infinity: none left)
  let gtAt = -1;
  for (;;) {
    tagRe.lastIndex = pos;
    const tag = tagRe.exec(s);
    if (tag === null) break;
    const from = tag.index + tag[0].length;
    if (attrAt !== -2 && attrAt < from) {
      attributeRe.lastIndex = from;
      const a = attributeRe.exec(s);
      if (a === null) attrAt = -2;
      else {
        attrAt = a.index;
        attrEnd = a.index + a[0].length;
      }
    }
    // no attribute after this tag: none after the later ones either
    if (attrAt === -2) break;
    if (attrAt - from <= max) {
      if (gtAt < from) {
        const gt = s.indexOf('>', from);
        gtAt = gt < 0 ? Number.POSITIVE_INFINITY : gt;
      }
      if (gtAt >= attrAt) {
        count++;
        if (firstOnly) break;
        pos = attrEnd;
        continue;
      }
    }
    // as the regular expression: the next try starts one character after this tag
    pos = tag.index + 1;
  }
  return count;
}
