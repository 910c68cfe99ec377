import { constants, inflateSync } from 'node:zlib';

/**
 * The links of a PDF, read without rendering it: the targets of its URI actions (`/URI (…)` or
 * `/URI <hex>`), in the file's own objects and inside compressed object streams (`/Type /ObjStm`,
 * FlateDecode), and the JPEG images it shows (`/DCTDecode`: a QR code in a PDF is such an image),
 * for the QR decoder. One forward scan; every bound (bytes scanned, streams inflated, bytes
 * inflated, links, images) is a limit, so a hostile file costs at most what they allow.
 */
export interface PdfLinkLimits {
  /** Bytes of the file scanned. */
  maxScanBytes: number;
  /** `stream` keywords looked at (each costs a look back at its dictionary). */
  maxStreamKeywords: number;
  /** Object streams inflated. */
  maxStreams: number;
  /** Bytes one object stream may inflate to; larger ones (bombs) are skipped. */
  maxStreamBytes: number;
  /** Bytes all object streams may inflate to together. */
  maxInflatedBytes: number;
  maxLinks: number;
  /** JPEG images handed back (each at most maxImageBytes). */
  maxImages: number;
  maxImageBytes: number;
}

export const PDF_LINK_LIMITS: PdfLinkLimits = {
  maxScanBytes: 16 * 1024 * 1024,
  maxStreamKeywords: 20_000,
  maxStreams: 256,
  maxStreamBytes: 4 * 1024 * 1024,
  maxInflatedBytes: 16 * 1024 * 1024,
  maxLinks: 100,
  maxImages: 3,
  maxImageBytes: 4 * 1024 * 1024,
};

export interface PdfLinks {
  uris: string[];
  /** JPEG images (DCTDecode streams), as bytes of a JPEG file. */
  jpegs: Buffer[];
}

/** Characters of a PDF name token (regular characters, `#` escapes included). */
function isNameChar(c: number): boolean {
  return (
    (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x23
  );
}

function isPdfSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0c || c === 0x00;
}

const MAX_NAME = 32;
const MAX_STRING = 8192;

/** A name as written (`U#52I`) decoded (`URI`). */
function decodeName(raw: string): string {
  if (!raw.includes('#')) return raw;
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] as string;
    if (c === '#' && i + 2 < raw.length) {
      const code = Number.parseInt(raw.slice(i + 1, i + 3), 16);
      if (!Number.isNaN(code)) {
        out += String.fromCharCode(code);
        i += 2;
        continue;
      }
    }
    out += c;
  }
  return out;
}

const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', b: '\b', f: '\f' };

/**
 * The literal string starting at `s[at]` (`(`): its text and the index after its closing `)`.
 * Balanced parentheses, backslash escapes (octal too), at most MAX_STRING characters kept.
 */
function literalString(s: string, at: number): { text: string; end: number } {
  let depth = 1;
  let out = '';
  let i = at + 1;
  for (; i < s.length && depth > 0; i++) {
    const c = s[i] as string;
    if (c === '\\') {
      const n = s[i + 1];
      if (n === undefined) break;
      if (n >= '0' && n <= '7') {
        let j = i + 1;
        let oct = '';
        while (j < s.length && oct.length < 3 && (s[j] as string) >= '0' && (s[j] as string) <= '7')
          oct += s[j++];
        out += String.fromCharCode(Number.parseInt(oct, 8) & 0xff);
        i = j - 1;
      } else if (n === '\r' || n === '\n') {
        // a line continuation
        i += n === '\r' && s[i + 2] === '\n' ? 2 : 1;
      } else {
        out += ESCAPES[n] ?? n;
        i++;
      }
      continue;
    }
    if (c === '(') depth++;
    else if (c === ')') {
      depth--;
      if (depth === 0) break;
    }
    if (out.length < MAX_STRING) out += c;
  }
  return { text: out, end: i + 1 };
}

/** The hex string starting at `s[at]` (`<`): its bytes as latin1 text and the index after `>`. */
function hexString(s: string, at: number): { text: string; end: number } {
  const close = s.indexOf('>', at + 1);
  const end = close < 0 ? s.length : close;
  const hex = s.slice(at + 1, Math.min(end, at + 1 + 2 * MAX_STRING)).replace(/[^0-9A-Fa-f]/g, '');
  return { text: Buffer.from(hex.length % 2 ? `${hex}0` : hex, 'hex').toString('latin1'), end };
}

/** A PDF text string: UTF-16BE with its byte-order mark, else bytes as latin1. */
function textOf(bytes: string): string {
  if (bytes.charCodeAt(0) === 0xfe && bytes.charCodeAt(1) === 0xff) {
    // an odd byte at the end (a cut or hostile string) is dropped: swap16 needs pairs
    const even = bytes.length % 2 === 0 ? bytes.slice(2) : bytes.slice(2, -1);
    return Buffer.from(even, 'latin1').swap16().toString('utf16le');
  }
  return bytes;
}

/** Adds the target of each `/URI` key of `s` whose value is a string. One pass over `s`. */
function scanUris(s: string, out: Set<string>, max: number): void {
  let p = s.indexOf('/');
  while (p >= 0 && out.size < max) {
    let q = p + 1;
    while (q < s.length && q - p <= MAX_NAME && isNameChar(s.charCodeAt(q))) q++;
    if (q - p - 1 >= 3 && decodeName(s.slice(p + 1, q)) === 'URI') {
      while (q < s.length && isPdfSpace(s.charCodeAt(q))) q++;
      const c = s[q];
      if (c === '(' || (c === '<' && s[q + 1] !== '<')) {
        const str = c === '(' ? literalString(s, q) : hexString(s, q);
        const target = textOf(str.text).trim();
        if (target !== '') out.add(target);
        q = str.end;
      }
    }
    p = s.indexOf('/', Math.max(q, p + 1));
  }
}

/** The filters a stream's dictionary names, in order ([] when none). */
function filtersOf(dict: string): string[] {
  const at = dict.indexOf('/Filter');
  if (at < 0) return [];
  let i = at + 7;
  while (i < dict.length && isPdfSpace(dict.charCodeAt(i))) i++;
  const list = dict[i] === '[' ? dict.slice(i + 1, dict.indexOf(']', i) >>> 0) : dict.slice(i);
  const out: string[] = [];
  let p = list.indexOf('/');
  while (p >= 0 && out.length < 8) {
    let q = p + 1;
    while (q < list.length && isNameChar(list.charCodeAt(q))) q++;
    out.push(decodeName(list.slice(p + 1, q)));
    if (dict[i] !== '[') break;
    p = list.indexOf('/', q);
  }
  return out;
}

/** `/Length N` written as a number (not a reference), else undefined. */
function directLength(dict: string): number | undefined {
  const m = /\/Length\s+(\d{1,10})(?!\s+\d+\s+R)/.exec(dict);
  return m ? Number(m[1]) : undefined;
}

/** How far back from `stream` a dictionary is looked for. */
const DICT_WINDOW = 1024;

/**
 * The URI targets and JPEG images of a PDF (see PdfLinks), within `limits`. Nothing is executed
 * or rendered; an encrypted file gives what is readable of it (usually nothing).
 */
export function pdfLinks(b: Buffer, limits: PdfLinkLimits = PDF_LINK_LIMITS): PdfLinks {
  const s = b.toString('latin1', 0, Math.min(b.length, limits.maxScanBytes));
  const uris = new Set<string>();
  const jpegs: Buffer[] = [];
  scanUris(s, uris, limits.maxLinks);
  let streams = 0;
  let inflated = 0;
  let keywords = 0;
  let p = s.indexOf('stream');
  while (p >= 0 && uris.size < limits.maxLinks && keywords++ < limits.maxStreamKeywords) {
    // `endstream` is not a stream's start
    if (p >= 3 && s.startsWith('end', p - 3)) {
      p = s.indexOf('stream', p + 6);
      continue;
    }
    let start = p + 6;
    if (s[start] === '\r') start++;
    if (s[start] === '\n') start++;
    const window = s.slice(Math.max(0, p - DICT_WINDOW), p);
    const dict = window.slice(Math.max(0, window.lastIndexOf('obj')));
    const length = directLength(dict);
    let end = length !== undefined ? start + length : s.indexOf('endstream', start);
    if (end < 0 || end > s.length) end = s.length;
    const filters = filtersOf(dict);
    const only = filters.length === 1 ? filters[0] : undefined;
    if (
      only === 'FlateDecode' &&
      dict.includes('/ObjStm') &&
      !dict.includes('/Predictor') &&
      streams < limits.maxStreams &&
      inflated < limits.maxInflatedBytes
    ) {
      streams++;
      const room = Math.min(limits.maxStreamBytes, limits.maxInflatedBytes - inflated);
      try {
        const text = inflateSync(b.subarray(start, end), {
          maxOutputLength: Math.max(1, room),
          finishFlush: constants.Z_SYNC_FLUSH,
        });
        inflated += text.length;
        scanUris(text.toString('latin1'), uris, limits.maxLinks);
      } catch {
        // a broken stream, or one larger than its room (a bomb): nothing from it
        inflated += room;
      }
    } else if (
      only === 'DCTDecode' &&
      dict.includes('/Image') &&
      jpegs.length < limits.maxImages &&
      end - start <= limits.maxImageBytes
    ) {
      jpegs.push(b.subarray(start, end));
    }
    p = s.indexOf('stream', Math.max(end, p + 6));
  }
  return { uris: [...uris], jpegs };
}
