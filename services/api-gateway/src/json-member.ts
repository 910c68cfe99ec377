const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const BOM = 0xfeff;

function isJsonSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && isJsonSpace(text.charCodeAt(i))) i++;
  return i;
}

/** Index just past the string starting at `i` (an opening quote), or -1. */
function skipString(text: string, i: number): number {
  let from = i + 1;
  for (;;) {
    const q = text.indexOf('"', from);
    if (q < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(q - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** Index just past the value starting at `i` (no leading space), or -1. */
function skipValue(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return skipString(text, i);
  if (c !== OPEN_OBJECT && c !== OPEN_ARRAY) {
    // a number, true, false or null: up to the next delimiter
    let j = i;
    while (j < text.length) {
      const d = text.charCodeAt(j);
      if (d === COMMA || d === CLOSE_OBJECT || d === CLOSE_ARRAY || isJsonSpace(d)) break;
      j++;
    }
    return j > i ? j : -1;
  }
  let depth = 0;
  let j = i;
  while (j < text.length) {
    const d = text.charCodeAt(j);
    if (d === QUOTE) {
      j = skipString(text, j);
      if (j < 0) return -1;
      continue;
    }
    if (d === OPEN_OBJECT || d === OPEN_ARRAY) depth++;
    else if (d === CLOSE_OBJECT || d === CLOSE_ARRAY) {
      depth--;
      if (depth === 0) return j + 1;
    }
    j++;
  }
  return -1;
}

/**
 * Where the value of the member `key` of the top-level object of `text` lies: `text.slice(start,
 * end)` is that value's JSON text exactly as written. `text` must be JSON that `JSON.parse` accepted
 * (a leading byte order mark aside); the scan relies on it and only finds member boundaries (strings
 * are skipped with indexOf, so it costs little even for a large body).
 *
 * Undefined when the answer could be wrong or is absent: the top level is not an object, the key
 * is not there, it is there more than once (JSON.parse keeps the last), or a top-level key holds an
 * escape (it might spell `key`).
 */
export function topLevelMember(
  text: string,
  key: string,
): { start: number; end: number } | undefined {
  let i = 0;
  if (text.charCodeAt(0) === BOM) i = 1;
  i = skipSpace(text, i);
  if (text.charCodeAt(i) !== OPEN_OBJECT) return undefined;
  i = skipSpace(text, i + 1);
  if (text.charCodeAt(i) === CLOSE_OBJECT) return undefined;
  let found: { start: number; end: number } | undefined;
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return undefined;
    const keyEnd = skipString(text, i);
    if (keyEnd < 0) return undefined;
    const name = text.slice(i + 1, keyEnd - 1);
    if (name.includes('\\')) return undefined;
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== COLON) return undefined;
    const start = skipSpace(text, i + 1);
    const end = skipValue(text, start);
    if (end < 0) return undefined;
    if (name === key) {
      if (found) return undefined;
      found = { start, end };
    }
    i = skipSpace(text, end);
    const c = text.charCodeAt(i);
    if (c === CLOSE_OBJECT) return found;
    if (c !== COMMA) return undefined;
    i = skipSpace(text, i + 1);
  }
}
