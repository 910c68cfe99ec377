import { execFrom, nextIndexOf, nextMatch } from './scan-ahead.ts';

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
  const attributeAfter = nextMatch(attributeRe, s);
  const gtAfter = nextIndexOf(s, '>');
  let count = 0;
  let pos = 0;
  for (;;) {
    const tag = execFrom(tagRe, s, pos);
    if (tag === null) break;
    const from = tag.index + tag[0].length;
    const attribute = attributeAfter(from);
    // no attribute after this tag: none after the later ones either
    if (attribute === null) break;
    if (attribute.index - from <= max) {
      // the first `>` after the tag (none: the tag is still open at the attribute)
      const gt = gtAfter(from);
      if (gt < 0 || gt >= attribute.index) {
        count++;
        if (firstOnly) break;
        pos = attribute.index + attribute[0].length;
        continue;
      }
    }
    // as the regular expression: the next try starts one character after this tag
    pos = tag.index + 1;
  }
  return count;
}
