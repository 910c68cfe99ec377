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

const PLAIN_ASCII = /^[\t\x20-\x7e]*$/;

/**
 * Turns one raw header line (`Name: value`, possibly folded, as a latin1 "binary" string) into its
 * value as text: unfolded, 8-bit bytes decoded, RFC 2047 encoded words decoded, controls removed.
 */
export function headerLineValue(line: string): string {
  const colon = line.indexOf(':');
  let v = colon >= 0 ? line.slice(colon + 1) : line;
  if (v.includes('\n')) v = v.replace(/\r?\n(?=[ \t])/g, '').replace(/\r?\n/g, ' ');
  // the common case: printable ASCII and tabs, no encoded word; nothing below would change it
  if (PLAIN_ASCII.test(v) && !v.includes('=?')) return v.trim();
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
