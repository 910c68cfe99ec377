/**
 * The part decoders mailparser puts behind each MIME leaf, as plain accumulators: what a stream
 * decoder would emit for the same writes, chunk by chunk where the chunking shows in the result.
 */
import { decodeQuotedPrintable } from './quoted-printable.ts';

/** libbase64 1.3's `decode`: Buffer.from stops at the first `=`, so padded segments go one by one. */
function decodeBase64Segments(str: string): Buffer {
  const padPos = str.indexOf('=');
  if (padPos >= 0 && /[a-zA-Z0-9+/\-_]/.test(str.substr(padPos))) {
    const parts: Buffer[] = [];
    for (const segment of str.split(/[=]+/)) {
      if (segment) parts.push(Buffer.from(segment, 'base64'));
    }
    return Buffer.concat(parts);
  }
  return Buffer.from(str, 'base64');
}

const BASE64_ALPHABET = new Uint8Array(256);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=') {
  BASE64_ALPHABET[c.charCodeAt(0)] = 1;
}

/** The bytes of `chunk` that are base64 characters (`[a-zA-Z0-9+/=]`), as a latin1 string. */
function base64Chars(chunk: Buffer): string {
  // the common case: lines of base64 with CRLF or LF line ends; drop those without a regex
  let out = '';
  let from = 0;
  const n = chunk.length;
  for (let i = 0; i < n; i++) {
    const c = chunk[i] as number;
    if (BASE64_ALPHABET[c] === 1) continue;
    if (c >= 0x80) {
      // libbase64 reads the chunk as 'ascii' (bytes & 0x7f): a high byte may turn into an alphabet char
      return chunk.toString('ascii').replace(/[^a-zA-Z0-9+/=]/g, '');
    }
    if (i > from) out += chunk.toString('latin1', from, i);
    from = i + 1;
  }
  if (from === 0) return chunk.toString('latin1', 0, n);
  if (n > from) out += chunk.toString('latin1', from, n);
  return out;
}

export type PartEncoding = 'base64' | 'quoted-printable' | 'binary';

/**
 * One part decoder. `write` after `end` does nothing (the stream is no longer writable, and
 * mailparser checks `writable` before writing); `output` is what the decoder emitted, in order.
 */
/**
 * Base64 text a single Buffer.from decodes exactly as libbase64 does: no garbage, padding at the end.
 * The language of `^[A-Za-z0-9+/\r\n]*={0,2}[\r\n]*$` written so that it backtracks in linear time
 * (that form retried the trailing `[\r\n]*` from every line break: quadratic on many line breaks
 * followed by one bad character).
 */
const CLEAN_BASE64 = /^[A-Za-z0-9+/\r\n]*(?:={1,2}[\r\n]*)?$/;

/**
 * One part decoder. `write` after `end` does nothing (the stream is no longer writable, and
 * mailparser checks `writable` before writing); `output` is what the decoder emitted, in order,
 * complete once `ended` (nothing reads it before).
 */
export class PartDecoder {
  readonly output: Buffer[] = [];
  ended = false;
  private curLine = '';
  /** Writes not decoded yet (base64, quoted-printable): decoded at `end`. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(readonly encoding: PartEncoding) {}

  write(chunk: Buffer): void {
    if (this.ended || chunk.length === 0) return;
    if (this.encoding === 'binary') this.output.push(chunk);
    else {
      this.pending.push(chunk);
      this.pendingBytes += chunk.length;
    }
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    const pending = this.pending;
    this.pending = [];
    if (this.encoding === 'quoted-printable') {
      if (this.pendingBytes > 0) {
        this.output.push(decodeQuotedPrintable(Buffer.concat(pending, this.pendingBytes)));
      }
      return;
    }
    if (this.encoding !== 'base64') return;
    if (pending.length === 0) return;
    // clean base64 (padding only at the very end): libbase64's quartets, carried from write to
    // write, decode to what one Buffer.from of the whole text gives
    const all =
      pending.length === 1 ? (pending[0] as Buffer) : Buffer.concat(pending, this.pendingBytes);
    const text = all.toString('latin1');
    if (CLEAN_BASE64.test(text)) {
      const out = Buffer.from(text, 'base64');
      if (out.length > 0) this.output.push(out);
      return;
    }
    for (const chunk of pending) this.writeBase64(chunk);
    if (this.curLine) {
      this.output.push(decodeBase64Segments(this.curLine));
      this.curLine = '';
    }
  }

  /** libbase64 Decoder#_transform for one write. */
  private writeBase64(chunk: Buffer): void {
    let b64 = this.curLine + base64Chars(chunk);
    this.curLine = '';
    let padded = '';
    const lastPad = b64.lastIndexOf('=');
    if (lastPad >= 0) {
      padded = b64.substr(0, lastPad + 1);
      b64 = b64.substr(lastPad + 1);
    }
    if (b64.length < 4) {
      this.curLine = b64;
      b64 = '';
    } else if (b64.length % 4) {
      this.curLine = b64.substr(-b64.length % 4);
      b64 = b64.substr(0, b64.length - this.curLine.length);
    }
    b64 = padded + b64;
    if (b64) this.output.push(decodeBase64Segments(b64));
  }
}
