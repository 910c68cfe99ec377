import { createSocket } from 'node:dgram';
import { createServer, type Socket } from 'node:net';

/**
 * A small authoritative DNS responder for tests and benchmarks (RFC 1035): UDP and TCP on
 * 127.0.0.1, a free port of each kind, answering from a zone held in memory. It serves TXT (SPF
 * policies, DKIM keys, DMARC policies, ARC keys), A, AAAA and MX records; a name it does not hold
 * is NXDOMAIN (ENOTFOUND to node's resolver), a name without records of the asked type an empty
 * answer (ENODATA). An answer that does not fit 512 bytes over UDP is sent truncated (TC), and the
 * resolver asks again over TCP, as a real server makes it. Nothing is forwarded or cached.
 */
export interface ZoneRecords {
  /** Each record is a list of character-strings (a long SPF or DKIM value may be split). */
  TXT?: string[][];
  A?: string[];
  AAAA?: string[];
  MX?: { preference: number; exchange: string }[];
}

export type Zone = Record<string, ZoneRecords>;

export interface TestDnsServer {
  /** `127.0.0.1:<port>` for the resolver's setServers (UDP and TCP share the port). */
  address: string;
  port: number;
  /** Replaces or adds the records of a name. */
  set(name: string, records: ZoneRecords): void;
  /** Queries answered so far (UDP and TCP). */
  queries(): number;
  close(): Promise<void>;
}

const TYPE = { A: 1, MX: 15, TXT: 16, AAAA: 28 } as const;
const UDP_MAX = 512;

function readName(b: Buffer, at: number): { name: string; end: number } {
  const labels: string[] = [];
  let p = at;
  for (let n = 0; n < 128 && p < b.length; n++) {
    const len = b[p] as number;
    if (len === 0) return { name: labels.join('.').toLowerCase(), end: p + 1 };
    if (len >= 0xc0) throw new Error('compressed name in a question');
    labels.push(b.toString('latin1', p + 1, p + 1 + len));
    p += 1 + len;
  }
  throw new Error('bad name');
}

function writeName(name: string): Buffer {
  const parts = name
    .replace(/\.$/, '')
    .split('.')
    .filter((l) => l !== '')
    .map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'latin1')]));
  return Buffer.concat([...parts, Buffer.from([0])]);
}

function rr(type: number, rdata: Buffer): Buffer {
  const head = Buffer.alloc(12);
  head.writeUInt16BE(0xc00c, 0); // the name of the question
  head.writeUInt16BE(type, 2);
  head.writeUInt16BE(1, 4); // IN
  head.writeUInt32BE(60, 6);
  head.writeUInt16BE(rdata.length, 10);
  return Buffer.concat([head, rdata]);
}

function rdataOf(type: number, r: ZoneRecords): Buffer[] {
  switch (type) {
    case TYPE.TXT:
      return (r.TXT ?? []).map((strings) =>
        Buffer.concat(
          strings.flatMap((s) => {
            const out: Buffer[] = [];
            const bytes = Buffer.from(s, 'utf8');
            for (let i = 0; i < bytes.length || i === 0; i += 255) {
              const chunk = bytes.subarray(i, i + 255);
              out.push(Buffer.from([chunk.length]), chunk);
              if (bytes.length === 0) break;
            }
            return out;
          }),
        ),
      );
    case TYPE.A:
      return (r.A ?? []).map((ip) => Buffer.from(ip.split('.').map(Number)));
    case TYPE.AAAA:
      return (r.AAAA ?? []).map((ip) => {
        const [head = '', tail = ''] = ip.split('::');
        const h = head ? head.split(':') : [];
        const t = tail ? tail.split(':') : [];
        const groups = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
        const b = Buffer.alloc(16);
        groups.forEach((g, i) => {
          b.writeUInt16BE(Number.parseInt(g || '0', 16), i * 2);
        });
        return b;
      });
    case TYPE.MX:
      return (r.MX ?? []).map((m) => {
        const pref = Buffer.alloc(2);
        pref.writeUInt16BE(m.preference);
        return Buffer.concat([pref, writeName(m.exchange)]);
      });
    default:
      return [];
  }
}

/** The answer to one query message, or undefined for a message that is not a query. */
function answer(q: Buffer, zone: Zone, udp: boolean): Buffer | undefined {
  if (q.length < 12 || (q[2] as number) & 0x80) return undefined;
  const id = q.readUInt16BE(0);
  const rd = (q[2] as number) & 0x01;
  let name: string;
  let qEnd: number;
  try {
    const n = readName(q, 12);
    name = n.name;
    qEnd = n.end + 4;
  } catch {
    return undefined;
  }
  if (qEnd > q.length) return undefined;
  const type = q.readUInt16BE(qEnd - 4);
  const question = q.subarray(12, qEnd);
  const records = zone[name];
  const answers = records ? rdataOf(type, records).map((d) => rr(type, d)) : [];
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header[2] = 0x84 | rd; // QR, AA, RD as asked
  header[3] = 0x80 | (records ? 0 : 3); // RA; NXDOMAIN for an unknown name
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(answers.length, 6);
  let msg = Buffer.concat([header, question, ...answers]);
  if (udp && msg.length > UDP_MAX) {
    // too large for UDP: the question alone, truncated; the resolver asks again over TCP
    const h = Buffer.from(header);
    h[2] = (h[2] as number) | 0x02;
    h.writeUInt16BE(0, 6);
    msg = Buffer.concat([h, question]);
  }
  return msg;
}

/** Starts the responder on 127.0.0.1 (UDP and TCP on one free port) with `zone` (names lower-case). */
export async function startTestDns(zone: Zone = {}): Promise<TestDnsServer> {
  const z: Zone = {};
  for (const [k, v] of Object.entries(zone)) z[k.toLowerCase().replace(/\.$/, '')] = v;
  let count = 0;
  const tcp = createServer((sock: Socket) => {
    let buf = Buffer.alloc(0);
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 2) {
        const len = buf.readUInt16BE(0);
        if (buf.length < 2 + len) break;
        const a = answer(buf.subarray(2, 2 + len), z, false);
        buf = buf.subarray(2 + len);
        if (!a) continue;
        count++;
        const l = Buffer.alloc(2);
        l.writeUInt16BE(a.length);
        sock.write(Buffer.concat([l, a]));
      }
    });
    sock.on('error', () => undefined);
  });
  // UDP and TCP on the same port: take a free TCP port, then bind UDP to it (retry on a clash)
  for (let attempt = 0; ; attempt++) {
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
    const port = (tcp.address() as { port: number }).port;
    const udp = createSocket('udp4');
    const bound = await new Promise<boolean>((resolve) => {
      udp.once('error', () => resolve(false));
      udp.bind(port, '127.0.0.1', () => resolve(true));
    });
    if (!bound) {
      udp.close();
      await new Promise<void>((r) => tcp.close(() => r()));
      if (attempt >= 20) throw new Error('no free port for the test DNS server');
      continue;
    }
    udp.on('message', (msg, peer) => {
      const a = answer(msg, z, true);
      if (!a) return;
      count++;
      udp.send(a, peer.port, peer.address);
    });
    udp.on('error', () => undefined);
    return {
      address: `127.0.0.1:${port}`,
      port,
      set(name, records) {
        z[name.toLowerCase().replace(/\.$/, '')] = records;
      },
      queries: () => count,
      async close() {
        await new Promise<void>((r) => udp.close(() => r()));
        await new Promise<void>((r) => tcp.close(() => r()));
      },
    };
  }
}
