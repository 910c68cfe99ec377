/**
 * `s.replace(/[<chars>]+$/, '')` in one backward pass. The regular expression is quadratic on a long
 * run of those characters followed by another one: it retries the run from each of its positions.
 */
export function trimEndOf(s: string, chars: string): string {
  let end = s.length;
  while (end > 0 && chars.includes(s.charAt(end - 1))) end--;
  return end === s.length ? s : s.slice(0, end);
}
