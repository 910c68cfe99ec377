import { joinLines, oneLineValue, splitHeader, valueLines } from './header-lines.ts';

/**
 * Rewrites the header block of a raw message: removes every `X-Trawl-*` field the message came
 * with (a sender must not be able to write its own verdict), adds the filter's fields on top, and
 * may prefix the Subject. Lines are split as mail servers read them (header-lines.ts: CR, LF and
 * CRLF alike) and the block is written back with one line end, so a bare CR can never hide a field
 * from this rewrite and show it to the mailbox. The body is copied byte for byte.
 */

export interface HeaderEdit {
  /** Fields to add, in order: [name, value]; values are written on one line. */
  add: [string, string][];
  /**
   * Whole fields written on top, before `add`, as given: a field folded over several lines keeps
   * them (any of CR, LF, CRLF ends one; empty lines are left out, they would end the header).
   */
  prepend?: string[];
  /** Other fields to remove: true for a field (its lower-case name, its bytes) to drop. */
  drop?: ((name: string, field: Buffer) => boolean) | undefined;
  /** Prefix written before the Subject (a Subject is added when the message has none). */
  subjectPrefix?: string | undefined;
}

const SP = 0x20;
const HT = 0x09;
const TRAWL_PREFIX = 'x-trawl-';

/** Rewrites a message's header: drops the sender's X-Trawl-* fields, adds the filter's, may prefix the Subject. */
export function editHeaders(raw: Buffer, edit: HeaderEdit): Buffer {
  const { fields, bodyStart, eol } = splitHeader(raw);
  const lines: Uint8Array[] = [];
  for (const f of edit.prepend ?? []) {
    for (const l of valueLines(f)) if (l.trim() !== '') lines.push(Buffer.from(l));
  }
  for (const [name, value] of edit.add) lines.push(Buffer.from(`${name}: ${oneLineValue(value)}`));
  let subjectSeen = false;
  const prefix = edit.subjectPrefix ? oneLineValue(edit.subjectPrefix) : undefined;
  for (const field of fields) {
    if (field.name.startsWith(TRAWL_PREFIX)) continue;
    if (edit.drop?.(field.name, joinLines(field.lines, eol))) continue;
    const [first, ...rest] = field.lines;
    if (first && field.name === 'subject' && prefix !== undefined && !subjectSeen) {
      subjectSeen = true;
      let v = first.indexOf(0x3a) + 1;
      while (v < first.length && (first[v] === SP || first[v] === HT)) v++;
      const value = first.subarray(v);
      // compared and written as UTF-8 bytes (latin1 would cut a character to its low byte: a CR)
      const mark = Buffer.from(prefix);
      const prefixed = value.subarray(0, mark.length).equals(mark);
      lines.push(prefixed ? first : Buffer.concat([Buffer.from(`Subject: ${prefix} `), value]));
      lines.push(...rest);
      continue;
    }
    lines.push(...field.lines);
  }
  if (prefix !== undefined && !subjectSeen) lines.push(Buffer.from(`Subject: ${prefix}`));
  const body = bodyStart < 0 ? Buffer.alloc(0) : raw.subarray(bodyStart);
  return Buffer.concat([joinLines(lines, eol), Buffer.from(eol), body]);
}
