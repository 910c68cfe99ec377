/**
 * Line ends in a message header as mail servers read them (issue 28): CRLF, a bare LF and a bare
 * CR are each one line end. Postfix, Sendmail and nodemailer do not agree on a bare CR (nodemailer
 * turns it into CRLF when it sends), so a filter that splits lines on LF alone can be shown
 * `Subject: x\rX-Trawl-Verdict: clean` as one Subject while the mailbox receives two fields. Every
 * header path of this service (the content filter's rewrite, and the milter) splits with these
 * functions, and writes only CRLF or LF, never a bare CR. One forward scan each, no pattern.
 */

const LF = 0x0a;
const CR = 0x0d;
const SP = 0x20;
const HT = 0x09;
const COLON = 0x3a;

/** A field of a header block: its lines (line ends removed), the first holding `name:`. */
export interface HeaderField {
  /** The field name, trimmed and lower-case ('' for a line without a colon). */
  name: string;
  lines: Buffer[];
}

/** A message's header split into its fields, with where the body starts and the line ending used. */
export interface HeaderBlock {
  fields: HeaderField[];
  /** Offset of the first body byte (after the empty line), or -1 when there is no empty line. */
  bodyStart: number;
  /** The line end to write: LF when the first line ends with a bare LF, else CRLF. */
  eol: '\r\n' | '\n';
}

/**
 * The line end at or after `from` (before `to`): `at` is its first byte, `next` the byte after it.
 * CRLF is one line end; a CR or LF alone is one too. Null when the rest is one unterminated line.
 */
export function nextLineEnd(
  buf: Uint8Array,
  from: number,
  to: number = buf.length,
): { at: number; next: number } | null {
  for (let i = from; i < to; i++) {
    const c = buf[i];
    if (c === LF) return { at: i, next: i + 1 };
    if (c === CR) return { at: i, next: i + 1 < to && buf[i + 1] === LF ? i + 2 : i + 1 };
  }
  return null;
}

/** `name` of a `name: value` line: trimmed, lower-case; '' without a colon. */
export function fieldName(line: Uint8Array): string {
  const colon = line.indexOf(COLON);
  if (colon < 0) return '';
  return Buffer.from(line.buffer, line.byteOffset, colon).toString('latin1').trim().toLowerCase();
}

/**
 * Splits the header block of a raw message into fields (continuation lines stay with their field)
 * up to the first empty line, reading CR, LF and CRLF alike.
 */
export function splitHeader(raw: Buffer): HeaderBlock {
  const first = nextLineEnd(raw, 0);
  const eol = first && raw[first.at] === LF ? '\n' : '\r\n';
  const fields: HeaderField[] = [];
  let pos = 0;
  let bodyStart = -1;
  while (pos < raw.length) {
    const end = nextLineEnd(raw, pos);
    const lineEnd = end ? end.at : raw.length;
    if (lineEnd === pos && end) {
      bodyStart = end.next;
      break;
    }
    const line = raw.subarray(pos, lineEnd);
    const last = fields[fields.length - 1];
    if (last && (line[0] === SP || line[0] === HT)) last.lines.push(line);
    else fields.push({ name: fieldName(line), lines: [line] });
    if (!end) break;
    pos = end.next;
  }
  return { fields, bodyStart, eol };
}

/**
 * A header value split where a mail server would break it: each CR, LF or CRLF starts a line.
 * A milter receives a value as one string: more than one line, or a line that does not begin with
 * a space or tab after the first, means the value hides a line break (and perhaps a field).
 */
export function valueLines(value: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c !== LF && c !== CR) continue;
    out.push(value.slice(start, i));
    if (c === CR && value.charCodeAt(i + 1) === LF) i++;
    start = i + 1;
  }
  out.push(value.slice(start));
  return out;
}

/**
 * A header value safe to write on one line: CR, LF and every other control character become a
 * space (a value can never start a line, so never a field of its own).
 */
export function oneLineValue(value: string): string {
  let s = '';
  for (const c of value) s += c < ' ' || c === '\x7f' ? ' ' : c;
  return s;
}

/** Joins header lines with `eol`, the only line end written (never a bare CR). */
export function joinLines(lines: readonly Uint8Array[], eol: string): Buffer {
  const sep = Buffer.from(eol, 'latin1');
  const parts: Uint8Array[] = [];
  for (const l of lines) parts.push(l, sep);
  return Buffer.concat(parts);
}
