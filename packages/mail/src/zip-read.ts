import { constants, inflateRawSync } from 'node:zlib';

/**
 * A bounded reader of zip archives (OOXML and ODF documents are zips): the central directory, and
 * the bytes of one entry, inflated with a ceiling on what it may grow to. Attachments are hostile:
 * every offset is checked against the buffer, the walk stops after `maxEntries`, and an entry that
 * inflates past `maxBytes` (a zip bomb) gives nothing rather than memory.
 */
export interface ZipEntry {
  name: string;
  flags: number;
  encrypted: boolean;
  /** 0 stored, 8 deflated; others are not read. */
  method: number;
  compressedSize: number;
  uncompressedSize: number;
  /** Offset of the entry's local header. */
  localOffset: number;
}

const EOCD_SIG = 0x06054b50;
const CD_SIG = 0x02014b50;
const LOCAL_SIG = 0x04034b50;
/** The end-of-central-directory record is in the last 22 + 65535 (comment) bytes. */
const EOCD_SEARCH = 22 + 65535;

/** The entry a zip header at `p` describes (central directory or local header: other offsets). */
export function zipHeaderAt(
  b: Buffer,
  p: number,
  flagsAt: number,
  nameLenAt: number,
  nameAt: number,
): { flags: number; encrypted: boolean; name: string; nameLen: number; extraLen: number } {
  const flags = b.readUInt16LE(p + flagsAt);
  const nameLen = b.readUInt16LE(p + nameLenAt);
  const start = p + nameAt;
  return {
    flags,
    encrypted: (flags & 1) === 1,
    name: b.toString(flags & 0x800 ? 'utf8' : 'latin1', start, Math.min(b.length, start + nameLen)),
    nameLen,
    extraLen: b.readUInt16LE(p + nameLenAt + 2),
  };
}

/** The entries of the central directory (at most `maxEntries`); [] when there is none to read. */
export function zipDirectory(b: Buffer, maxEntries: number): ZipEntry[] {
  const out: ZipEntry[] = [];
  if (b.length < 22) return out;
  const from = Math.max(0, b.length - EOCD_SEARCH);
  let eocd = -1;
  for (let i = b.length - 22; i >= from; i--) {
    if (b[i] === 0x50 && b[i + 1] === 0x4b && b.readUInt32LE(i) === EOCD_SIG) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) return out;
  const count = b.readUInt16LE(eocd + 10);
  let p = b.readUInt32LE(eocd + 16);
  for (let n = 0; n < count && n < maxEntries && p + 46 <= b.length; n++) {
    if (b.readUInt32LE(p) !== CD_SIG) break;
    const e = zipHeaderAt(b, p, 8, 28, 46);
    out.push({
      name: e.name,
      flags: e.flags,
      encrypted: e.encrypted,
      method: b.readUInt16LE(p + 10),
      compressedSize: b.readUInt32LE(p + 20),
      uncompressedSize: b.readUInt32LE(p + 24),
      localOffset: b.readUInt32LE(p + 42),
    });
    p += 46 + e.nameLen + e.extraLen + b.readUInt16LE(p + 32); // + comment length
  }
  return out;
}

/**
 * The content of one entry, at most `maxBytes` once inflated; undefined when it cannot be read
 * (encrypted, another method, a header out of bounds, a broken stream, or larger than `maxBytes`).
 * A stream cut short gives what it holds.
 */
export function zipEntryBytes(b: Buffer, e: ZipEntry, maxBytes: number): Buffer | undefined {
  if (e.encrypted || (e.method !== 0 && e.method !== 8)) return undefined;
  const p = e.localOffset;
  if (p + 30 > b.length || b.readUInt32LE(p) !== LOCAL_SIG) return undefined;
  const start = p + 30 + b.readUInt16LE(p + 26) + b.readUInt16LE(p + 28);
  if (start > b.length) return undefined;
  const data = b.subarray(start, Math.min(b.length, start + e.compressedSize));
  if (e.method === 0) return data.length <= maxBytes ? data : undefined;
  try {
    return inflateRawSync(data, {
      maxOutputLength: Math.max(1, maxBytes),
      finishFlush: constants.Z_SYNC_FLUSH,
    });
  } catch {
    return undefined;
  }
}
