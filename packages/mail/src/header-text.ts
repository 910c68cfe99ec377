import libmime from 'libmime';

const utf8 = new TextDecoder('utf-8', { fatal: true });
const cp1252 = new TextDecoder('windows-1252');

/** Decodes header bytes (a latin1 "binary" string): UTF-8 when valid, else windows-1252. */
export function binaryToText(binary: string): string {
  if (/^[\x00-\x7f]*$/.test(binary)) return binary;
  const bytes = Buffer.from(binary, 'latin1');
  try {
    return utf8.decode(bytes);
  } catch {
    return cp1252.decode(bytes);
  }
}

/** Removes NUL and other C0 control characters except tab, newline and carriage return. */
export function stripControls(s: string): string {
  return s.replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g, '');
}

/** Unfolds a header value: CRLF or LF before a blank goes, any other line break becomes a space. */
function unfold(v: string): string {
  let i = v.indexOf('\n');
  if (i < 0) return v;
  let out = '';
  let from = 0;
  for (; i >= 0; i = v.indexOf('\n', i + 1)) {
    const end = i > from && v.charCodeAt(i - 1) === 13 ? i - 1 : i;
    const next = v.charCodeAt(i + 1);
    out += next === 32 || next === 9 ? v.slice(from, end) : `${v.slice(from, end)} `;
    from = i + 1;
  }
  return out + v.slice(from);
}

/** Only tabs and printable ASCII, and no `=?` (no encoded word). */
function isPlain(v: string): boolean {
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c > 0x7e || (c < 0x20 && c !== 9)) return false;
    if (c === 0x3f && i > 0 && v.charCodeAt(i - 1) === 0x3d) return false;
  }
  return true;
}

/**
 * Turns one raw header line (`Name: value`, possibly folded, as a latin1 "binary" string) into its
 * value as text: unfolded, 8-bit bytes decoded, RFC 2047 encoded words decoded, controls removed.
 */
export function headerLineValue(line: string): string {
  const colon = line.indexOf(':');
  let v = colon >= 0 ? line.slice(colon + 1) : line;
  v = unfold(v);
  // the common case: printable ASCII and tabs, no encoded word; nothing below would change it
  if (isPlain(v)) return v.trim();
  v = binaryToText(v);
  if (v.includes('=?')) {
    try {
      v = libmime.decodeWords(v);
    } catch {
      // keep the undecoded text
    }
  }
  return stripControls(v)
    .replace(/[\r\n]+/g, ' ')
    .trim();
}
