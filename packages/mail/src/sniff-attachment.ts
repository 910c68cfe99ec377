import { countTagAttribute } from './tag-attribute-scan.ts';
import { zipDirectory, zipHeaderAt } from './zip-read.ts';

/** What an attachment's bytes say it is, whatever its name says. */
export type AttachmentKind =
  | 'executable'
  | 'script'
  | 'archive'
  | 'office'
  | 'pdf'
  | 'html'
  | 'svg'
  | 'image'
  | 'text'
  | 'shortcut'
  | 'disk_image'
  | 'unknown';

/** What a PDF holds that phishing uses: scripts, forms, links, launch actions. */
export interface PdfFlags {
  javascript: boolean;
  openAction: boolean;
  launch: boolean;
  embeddedFile: boolean;
  acroForm: boolean;
  uri: boolean;
}

/** What an HTML attachment holds that phishing uses: forms, scripts, redirects. */
export interface HtmlFeatures {
  scripts: number;
  forms: number;
  passwordInputs: number;
  metaRefresh: boolean;
  /** `on*=` event handler attributes (onload, onclick, ...). */
  eventHandlers: number;
  /** SVG `<foreignObject>` (HTML inside an image). */
  foreignObject: boolean;
}

/** An attachment sniffed: its kind by content, and what it holds. */
export interface AttachmentSniff {
  /** MIME type told by the bytes. */
  detectedType: string;
  kind: AttachmentKind;
  /** Lower-case extension of the file name, without the dot ('' when none). */
  extension: string;
  /** False when the name's extension or the declared type promises another kind than the bytes. */
  typeMatches: boolean;
  hasMacros?: boolean;
  /** RTF with embedded OLE objects (\\objdata), a classic exploit carrier. */
  embeddedObjects?: boolean;
  pdfFlags?: PdfFlags;
  /** Entry names of a zip (central directory; bounded, nothing decompressed). */
  archiveEntries?: string[];
  /** Zip entries carry the encryption flag, or a PDF has /Encrypt. */
  encrypted?: boolean;
  htmlFeatures?: HtmlFeatures;
}

const MAX_ENTRIES = 1000;
const SCAN_BYTES = 8 * 1024 * 1024;

const SCRIPT_EXT = new Set([
  'js',
  'jse',
  'vbs',
  'vbe',
  'wsf',
  'wsh',
  'hta',
  'ps1',
  'psm1',
  'bat',
  'cmd',
  'sh',
  'py',
  'pl',
  'scr',
  'vb',
  'applescript',
]);
const EXEC_EXT = new Set([
  'exe',
  'dll',
  'scr',
  'com',
  'pif',
  'cpl',
  'msi',
  'msc',
  'sys',
  'jar',
  'apk',
  'app',
  'elf',
  'bin',
  'gadget',
  'xll',
]);
const EXT_KIND: Record<string, AttachmentKind> = {
  pdf: 'pdf',
  doc: 'office',
  docx: 'office',
  docm: 'office',
  dot: 'office',
  dotm: 'office',
  xls: 'office',
  xlsx: 'office',
  xlsm: 'office',
  xlsb: 'office',
  ppt: 'office',
  pptx: 'office',
  pptm: 'office',
  rtf: 'office',
  odt: 'office',
  ods: 'office',
  one: 'office',
  zip: 'archive',
  rar: 'archive',
  '7z': 'archive',
  gz: 'archive',
  tgz: 'archive',
  cab: 'archive',
  tar: 'archive',
  iso: 'disk_image',
  img: 'disk_image',
  vhd: 'disk_image',
  vhdx: 'disk_image',
  htm: 'html',
  html: 'html',
  shtml: 'html',
  xhtml: 'html',
  svg: 'svg',
  jpg: 'image',
  jpeg: 'image',
  png: 'image',
  gif: 'image',
  bmp: 'image',
  webp: 'image',
  ico: 'image',
  tif: 'image',
  tiff: 'image',
  txt: 'text',
  csv: 'text',
  ics: 'text',
  xml: 'text',
  json: 'text',
  eml: 'text',
  mobileconfig: 'text',
  lnk: 'shortcut',
  url: 'shortcut',
};

function startsWith(b: Buffer, sig: number[], at = 0): boolean {
  if (b.length < at + sig.length) return false;
  for (let i = 0; i < sig.length; i++) if (b[at + i] !== sig[i]) return false;
  return true;
}

function ascii(b: Buffer, at: number, s: string): boolean {
  return b.length >= at + s.length && b.toString('latin1', at, at + s.length) === s;
}

/** Entry names and flags of a zip, from its central directory (or local headers when that is cut). */
export function zipEntries(b: Buffer): { names: string[]; encrypted: boolean } {
  const dir = zipDirectory(b, MAX_ENTRIES);
  if (dir.length > 0) {
    return { names: dir.map((e) => e.name), encrypted: dir.some((e) => e.encrypted) };
  }
  // no usable central directory: walk local file headers
  const names: string[] = [];
  let encrypted = false;
  let p = 0;
  while (p + 30 <= b.length && names.length < MAX_ENTRIES && b.readUInt32LE(p) === 0x04034b50) {
    const e = zipHeaderAt(b, p, 6, 26, 30);
    const compressed = b.readUInt32LE(p + 18);
    if (e.encrypted) encrypted = true;
    names.push(e.name);
    if ((e.flags & 8) === 8 && compressed === 0) break; // size only in a data descriptor: stop
    p += 30 + e.nameLen + e.extraLen + compressed;
  }
  return { names, encrypted };
}

function pdfFlags(b: Buffer): { flags: PdfFlags; encrypted: boolean } {
  let s = b.toString('latin1', 0, Math.min(b.length, SCAN_BYTES));
  // names may hide behind #xx escapes: /J#61vaScript
  if (s.includes('#'))
    s = s.replace(
      /(\/[A-Za-z#0-9]*)#([0-9A-Fa-f]{2})/g,
      (_m, pre: string, hex: string) => pre + String.fromCharCode(Number.parseInt(hex, 16)),
    );
  const has = (re: RegExp): boolean => re.test(s);
  return {
    flags: {
      javascript: has(/\/(?:JavaScript|JS)\b/),
      openAction: has(/\/(?:OpenAction|AA)\b/),
      launch: has(/\/Launch\b/),
      embeddedFile: has(/\/EmbeddedFiles?\b/),
      acroForm: has(/\/(?:AcroForm|XFA)\b/),
      uri: has(/\/URI\b/),
    },
    encrypted: has(/\/Encrypt\b/),
  };
}

const INPUT_TAG = /<input\b/gi;
const PASSWORD_TYPE = /\btype\s*=\s*["']?password/gi;
const META_TAG = /<meta\b/gi;
const REFRESH_EQUIV = /http-equiv\s*=\s*["']?refresh/gi;

function htmlFeatures(text: string): HtmlFeatures {
  const s = text.slice(0, SCAN_BYTES);
  const count = (re: RegExp): number => s.match(re)?.length ?? 0;
  return {
    scripts: count(/<script\b/gi),
    forms: count(/<form\b/gi),
    // `/<input\b[^>]{0,1000}?\btype\s*=\s*["']?password/gi` and
    // `/<meta\b[^>]{0,1000}?http-equiv\s*=\s*["']?refresh/i`, without 1000 steps a character
    passwordInputs: countTagAttribute(s, INPUT_TAG, PASSWORD_TYPE, 1000),
    metaRefresh: countTagAttribute(s, META_TAG, REFRESH_EQUIV, 1000, true) > 0,
    eventHandlers: count(/\son[a-z]{3,20}\s*=/gi),
    foreignObject: /<foreignObject\b/i.test(s),
  };
}

function utf16Has(b: Buffer, name: string): boolean {
  return b.indexOf(Buffer.from(name, 'utf16le')) >= 0;
}

function isMostlyText(b: Buffer): boolean {
  const n = Math.min(b.length, 4096);
  if (n === 0) return true;
  let bad = 0;
  for (let i = 0; i < n; i++) {
    const c = b[i] as number;
    if (c === 0) return false;
    if (c < 9 || (c > 13 && c < 32)) bad++;
  }
  return bad / n < 0.02;
}

/**
 * Tells what an attachment really is from its bytes (magic numbers), whatever its name or declared
 * type says: executables (PE, ELF, Mach-O), scripts, archives (zip with its entry names, rar, 7z, gzip,
 * cab), Office documents (OOXML with vbaProject.bin, OLE2 with VBA streams, RTF, OneNote), PDF (with
 * JavaScript / OpenAction / Launch flags), HTML and SVG (scripts, forms, password inputs, handlers),
 * shortcuts, disk images, images. Nothing is decompressed or executed.
 */
export function sniffAttachment(
  bytes: Buffer,
  filename: string,
  declaredType?: string,
): AttachmentSniff {
  const b = bytes;
  const dot = filename.lastIndexOf('.');
  const extension =
    dot >= 0
      ? filename
          .slice(dot + 1)
          .toLowerCase()
          .trim()
          .slice(0, 20)
      : '';
  const r = (
    detectedType: string,
    kind: AttachmentKind,
    extra: Partial<AttachmentSniff> = {},
  ): AttachmentSniff => {
    const expected = EXEC_EXT.has(extension)
      ? 'executable'
      : SCRIPT_EXT.has(extension)
        ? 'script'
        : EXT_KIND[extension];
    const declared = (declaredType ?? '').toLowerCase();
    let typeMatches =
      expected === undefined ||
      expected === kind ||
      (expected === 'text' && (kind === 'html' || kind === 'svg'));
    if (kind === 'executable' && expected !== 'executable') typeMatches = false;
    if (declared.startsWith('image/') && kind !== 'image' && kind !== 'svg') typeMatches = false;
    if (declared === 'application/pdf' && kind !== 'pdf') typeMatches = false;
    // bytes we cannot tell contradict nothing
    if (kind === 'unknown') typeMatches = true;
    return { detectedType, kind, extension, typeMatches, ...extra };
  };

  if (ascii(b, 0, 'MZ')) return r('application/x-msdownload', 'executable');
  if (startsWith(b, [0x7f, 0x45, 0x4c, 0x46])) return r('application/x-executable', 'executable');
  if (
    startsWith(b, [0xfe, 0xed, 0xfa, 0xce]) ||
    startsWith(b, [0xfe, 0xed, 0xfa, 0xcf]) ||
    startsWith(b, [0xce, 0xfa, 0xed, 0xfe]) ||
    startsWith(b, [0xcf, 0xfa, 0xed, 0xfe])
  ) {
    return r('application/x-mach-binary', 'executable');
  }
  if (startsWith(b, [0xca, 0xfe, 0xba, 0xbe])) {
    // Mach-O universal binary (few architectures) or a Java class file (major version >= 45)
    const n = b.length >= 8 ? b.readUInt32BE(4) : 0;
    return n > 0 && n < 20
      ? r('application/x-mach-binary', 'executable')
      : r('application/java-vm', 'executable');
  }
  if (ascii(b, 0, '#!')) return r('text/x-shellscript', 'script');
  if (ascii(b, 0, 'PK\x03\x04') || ascii(b, 0, 'PK\x05\x06') || ascii(b, 0, 'PK\x07\x08')) {
    const { names, encrypted } = zipEntries(b);
    const has = (re: RegExp) => names.some((n) => re.test(n));
    const hasMacros = has(/(?:^|\/)vbaProject\.bin$/i);
    const extra = {
      archiveEntries: names,
      ...(encrypted ? { encrypted } : {}),
      ...(hasMacros ? { hasMacros } : {}),
    };
    if (has(/^\[Content_Types\]\.xml$/)) {
      if (has(/^word\//))
        return r(
          'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
          'office',
          extra,
        );
      if (has(/^xl\//))
        return r(
          'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
          'office',
          extra,
        );
      if (has(/^ppt\//))
        return r(
          'application/vnd.openxmlformats-officedocument.presentationml.presentation',
          'office',
          extra,
        );
    }
    if (has(/^AndroidManifest\.xml$/) && has(/^classes\d*\.dex$/))
      return r('application/vnd.android.package-archive', 'executable', extra);
    if (has(/^META-INF\/MANIFEST\.MF$/i) && has(/\.class$/))
      return r('application/java-archive', 'executable', extra);
    if (has(/^mimetype$/) && has(/^content\.xml$/))
      return r('application/vnd.oasis.opendocument', 'office', extra);
    return r('application/zip', 'archive', extra);
  }
  if (ascii(b, 0, 'Rar!\x1a\x07')) return r('application/vnd.rar', 'archive');
  if (startsWith(b, [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c]))
    return r('application/x-7z-compressed', 'archive');
  if (startsWith(b, [0x1f, 0x8b])) return r('application/gzip', 'archive');
  if (ascii(b, 0, 'MSCF')) return r('application/vnd.ms-cab-compressed', 'archive');
  if (ascii(b, 257, 'ustar')) return r('application/x-tar', 'archive');
  if (ascii(b, 0x8001, 'CD001') || ascii(b, 0x8801, 'CD001') || ascii(b, 0x9001, 'CD001')) {
    return r('application/x-iso9660-image', 'disk_image');
  }
  if (
    ascii(b, 0, 'conectix') ||
    ascii(b, 0, 'vhdxfile') ||
    (b.length > 512 && ascii(b, b.length - 512, 'conectix'))
  ) {
    return r('application/x-vhd', 'disk_image');
  }
  if (startsWith(b, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])) {
    const scan = b.subarray(0, Math.min(b.length, SCAN_BYTES));
    const hasMacros = utf16Has(scan, '_VBA_PROJECT') || utf16Has(scan, 'Macros');
    const extra = hasMacros ? { hasMacros } : {};
    const encrypted = utf16Has(scan, 'EncryptedPackage') ? { encrypted: true } : {};
    if (utf16Has(scan, 'WordDocument'))
      return r('application/msword', 'office', { ...extra, ...encrypted });
    if (utf16Has(scan, 'Workbook') || utf16Has(scan, 'Book'))
      return r('application/vnd.ms-excel', 'office', { ...extra, ...encrypted });
    if (utf16Has(scan, 'PowerPoint Document'))
      return r('application/vnd.ms-powerpoint', 'office', { ...extra, ...encrypted });
    if (utf16Has(scan, 'EncryptedPackage'))
      return r('application/x-ole-storage', 'office', { ...extra, encrypted: true });
    if (isMsi(b) || extension === 'msi') return r('application/x-msi', 'executable', extra);
    return r('application/x-ole-storage', 'office', extra);
  }
  if (
    startsWith(
      b,
      [
        0xe4, 0x52, 0x5c, 0x7b, 0x8c, 0xd8, 0xa7, 0x4d, 0xae, 0xb1, 0x53, 0x78, 0xd0, 0x29, 0x96,
        0xd3,
      ],
    )
  ) {
    return r('application/onenote', 'office');
  }
  if (startsWith(b, [0x4c, 0x00, 0x00, 0x00, 0x01, 0x14, 0x02, 0x00]))
    return r('application/x-ms-shortcut', 'shortcut');
  const head = b
    .toString('latin1', 0, Math.min(b.length, 1024))
    .replace(/^\ufeff|^\xef\xbb\xbf/, '');
  const pdfAt = head.indexOf('%PDF-');
  if (pdfAt >= 0 && pdfAt < 1024) {
    const { flags, encrypted } = pdfFlags(b);
    return r('application/pdf', 'pdf', { pdfFlags: flags, ...(encrypted ? { encrypted } : {}) });
  }
  if (head.startsWith('{\\rtf')) {
    const objects = /\\objdata|\\objupdate|\\objemb|\\objlink/.test(
      b.toString('latin1', 0, Math.min(b.length, SCAN_BYTES)),
    );
    return r('application/rtf', 'office', objects ? { embeddedObjects: true } : {});
  }
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47])) return r('image/png', 'image');
  if (startsWith(b, [0xff, 0xd8, 0xff])) return r('image/jpeg', 'image');
  if (ascii(b, 0, 'GIF87a') || ascii(b, 0, 'GIF89a')) return r('image/gif', 'image');
  if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'WEBP')) return r('image/webp', 'image');
  if (ascii(b, 0, 'II*\x00') || ascii(b, 0, 'MM\x00*')) return r('image/tiff', 'image');
  if (ascii(b, 0, 'BM') && b.length > 14 && b.readUInt32LE(2) === b.length)
    return r('image/bmp', 'image');
  if (startsWith(b, [0, 0, 1, 0]) && extension === 'ico') return r('image/x-icon', 'image');
  if (ascii(b, 0, '[InternetShortcut]')) return r('application/x-url', 'shortcut');
  if (isMostlyText(b)) {
    const text = b.toString('utf8', 0, Math.min(b.length, SCAN_BYTES));
    const lead = text.slice(0, 2048).trimStart().toLowerCase();
    if (
      /<svg[\s>]/.test(lead) &&
      (lead.startsWith('<svg') || lead.startsWith('<?xml') || lead.startsWith('<!doctype svg'))
    ) {
      return r('image/svg+xml', 'svg', { htmlFeatures: htmlFeatures(text) });
    }
    if (
      /^(?:<!doctype html|<html|<head|<body|<script|<meta|<form|<iframe|<div|<table|<!--)/.test(
        lead,
      ) ||
      /<html[\s>]/.test(lead)
    ) {
      return r('text/html', 'html', { htmlFeatures: htmlFeatures(text) });
    }
    if (SCRIPT_EXT.has(extension)) return r('text/plain', 'script');
    if (
      /\b(?:WScript\.Shell|ActiveXObject|CreateObject\s*\(|powershell\s+-|Invoke-Expression|FromBase64String)\b/i.test(
        text.slice(0, 65536),
      )
    ) {
      return r('text/plain', 'script');
    }
    return r('text/plain', 'text');
  }
  return r('application/octet-stream', 'unknown');
}

/** An OLE2 file whose root entry has the CLSID of a Windows Installer package. */
function isMsi(b: Buffer): boolean {
  if (b.length < 512) return false;
  const shift = b.readUInt16LE(0x1e);
  if (shift !== 9 && shift !== 12) return false;
  const size = 1 << shift;
  const dirSector = b.readUInt32LE(0x30);
  const at = (dirSector + 1) * size + 0x50;
  if (at + 16 > b.length) return false;
  return startsWith(
    b,
    [
      0x84, 0x10, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x46,
    ],
    at,
  );
}
