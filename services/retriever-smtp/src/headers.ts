/**
 * Rewrites the header block of a raw message: removes every `X-Trawl-*` field the message came
 * with (a sender must not be able to write its own verdict), adds the filter's fields on top, and
 * may prefix the Subject. The body is copied byte for byte. One forward scan, no pattern.
 */

export interface HeaderEdit {
  /** Fields to add, in order: [name, value]; values must be single-line printable text. */
  add: [string, string][];
  /** Whole fields written on top, before `add`, as given (folded with CRLF + tab). */
  prepend?: string[];
  /** Other fields to remove: true for a field (its lower-case name, its bytes) to drop. */
  drop?: ((name: string, field: Buffer) => boolean) | undefined;
  /** Prefix written before the Subject (a Subject is added when the message has none). */
  subjectPrefix?: string | undefined;
}

const LF = 0x0a;
const CR = 0x0d;
const SP = 0x20;
const HT = 0x09;
const TRAWL_PREFIX = 'x-trawl-';

/** Offset of the first byte of the body separator line (the empty line), or -1 (headers only). */
function headerEnd(raw: Buffer): { end: number; eol: string } {
  let eol = '\r\n';
  const firstLf = raw.indexOf(LF);
  if (firstLf > 0 && raw[firstLf - 1] !== CR) eol = '\n';
  let pos = 0;
  while (pos < raw.length) {
    const lf = raw.indexOf(LF, pos);
    if (lf < 0) return { end: -1, eol };
    const lineLen = lf - pos - (lf > pos && raw[lf - 1] === CR ? 1 : 0);
    if (lineLen === 0) return { end: pos, eol };
    pos = lf + 1;
  }
  return { end: -1, eol };
}

function nameOf(field: Buffer): string {
  const colon = field.indexOf(0x3a);
  if (colon < 0) return '';
  return field.subarray(0, colon).toString('latin1').trim().toLowerCase();
}

/** Splits a header block into fields (a field's continuation lines stay with it). */
function fields(block: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let start = 0;
  let pos = 0;
  while (pos < block.length) {
    const lf = block.indexOf(LF, pos);
    const next = lf < 0 ? block.length : lf + 1;
    if (next < block.length && block[next] !== SP && block[next] !== HT) {
      out.push(block.subarray(start, next));
      start = next;
    }
    pos = next;
  }
  if (start < block.length) out.push(block.subarray(start));
  return out;
}

function oneLine(value: string): string {
  let s = '';
  for (const c of value) s += c < ' ' || c === '\x7f' ? ' ' : c;
  return s;
}

export function editHeaders(raw: Buffer, edit: HeaderEdit): Buffer {
  const { end, eol } = headerEnd(raw);
  const headerBlock = end < 0 ? raw : raw.subarray(0, end);
  const rest = end < 0 ? Buffer.from(eol) : raw.subarray(end);
  const parts: Buffer[] = [];
  for (const f of edit.prepend ?? []) parts.push(Buffer.from(`${f.replace(/\r?\n/g, eol)}${eol}`));
  for (const [name, value] of edit.add) parts.push(Buffer.from(`${name}: ${oneLine(value)}${eol}`));
  let subjectSeen = false;
  const prefix = edit.subjectPrefix ? oneLine(edit.subjectPrefix) : undefined;
  for (const field of fields(headerBlock)) {
    const name = nameOf(field);
    if (name.startsWith(TRAWL_PREFIX) || edit.drop?.(name, field)) continue;
    if (name === 'subject' && prefix !== undefined && !subjectSeen) {
      subjectSeen = true;
      const colon = field.indexOf(0x3a);
      let v = colon + 1;
      while (v < field.length && (field[v] === SP || field[v] === HT)) v++;
      const value = field.subarray(v);
      if (value.toString('latin1').startsWith(prefix)) {
        parts.push(field);
      } else {
        parts.push(Buffer.from(`Subject: ${prefix} `, 'latin1'), value);
      }
      continue;
    }
    parts.push(field);
  }
  // A block that did not end with a line break (headers only, no body) gets one.
  const last = parts[parts.length - 1];
  if (last && last.length > 0 && last[last.length - 1] !== LF) parts.push(Buffer.from(eol));
  if (prefix !== undefined && !subjectSeen) parts.push(Buffer.from(`Subject: ${prefix}${eol}`));
  parts.push(rest);
  return Buffer.concat(parts);
}
