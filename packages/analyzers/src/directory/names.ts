import { isSpaceCode } from '@trawl/mail';

/**
 * What `s.replace(/\([^)]*\)|\[[^\]]*\]/g, ' ')` answers: each `(…)` and `[…]` (to the next `)`
 * or `]`) made one space. One pass with indexOf; the regex read the rest of the value again at
 * every `(` or `[` that no closing character follows (quadratic).
 */
export function blankGroups(s: string): string {
  let out = '';
  let from = 0;
  let noParen = false;
  let noBracket = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let close = -1;
    if (c === 0x28 /* ( */ && !noParen) {
      close = s.indexOf(')', i + 1);
      noParen = close === -1;
    } else if (c === 0x5b /* [ */ && !noBracket) {
      close = s.indexOf(']', i + 1);
      noBracket = close === -1;
    }
    if (close !== -1) {
      out += `${s.slice(from, i)} `;
      from = close + 1;
      i = close;
    }
  }
  return from === 0 ? s : out + s.slice(from);
}

/** `s` without its leading white space, or its last character when it is all white space. */
function afterSpaces(s: string): string {
  let i = 0;
  while (i < s.length && isSpaceCode(s.charCodeAt(i))) i++;
  return i < s.length ? s.slice(i) : s.slice(-1);
}

/**
 * The groups of `/^\s*([^,]+),\s*([^,]+)$/.exec(s)`: the two sides of the only comma, leading
 * white space dropped (but not the last character of a side that is all white space). Linear;
 * the regex tried every split of the white space between `\s*` and `[^,]+` (quadratic).
 */
export function commaParts(s: string): [string, string] | undefined {
  const comma = s.indexOf(',');
  if (comma <= 0 || comma === s.length - 1 || s.indexOf(',', comma + 1) !== -1) return undefined;
  return [afterSpaces(s.slice(0, comma)), afterSpaces(s.slice(comma + 1))];
}

/** Lower-case, accents removed, punctuation and titles dropped; "Smith, John" → "john smith". */
export function normalizeName(raw: string): string {
  let s = raw
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
  s = blankGroups(s); // "(CEO)", "[External]"
  s = s.replace(/["'`\u2018\u2019\u201c\u201d]/g, '');
  const comma = commaParts(s);
  if (comma?.[0] && comma[1] && !s.includes('@')) s = `${comma[1]} ${comma[0]}`;
  s = s.replace(/[^\p{L}\p{N}@.\s-]+/gu, ' ').replace(/[-.]/g, ' ');
  s = s.replace(/\b(mr|mrs|ms|dr|prof|herr|frau|sr|sra|m|mme)\b/g, ' ');
  return s.replace(/\s+/g, ' ').trim();
}

function isLineTerminator(c: number): boolean {
  return c === 0x0a || c === 0x0d || c === 0x2028 || c === 0x2029;
}

/**
 * The groups of `/^\s*(.*?)\s*<([^<>]+)>\s*$/.exec(value)`: the trimmed text before the last `<`
 * (no line break inside it) and the text up to the `>` that closes it, when only white space
 * follows. Linear; the regex was cubic on a long run of white space.
 */
export function angleAddress(value: string): [string, string] | undefined {
  const lt = value.lastIndexOf('<');
  if (lt === -1) return undefined;
  const gt = value.indexOf('>', lt + 1);
  if (gt <= lt + 1 || value.slice(gt + 1).trim() !== '') return undefined;
  const name = value.slice(0, lt).trim();
  for (let i = 0; i < name.length; i++) if (isLineTerminator(name.charCodeAt(i))) return undefined;
  return [name, value.slice(lt + 1, gt)];
}

/** Splits `"Display Name" <addr@host>` into its parts; a bare address has no display name. */
export function parseFromHeader(value: string): {
  displayName: string;
  address: string | undefined;
} {
  const m = angleAddress(value);
  if (!m) {
    const bare = value.trim();
    return { displayName: '', address: bare.includes('@') ? bare.toLowerCase() : undefined };
  }
  const displayName = m[0]
    .replace(/^"(.*)"$/, '$1')
    .replace(/\\"/g, '"')
    .trim();
  return { displayName, address: m[1].trim().toLowerCase() };
}
