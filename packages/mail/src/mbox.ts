/**
 * mbox files (RFC 4155): messages one after the other, each starting with a `From ` line at the
 * start of a line. Inside a message a body line that began with `From ` was written as `>From `
 * (and `>From ` as `>>From `, mboxrd): one `>` is taken off again. A scan of the bytes, no regex.
 */

const FROM = Buffer.from('From ', 'latin1');

/** True when the file starts with an mbox `From ` separator line. */
export function isMbox(buf: Buffer): boolean {
  return buf.length > 5 && buf.subarray(0, 5).equals(FROM);
}

/** `>From `, `>>From `, ... at `i`: the number of `>` (0 when the line is not one). */
function quotedFrom(buf: Buffer, i: number): number {
  let j = i;
  while (j < buf.length && buf[j] === 0x3e) j++;
  if (j === i) return 0;
  return buf.subarray(j, j + 5).equals(FROM) ? j - i : 0;
}

function unquote(msg: Buffer): Buffer {
  const parts: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < msg.length; ) {
    if (quotedFrom(msg, i) > 0) {
      parts.push(msg.subarray(start, i));
      start = i + 1; // drop one '>'
    }
    const nl = msg.indexOf(10, i);
    if (nl < 0) break;
    i = nl + 1;
  }
  if (start === 0) return msg;
  parts.push(msg.subarray(start));
  return Buffer.concat(parts);
}

/**
 * The messages of an mbox file, in order, each without its `From ` line and unquoted; at most
 * `max` (the rest are counted in `dropped`).
 */
export function splitMbox(buf: Buffer, max = 100_000): { messages: Buffer[]; dropped: number } {
  const starts: number[] = [];
  for (let i = 0; i < buf.length; ) {
    if (buf.subarray(i, i + 5).equals(FROM)) starts.push(i);
    const nl = buf.indexOf(10, i);
    if (nl < 0) break;
    i = nl + 1;
  }
  if (starts.length === 0 || starts[0] !== 0) starts.unshift(0);
  const messages: Buffer[] = [];
  let dropped = 0;
  for (let k = 0; k < starts.length; k++) {
    const from = starts[k] as number;
    const to = k + 1 < starts.length ? (starts[k + 1] as number) : buf.length;
    let body = buf.subarray(from, to);
    if (body.subarray(0, 5).equals(FROM)) {
      const nl = body.indexOf(10);
      body = nl < 0 ? Buffer.alloc(0) : body.subarray(nl + 1);
    }
    // the blank line that separates a message from the next `From ` line belongs to neither
    if (k + 1 < starts.length) {
      if (body.length >= 2 && body[body.length - 1] === 10 && body[body.length - 2] === 10)
        body = body.subarray(0, body.length - 1);
      else if (body.length >= 4 && body.subarray(body.length - 4).toString('latin1') === '\r\n\r\n')
        body = body.subarray(0, body.length - 2);
    }
    if (body.length === 0 || body.toString('latin1').trim() === '') continue;
    if (messages.length >= max) {
      dropped++;
      continue;
    }
    messages.push(unquote(body));
  }
  return { messages, dropped };
}
