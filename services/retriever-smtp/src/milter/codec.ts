/**
 * Reading and writing milter packets (protocol.ts). The decoder is fed the bytes of a socket as
 * they come and hands out whole packets; it is hostile input (any peer that can reach the port
 * writes it), so it keeps at most one packet of at most `maxPacketBytes` and refuses a length
 * outside 1..maxPacketBytes before it has buffered any of it. Nothing here throws: a refusal is an
 * answer the session acts on (it closes the connection; Postfix then applies
 * `milter_default_action`, tempfail).
 */

export interface Packet {
  cmd: number;
  data: Buffer;
}

/** What the decoder made of the bytes read: whole packets, or a refused length. */
export type Decoded =
  | { kind: 'packets'; packets: Packet[] }
  | { kind: 'refused'; reason: string; length: number };

/** Decodes milter packets (4-byte length, command, data), keeping at most one packet and refusing a length out of bounds before reading it. */
export class PacketDecoder {
  /** Bytes buffered and not yet handed out (never more than one packet's header and data). */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private refusedWith: string | undefined;

  constructor(readonly maxPacketBytes: number) {}

  /** Bytes held now (for the bound's test). */
  get buffered(): number {
    return this.pendingBytes;
  }

  push(chunk: Buffer): Decoded {
    if (this.refusedWith !== undefined)
      return { kind: 'refused', reason: this.refusedWith, length: 0 };
    const packets: Packet[] = [];
    let buf = this.pendingBytes === 0 ? chunk : Buffer.concat([...this.pending, chunk]);
    this.pending = [];
    this.pendingBytes = 0;
    let pos = 0;
    while (buf.length - pos >= 4) {
      const length = buf.readUInt32BE(pos);
      if (length < 1 || length > this.maxPacketBytes) {
        this.refusedWith =
          length < 1 ? 'empty packet' : `packet of ${length} bytes over ${this.maxPacketBytes}`;
        return { kind: 'refused', reason: this.refusedWith, length };
      }
      if (buf.length - pos - 4 < length) break;
      const cmd = buf[pos + 4] as number;
      // a copy: the packet outlives the socket's chunk, and must not hold the rest of it
      const data = Buffer.from(buf.subarray(pos + 5, pos + 4 + length));
      packets.push({ cmd, data });
      pos += 4 + length;
    }
    if (pos < buf.length) {
      buf = buf.subarray(pos);
      this.pending = [Buffer.from(buf)];
      this.pendingBytes = buf.length;
    }
    return { kind: 'packets', packets };
  }
}

/** One packet: length, command, data. */
export function encodePacket(cmd: number, ...parts: Buffer[]): Buffer {
  let length = 1;
  for (const p of parts) length += p.length;
  const head = Buffer.alloc(5);
  head.writeUInt32BE(length, 0);
  head[4] = cmd;
  return Buffer.concat([head, ...parts], 4 + length);
}

/**
 * A NUL-terminated string (NULs inside it cut: the peer would read them as the end). Header text
 * is handled as latin1 (one character per byte: 8-bit header bytes come back as they were).
 */
export function cstr(s: string, encoding: 'utf8' | 'latin1' = 'utf8'): Buffer {
  const at = s.indexOf('\0');
  return Buffer.from(`${at < 0 ? s : s.slice(0, at)}\0`, encoding);
}

export function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0, 0);
  return b;
}

/** The NUL-terminated strings of a packet's data (a last one without NUL is kept as it is). */
export function cstrings(data: Buffer, encoding: 'utf8' | 'latin1' = 'utf8', max = 256): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < data.length && out.length < max) {
    let end = data.indexOf(0, start);
    if (end < 0) end = data.length;
    out.push(data.toString(encoding, start, end));
    start = end + 1;
  }
  return out;
}
