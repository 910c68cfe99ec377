import { describe, expect, it } from 'vitest';
import { sniffAttachment, zipEntries } from '../../src/index.ts';

/** A minimal stored (uncompressed) zip with the given entries. */
function zip(
  entries: [string, string][],
  opts: { encrypted?: boolean; noCentral?: boolean } = {},
): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, content] of entries) {
    const n = Buffer.from(name);
    const data = Buffer.from(content);
    const flags = opts.encrypted ? 1 : 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(n.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(flags, 8);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(n.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, n, data);
    centrals.push(central, n);
    offset += 30 + n.length + data.length;
  }
  if (opts.noCentral) return Buffer.concat(locals);
  const cd = Buffer.concat(centrals);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(entries.length, 8);
  eocd.writeUInt16LE(entries.length, 10);
  eocd.writeUInt32LE(cd.length, 12);
  eocd.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, eocd]);
}

function ole(streams: string[]): Buffer {
  const b = Buffer.alloc(4096);
  Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(b, 0);
  b.writeUInt16LE(9, 0x1e);
  let p = 1024;
  for (const s of streams) {
    Buffer.from(s, 'utf16le').copy(b, p);
    p += 128;
  }
  return b;
}

const bytes = (...a: number[]) => Buffer.from(a);
const withTail = (head: Buffer) => Buffer.concat([head, Buffer.alloc(64)]);

describe('sniffAttachment', () => {
  it('executables: PE, ELF, Mach-O', () => {
    expect(sniffAttachment(withTail(Buffer.from('MZ\x90\x00')), 'invoice.pdf')).toMatchObject({
      kind: 'executable',
      detectedType: 'application/x-msdownload',
      extension: 'pdf',
      typeMatches: false,
    });
    expect(sniffAttachment(withTail(bytes(0x7f, 0x45, 0x4c, 0x46)), 'a').kind).toBe('executable');
    expect(sniffAttachment(withTail(bytes(0xcf, 0xfa, 0xed, 0xfe)), 'a').detectedType).toBe(
      'application/x-mach-binary',
    );
    expect(
      sniffAttachment(withTail(bytes(0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2)), 'a').detectedType,
    ).toBe('application/x-mach-binary');
    expect(sniffAttachment(withTail(Buffer.from('MZ')), 'setup.exe').typeMatches).toBe(true);
  });

  it('scripts: shebang, script extensions, script content', () => {
    expect(sniffAttachment(Buffer.from('#!/bin/sh\ncurl x | sh\n'), 'readme.txt').kind).toBe(
      'script',
    );
    expect(sniffAttachment(Buffer.from('var s = 1;'), 'Invoice.js').kind).toBe('script');
    expect(
      sniffAttachment(Buffer.from('Set o = CreateObject("WScript.Shell")'), 'notes.txt').kind,
    ).toBe('script');
  });

  it('zip: entry names, OOXML with and without macros, jar, apk, encryption', () => {
    const plain = sniffAttachment(
      zip([
        ['invoice.pdf.exe', 'MZ'],
        ['readme.txt', 'hi'],
      ]),
      'docs.zip',
    );
    expect(plain).toMatchObject({
      kind: 'archive',
      detectedType: 'application/zip',
      archiveEntries: ['invoice.pdf.exe', 'readme.txt'],
    });
    expect(plain.encrypted).toBeUndefined();
    const docx = sniffAttachment(
      zip([
        ['[Content_Types].xml', '<x/>'],
        ['word/document.xml', '<w/>'],
      ]),
      'a.docx',
    );
    expect(docx).toMatchObject({
      kind: 'office',
      detectedType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    });
    expect(docx.hasMacros).toBeUndefined();
    const xlsm = sniffAttachment(
      zip([
        ['[Content_Types].xml', '<x/>'],
        ['xl/workbook.xml', '<w/>'],
        ['xl/vbaProject.bin', 'x'],
      ]),
      'a.xlsx',
    );
    expect(xlsm).toMatchObject({
      kind: 'office',
      hasMacros: true,
      detectedType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    });
    const pptx = sniffAttachment(
      zip([
        ['[Content_Types].xml', '<x/>'],
        ['ppt/presentation.xml', '<p/>'],
      ]),
      'a.pptx',
    );
    expect(pptx.detectedType).toBe(
      'application/vnd.openxmlformats-officedocument.presentationml.presentation',
    );
    expect(
      sniffAttachment(
        zip([
          ['META-INF/MANIFEST.MF', 'x'],
          ['a/B.class', 'x'],
        ]),
        'a.jar',
      ),
    ).toMatchObject({ kind: 'executable', detectedType: 'application/java-archive' });
    expect(
      sniffAttachment(
        zip([
          ['AndroidManifest.xml', 'x'],
          ['classes.dex', 'x'],
        ]),
        'a.apk',
      ).detectedType,
    ).toBe('application/vnd.android.package-archive');
    expect(
      sniffAttachment(zip([['secret.exe', 'x']], { encrypted: true }), 'a.zip').encrypted,
    ).toBe(true);
  });

  it('zip without a central directory falls back to local headers', () => {
    expect(
      zipEntries(
        zip(
          [
            ['a.txt', 'x'],
            ['b.scr', 'y'],
          ],
          { noCentral: true },
        ),
      ).names,
    ).toEqual(['a.txt', 'b.scr']);
  });

  it('other archives: rar, 7z, gzip, cab, tar', () => {
    expect(sniffAttachment(withTail(Buffer.from('Rar!\x1a\x07\x01\x00')), 'a').detectedType).toBe(
      'application/vnd.rar',
    );
    expect(
      sniffAttachment(withTail(bytes(0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c)), 'a').detectedType,
    ).toBe('application/x-7z-compressed');
    expect(sniffAttachment(withTail(bytes(0x1f, 0x8b, 8)), 'a').detectedType).toBe(
      'application/gzip',
    );
    expect(sniffAttachment(withTail(Buffer.from('MSCF\0\0\0\0')), 'a').detectedType).toBe(
      'application/vnd.ms-cab-compressed',
    );
    const tar = Buffer.alloc(1024);
    tar.write('ustar', 257, 'latin1');
    expect(sniffAttachment(tar, 'a.tar').kind).toBe('archive');
  });

  it('disk images: ISO 9660 and VHD', () => {
    const iso = Buffer.alloc(0x8800);
    iso.write('CD001', 0x8001, 'latin1');
    expect(sniffAttachment(iso, 'invoice.iso')).toMatchObject({
      kind: 'disk_image',
      detectedType: 'application/x-iso9660-image',
    });
    expect(sniffAttachment(withTail(Buffer.from('conectix')), 'a.vhd').kind).toBe('disk_image');
  });

  it('OLE2: doc, xls with macros, msi by name', () => {
    expect(sniffAttachment(ole(['Root Entry', 'WordDocument']), 'a.doc')).toMatchObject({
      kind: 'office',
      detectedType: 'application/msword',
    });
    expect(sniffAttachment(ole(['Root Entry', 'WordDocument']), 'a.doc').hasMacros).toBeUndefined();
    expect(sniffAttachment(ole(['Root Entry', 'Workbook', '_VBA_PROJECT']), 'a.xls')).toMatchObject(
      {
        detectedType: 'application/vnd.ms-excel',
        hasMacros: true,
      },
    );
    expect(sniffAttachment(ole(['Root Entry', 'Macros', 'WordDocument']), 'a.doc').hasMacros).toBe(
      true,
    );
    expect(sniffAttachment(ole(['Root Entry']), 'setup.msi')).toMatchObject({
      kind: 'executable',
      detectedType: 'application/x-msi',
    });
  });

  it('PDF with JavaScript, OpenAction, Launch (also behind #xx escapes)', () => {
    const pdf = sniffAttachment(
      Buffer.from(
        '%PDF-1.7\n1 0 obj << /OpenAction 2 0 R /Names << /J#61vaScript 3 0 R >> >>\n/S /Launch /F (cmd.exe)\ntrailer',
      ),
      'a.pdf',
    );
    expect(pdf.kind).toBe('pdf');
    expect(pdf.pdfFlags).toMatchObject({
      javascript: true,
      openAction: true,
      launch: true,
      embeddedFile: false,
    });
    const clean = sniffAttachment(
      Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >>\ntrailer'),
      'a.pdf',
    );
    expect(clean.pdfFlags).toEqual({
      javascript: false,
      openAction: false,
      launch: false,
      embeddedFile: false,
      acroForm: false,
      uri: false,
    });
    expect(sniffAttachment(Buffer.from('%PDF-1.4\n/Encrypt 5 0 R'), 'a.pdf').encrypted).toBe(true);
  });

  it('RTF (with embedded objects), OneNote, LNK', () => {
    expect(sniffAttachment(Buffer.from('{\\rtf1\\ansi hello}'), 'a.rtf')).toMatchObject({
      kind: 'office',
      detectedType: 'application/rtf',
    });
    expect(
      sniffAttachment(Buffer.from('{\\rtf1{\\object\\objemb{\\objdata 0105}}}'), 'a.doc')
        .embeddedObjects,
    ).toBe(true);
    const one = bytes(
      0xe4,
      0x52,
      0x5c,
      0x7b,
      0x8c,
      0xd8,
      0xa7,
      0x4d,
      0xae,
      0xb1,
      0x53,
      0x78,
      0xd0,
      0x29,
      0x96,
      0xd3,
    );
    expect(sniffAttachment(withTail(one), 'a.one').detectedType).toBe('application/onenote');
    expect(
      sniffAttachment(withTail(bytes(0x4c, 0, 0, 0, 1, 0x14, 2, 0)), 'Invoice.pdf.lnk'),
    ).toMatchObject({ kind: 'shortcut', typeMatches: true });
  });

  it('HTML and SVG with their features', () => {
    const html = sniffAttachment(
      Buffer.from(
        '<!DOCTYPE html><html><head><meta http-equiv="refresh" content="0;url=x"></head><body><form action="https://x"><input type="password"></form><script>a()</script></body></html>',
      ),
      'Invoice.htm',
    );
    expect(html).toMatchObject({ kind: 'html', detectedType: 'text/html' });
    expect(html.htmlFeatures).toMatchObject({
      scripts: 1,
      forms: 1,
      passwordInputs: 1,
      metaRefresh: true,
    });
    const svg = sniffAttachment(
      Buffer.from(
        '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" onload="go()"><foreignObject><form></form></foreignObject><script>x</script></svg>',
      ),
      'fax.svg',
    );
    expect(svg).toMatchObject({ kind: 'svg', detectedType: 'image/svg+xml' });
    expect(svg.htmlFeatures).toMatchObject({
      scripts: 1,
      forms: 1,
      eventHandlers: 1,
      foreignObject: true,
    });
  });

  it('images, text and unknown', () => {
    expect(sniffAttachment(withTail(bytes(0x89, 0x50, 0x4e, 0x47)), 'a.png')).toMatchObject({
      kind: 'image',
      detectedType: 'image/png',
    });
    expect(sniffAttachment(withTail(bytes(0xff, 0xd8, 0xff, 0xe0)), 'a.jpg').detectedType).toBe(
      'image/jpeg',
    );
    expect(sniffAttachment(withTail(Buffer.from('GIF89a')), 'a.gif').detectedType).toBe(
      'image/gif',
    );
    expect(
      sniffAttachment(Buffer.from('BEGIN:VCALENDAR\nEND:VCALENDAR\n'), 'invite.ics'),
    ).toMatchObject({ kind: 'text', typeMatches: true });
    expect(sniffAttachment(withTail(bytes(0, 1, 2, 3, 0xfe)), 'x.bin')).toMatchObject({
      kind: 'unknown',
      detectedType: 'application/octet-stream',
    });
    expect(sniffAttachment(withTail(bytes(0, 1, 2, 3)), 'photo.png', 'image/png').typeMatches).toBe(
      true,
    );
    expect(sniffAttachment(Buffer.alloc(0), 'empty').kind).toBe('text');
  });

  it('never throws on truncated or random input', () => {
    let seed = 7;
    const rnd = (m: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % m;
    };
    for (let i = 0; i < 300; i++) {
      const n = rnd(300);
      const b = Buffer.alloc(n);
      for (let k = 0; k < n; k++) b[k] = rnd(256);
      const prefixes = [
        Buffer.from('PK\x03\x04'),
        Buffer.from('PK\x05\x06'),
        bytes(0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1),
        Buffer.from('%PDF-'),
      ];
      sniffAttachment(Buffer.concat([prefixes[i % 4] as Buffer, b]), 'x');
      sniffAttachment(b, 'x');
    }
    const eocdOnly = Buffer.alloc(22);
    eocdOnly.writeUInt32LE(0x06054b50, 0);
    eocdOnly.writeUInt16LE(5, 10);
    eocdOnly.writeUInt32LE(999999, 16);
    expect(
      sniffAttachment(Buffer.concat([Buffer.from('PK\x03\x04'), eocdOnly]), 'x.zip').kind,
    ).toBe('archive');
  });
});
