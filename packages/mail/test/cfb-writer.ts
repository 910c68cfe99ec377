/**
 * A minimal Compound File Binary writer for tests ([MS-CFB] version 3: 512-byte sectors, streams
 * under 4096 bytes in the mini stream), enough to build Outlook .msg fixtures in the test itself.
 */

export type CfbNode = { name: string; data: Buffer } | { name: string; children: CfbNode[] };

const END = 0xfffffffe;
const FREE = 0xffffffff;
const FATSECT = 0xfffffffd;
const NOSTREAM = 0xffffffff;

interface Flat {
  name: string;
  type: 1 | 2 | 5;
  data?: Buffer;
  child: number;
  right: number;
  start: number;
  size: number;
}

export function writeCfb(rootChildren: CfbNode[]): Buffer {
  const flat: Flat[] = [
    { name: 'Root Entry', type: 5, child: NOSTREAM, right: NOSTREAM, start: END, size: 0 },
  ];
  const place = (parent: number, nodes: CfbNode[]) => {
    let prev = -1;
    for (const n of nodes) {
      const i = flat.length;
      const isStream = 'data' in n;
      flat.push({
        name: n.name,
        type: isStream ? 2 : 1,
        ...(isStream ? { data: n.data } : {}),
        child: NOSTREAM,
        right: NOSTREAM,
        start: END,
        size: isStream ? n.data.length : 0,
      });
      if (prev < 0) (flat[parent] as Flat).child = i;
      else (flat[prev] as Flat).right = i;
      prev = i;
      if (!isStream) place(i, n.children);
    }
  };
  place(0, rootChildren);

  // mini stream: streams under 4096 bytes, 64-byte mini sectors
  const miniFat: number[] = [];
  const miniParts: Buffer[] = [];
  for (const e of flat) {
    if (e.type !== 2 || !e.data || e.data.length >= 4096 || e.data.length === 0) continue;
    const n = Math.ceil(e.data.length / 64);
    e.start = miniFat.length;
    for (let k = 0; k < n; k++) miniFat.push(k === n - 1 ? END : miniFat.length + 1);
    const padded = Buffer.alloc(n * 64);
    e.data.copy(padded);
    miniParts.push(padded);
  }
  const miniStream = Buffer.concat(miniParts);
  const big = flat.filter((e) => e.type === 2 && e.data && e.data.length >= 4096);

  const sectorsOf = (bytes: number) => Math.ceil(bytes / 512);
  const dirSectors = sectorsOf(flat.length * 128);
  const miniFatSectors = sectorsOf(miniFat.length * 4);
  const miniStreamSectors = sectorsOf(miniStream.length);
  const bigSectors = big.reduce((s, e) => s + sectorsOf((e.data as Buffer).length), 0);
  let fatSectors = 1;
  for (;;) {
    const total = fatSectors + dirSectors + miniFatSectors + miniStreamSectors + bigSectors;
    if (fatSectors * 128 >= total) break;
    fatSectors++;
  }
  const total = fatSectors + dirSectors + miniFatSectors + miniStreamSectors + bigSectors;
  const fat = new Array<number>(fatSectors * 128).fill(FREE);
  let next = 0;
  const run = (count: number): number => {
    if (count === 0) return END;
    const start = next;
    for (let k = 0; k < count; k++) fat[next + k] = k === count - 1 ? END : next + k + 1;
    next += count;
    return start;
  };
  for (let k = 0; k < fatSectors; k++) fat[next++] = FATSECT;
  const dirStart = run(dirSectors);
  const miniFatStart = run(miniFatSectors);
  const miniStreamStart = run(miniStreamSectors);
  const root = flat[0] as Flat;
  root.start = miniStream.length > 0 ? miniStreamStart : END;
  root.size = miniStream.length;
  for (const e of big) e.start = run(sectorsOf((e.data as Buffer).length));

  const out = Buffer.alloc(512 + total * 512);
  Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(out, 0);
  out.writeUInt16LE(0x3e, 0x18);
  out.writeUInt16LE(3, 0x1a);
  out.writeUInt16LE(0xfffe, 0x1c);
  out.writeUInt16LE(9, 0x1e);
  out.writeUInt16LE(6, 0x20);
  out.writeUInt32LE(fatSectors, 0x2c);
  out.writeUInt32LE(dirStart, 0x30);
  out.writeUInt32LE(4096, 0x38);
  out.writeUInt32LE(miniFatSectors > 0 ? miniFatStart : END, 0x3c);
  out.writeUInt32LE(miniFatSectors, 0x40);
  out.writeUInt32LE(END, 0x44);
  out.writeUInt32LE(0, 0x48);
  for (let i = 0; i < 109; i++) out.writeUInt32LE(i < fatSectors ? i : FREE, 0x4c + i * 4);
  const sector = (n: number) => 512 + n * 512;
  fat.forEach((v, i) => {
    out.writeUInt32LE(v >>> 0, sector(Math.floor(i / 128)) + (i % 128) * 4);
  });
  flat.forEach((e, i) => {
    const o = sector(dirStart) + i * 128;
    const name = Buffer.from(`${e.name}\0`, 'utf16le');
    name.copy(out, o, 0, Math.min(64, name.length));
    out.writeUInt16LE(Math.min(64, name.length), o + 64);
    out[o + 66] = e.type;
    out[o + 67] = 1;
    out.writeUInt32LE(NOSTREAM, o + 68);
    out.writeUInt32LE(e.right >>> 0, o + 72);
    out.writeUInt32LE(e.child >>> 0, o + 76);
    out.writeUInt32LE(e.start >>> 0, o + 116);
    out.writeUInt32LE(e.size, o + 120);
  });
  miniFat.forEach((v, i) => {
    out.writeUInt32LE(v >>> 0, sector(miniFatStart) + i * 4);
  });
  if (miniStream.length > 0) miniStream.copy(out, sector(miniStreamStart));
  for (const e of big) (e.data as Buffer).copy(out, sector(e.start));
  return out;
}

/** A string property stream of a .msg (PT_UNICODE). */
function unicodeProp(id: number, value: string): CfbNode {
  return {
    name: `__substg1.0_${id.toString(16).toUpperCase().padStart(4, '0')}001F`,
    data: Buffer.from(value, 'utf16le'),
  };
}

/** A binary property stream of a .msg (PT_BINARY). */
function binaryProp(id: number, value: Buffer): CfbNode {
  return { name: `__substg1.0_${id.toString(16).toUpperCase().padStart(4, '0')}0102`, data: value };
}

/** The fixed-size property stream (`__properties_version1.0`) with PT_SYSTIME / PT_LONG values. */
function fixedProps(
  headerBytes: number,
  props: { id: number; type: number; value: Buffer }[],
): CfbNode {
  const b = Buffer.alloc(headerBytes + props.length * 16);
  props.forEach((p, i) => {
    const o = headerBytes + i * 16;
    b.writeUInt32LE(((p.id << 16) | p.type) >>> 0, o);
    b.writeUInt32LE(6, o + 4);
    p.value.copy(b, o + 8, 0, 8);
  });
  return { name: '__properties_version1.0', data: b };
}

function filetime(d: Date): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE((BigInt(d.getTime()) + 11_644_473_600_000n) * 10_000n);
  return b;
}

function long(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeUInt32LE(n);
  return b;
}

/** An Outlook .msg with the given MAPI properties (the common ones a mail holds). */
export function buildMsg(m: {
  subject: string;
  fromName?: string;
  fromAddress?: string;
  to?: { name?: string; address: string; type?: 1 | 2 | 3 }[];
  text?: string;
  html?: string;
  headers?: string;
  date?: Date;
  attachments?: { filename: string; mime?: string; content: Buffer }[];
}): Buffer {
  const root: CfbNode[] = [
    fixedProps(32, m.date ? [{ id: 0x0039, type: 0x0040, value: filetime(m.date) }] : []),
    unicodeProp(0x0037, m.subject),
  ];
  if (m.fromName) root.push(unicodeProp(0x0c1a, m.fromName));
  if (m.fromAddress) root.push(unicodeProp(0x5d01, m.fromAddress));
  if (m.text !== undefined) root.push(unicodeProp(0x1000, m.text));
  if (m.html !== undefined) root.push(binaryProp(0x1013, Buffer.from(m.html, 'utf8')));
  if (m.headers !== undefined) root.push(unicodeProp(0x007d, m.headers));
  (m.to ?? []).forEach((r, i) => {
    root.push({
      name: `__recip_version1.0_#${i.toString(16).toUpperCase().padStart(8, '0')}`,
      children: [
        fixedProps(8, [{ id: 0x0c15, type: 0x0003, value: long(r.type ?? 1) }]),
        unicodeProp(0x39fe, r.address),
        ...(r.name ? [unicodeProp(0x3001, r.name)] : []),
      ],
    });
  });
  (m.attachments ?? []).forEach((a, i) => {
    root.push({
      name: `__attach_version1.0_#${i.toString(16).toUpperCase().padStart(8, '0')}`,
      children: [
        fixedProps(8, []),
        unicodeProp(0x3707, a.filename),
        ...(a.mime ? [unicodeProp(0x370e, a.mime)] : []),
        binaryProp(0x3701, a.content),
      ],
    });
  });
  return writeCfb(root);
}
