import { MailUnparseableError } from './errors.ts';

/**
 * A bounded reader of Compound File Binary files ([MS-CFB]: the container of Outlook .msg files).
 * Written for hostile input: every sector chain is walked at most once (a cycle or a chain longer
 * than the file is refused), every offset is checked against the buffer, the number of directory
 * entries and the size of every stream are bounded by the file itself. Anything malformed throws
 * MailUnparseableError (422); nothing loops or allocates more than the file's size.
 */

const SIGNATURE = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
const END_OF_CHAIN = 0xfffffffe;
const FREE_SECT = 0xffffffff;
const NO_STREAM = 0xffffffff;
const MAX_ENTRIES = 65_536;

export interface CfbEntry {
  name: string;
  /** 1 storage, 2 stream, 5 root. */
  type: number;
  /** Children of a storage (or of the root), by name. */
  children: Map<string, CfbEntry>;
  /** A stream's bytes (empty for a storage). */
  data(): Buffer;
}

function bad(what: string): MailUnparseableError {
  return new MailUnparseableError(`not a readable Outlook message (CFB): ${what}`);
}

/** True when `buf` starts with the CFB signature. */
export function isCfb(buf: Buffer): boolean {
  return buf.length >= 512 && buf.subarray(0, 8).equals(SIGNATURE);
}

/** Reads the directory of a CFB file; streams are read on demand by `data()`. */
export function readCfb(buf: Buffer): CfbEntry {
  if (!isCfb(buf)) throw bad('no CFB signature');
  const sectorShift = buf.readUInt16LE(0x1e);
  const miniShift = buf.readUInt16LE(0x20);
  if (sectorShift !== 9 && sectorShift !== 12) throw bad('bad sector size');
  if (miniShift !== 6) throw bad('bad mini sector size');
  const sectorSize = 1 << sectorShift;
  const perSector = sectorSize / 4;
  const sectorCount = Math.floor((buf.length - 512) / sectorSize) + 1;
  const miniCutoff = buf.readUInt32LE(0x38);
  const firstDir = buf.readUInt32LE(0x30);
  const firstMiniFat = buf.readUInt32LE(0x3c);
  const numFat = buf.readUInt32LE(0x2c);
  let difatSector = buf.readUInt32LE(0x44);
  const numDifat = buf.readUInt32LE(0x48);
  if (numFat > sectorCount || numDifat > sectorCount) throw bad('sector counts beyond the file');

  const sectorOffset = (n: number): number => {
    if (n >= sectorCount) throw bad(`sector ${n} beyond the file`);
    const off = (n + 1) * sectorSize;
    if (off + sectorSize > buf.length) {
      // a truncated last sector: readable up to the end of the file
      if (off >= buf.length) throw bad(`sector ${n} beyond the file`);
    }
    return off;
  };
  const u32 = (off: number): number => (off + 4 <= buf.length ? buf.readUInt32LE(off) : FREE_SECT);

  // FAT sectors: 109 in the header, then the DIFAT chain
  const fatSectors: number[] = [];
  for (let i = 0; i < 109 && fatSectors.length < numFat; i++) {
    const s = buf.readUInt32LE(0x4c + i * 4);
    if (s === FREE_SECT) break;
    fatSectors.push(s);
  }
  const seenDifat = new Set<number>();
  while (fatSectors.length < numFat && difatSector !== END_OF_CHAIN && difatSector !== FREE_SECT) {
    if (seenDifat.has(difatSector) || seenDifat.size > numDifat) throw bad('DIFAT chain loops');
    seenDifat.add(difatSector);
    const off = sectorOffset(difatSector);
    for (let i = 0; i < perSector - 1 && fatSectors.length < numFat; i++) {
      const s = u32(off + i * 4);
      if (s === FREE_SECT) continue;
      fatSectors.push(s);
    }
    difatSector = u32(off + (perSector - 1) * 4);
  }
  const fat = new Uint32Array(fatSectors.length * perSector);
  fatSectors.forEach((s, i) => {
    const off = sectorOffset(s);
    for (let j = 0; j < perSector; j++) fat[i * perSector + j] = u32(off + j * 4);
  });

  // Work budget: streams that share sectors (a hostile directory pointing many entries at one long
  // chain) could make the reads quadratic; all chains together may walk 4 times the file's sectors.
  let walkBudget = 4 * (sectorCount + 16) + 4 * Math.ceil(buf.length / 64);
  /** A chain of sectors from `start` (each at most once; a loop or a dangling link throws). */
  const chain = (start: number, table: Uint32Array, limit: number): number[] => {
    const out: number[] = [];
    const seen = new Set<number>();
    let s = start;
    while (s !== END_OF_CHAIN) {
      if (s === FREE_SECT && out.length === 0) return out;
      if (s >= table.length || seen.has(s) || out.length >= limit) throw bad('sector chain loops');
      if (--walkBudget < 0) throw bad('streams read more than the file holds');
      seen.add(s);
      out.push(s);
      s = table[s] as number;
    }
    return out;
  };
  const readChain = (start: number, size: number): Buffer => {
    const sectors = chain(start, fat, sectorCount);
    const parts: Buffer[] = [];
    let left = size;
    for (const s of sectors) {
      if (left <= 0) break;
      const off = sectorOffset(s);
      const n = Math.min(sectorSize, left, buf.length - off);
      parts.push(buf.subarray(off, off + n));
      left -= n;
    }
    if (left > 0) throw bad('stream shorter than its size');
    return Buffer.concat(parts);
  };

  // directory
  const dirSectors = chain(firstDir, fat, sectorCount);
  const dirBuf = Buffer.concat(
    dirSectors.map((s) => {
      const off = sectorOffset(s);
      return buf.subarray(off, Math.min(off + sectorSize, buf.length));
    }),
  );
  const entryCount = Math.min(Math.floor(dirBuf.length / 128), MAX_ENTRIES);
  if (entryCount === 0) throw bad('no directory');
  interface Raw {
    name: string;
    type: number;
    left: number;
    right: number;
    child: number;
    start: number;
    size: number;
  }
  const raws: Raw[] = [];
  for (let i = 0; i < entryCount; i++) {
    const o = i * 128;
    const nameLen = Math.min(dirBuf.readUInt16LE(o + 64), 64);
    const name = dirBuf
      .subarray(o, o + Math.max(0, nameLen - 2))
      .toString('utf16le')
      .replace(/\0+$/, '');
    const sizeHigh = sectorShift === 12 ? dirBuf.readUInt32LE(o + 124) : 0;
    raws.push({
      name,
      type: dirBuf[o + 66] as number,
      left: dirBuf.readUInt32LE(o + 68),
      right: dirBuf.readUInt32LE(o + 72),
      child: dirBuf.readUInt32LE(o + 76),
      start: dirBuf.readUInt32LE(o + 116),
      size: sizeHigh > 0 ? Number.MAX_SAFE_INTEGER : dirBuf.readUInt32LE(o + 120),
    });
  }
  const root = raws[0] as Raw;
  if (root.type !== 5) throw bad('no root entry');

  // mini stream (in the root's chain) and mini FAT
  let miniStream: Buffer | undefined;
  let miniFat: Uint32Array | undefined;
  const mini = (): { stream: Buffer; table: Uint32Array } => {
    if (!miniStream || !miniFat) {
      if (root.size > buf.length) throw bad('mini stream larger than the file');
      miniStream = root.start === END_OF_CHAIN ? Buffer.alloc(0) : readChain(root.start, root.size);
      const mfSectors = firstMiniFat === END_OF_CHAIN ? [] : chain(firstMiniFat, fat, sectorCount);
      miniFat = new Uint32Array(mfSectors.length * perSector);
      mfSectors.forEach((s, i) => {
        const off = sectorOffset(s);
        for (let j = 0; j < perSector; j++)
          (miniFat as Uint32Array)[i * perSector + j] = u32(off + j * 4);
      });
    }
    return { stream: miniStream, table: miniFat };
  };
  const readStream = (r: Raw): Buffer => {
    if (r.size === 0) return Buffer.alloc(0);
    if (r.size > buf.length) throw bad('stream larger than the file');
    if (r.size >= miniCutoff) return readChain(r.start, r.size);
    const { stream, table } = mini();
    const sectors = chain(r.start, table, table.length);
    const parts: Buffer[] = [];
    let left = r.size;
    for (const s of sectors) {
      if (left <= 0) break;
      const off = s * 64;
      if (off >= stream.length) throw bad('mini sector beyond the mini stream');
      const n = Math.min(64, left, stream.length - off);
      parts.push(stream.subarray(off, off + n));
      left -= n;
    }
    if (left > 0) throw bad('stream shorter than its size');
    return Buffer.concat(parts);
  };

  // the tree: each entry is placed once (a directory that links an entry twice is refused)
  const placed = new Set<number>();
  const build = (index: number): CfbEntry => {
    const r = raws[index] as Raw;
    const children = new Map<string, CfbEntry>();
    const entry: CfbEntry = {
      name: r.name,
      type: r.type,
      children,
      data: () => (r.type === 2 ? readStream(r) : Buffer.alloc(0)),
    };
    if (r.type === 1 || r.type === 5) {
      const stack = [r.child];
      while (stack.length > 0) {
        const c = stack.pop() as number;
        if (c === NO_STREAM) continue;
        if (c >= raws.length || placed.has(c)) throw bad('directory links an entry twice');
        placed.add(c);
        const cr = raws[c] as Raw;
        stack.push(cr.left, cr.right);
        if (cr.type === 1 || cr.type === 2) pending.push([children, c]);
      }
    }
    return entry;
  };
  const pending: [Map<string, CfbEntry>, number][] = [];
  placed.add(0);
  const tree = build(0);
  while (pending.length > 0) {
    const [into, c] = pending.shift() as [Map<string, CfbEntry>, number];
    const e = build(c);
    into.set(e.name.toLowerCase(), e);
  }
  return tree;
}
