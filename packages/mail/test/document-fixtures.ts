/**
 * Builders of the documents the link decoders read (tests and the hostile-input properties):
 * PDFs with URI actions (plain and in compressed object streams, with JPEG images), zips (stored
 * or deflated entries, OOXML documents), calendar invitations, and QR code images (PNG and JPEG,
 * from the `qrcode` package's module matrix). Nothing here is read from the corpora.
 */
import { deflateRawSync, deflateSync } from 'node:zlib';
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import QRCode from 'qrcode';

/** A PDF string literal of `s` (parentheses and backslashes escaped). */
function pdfString(s: string): string {
  return `(${s.replace(/[\\()]/g, (c) => `\\${c}`)})`;
}

/**
 * A small PDF: a page with one link annotation per URI in `plain` (as objects of the file), the
 * annotations of `compressed` inside a FlateDecode object stream, and `jpegs` as image XObjects.
 */
export function pdf(o: { plain?: string[]; compressed?: string[]; jpegs?: Buffer[] }): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let n = 1;
  const obj = (body: string | Buffer[]) => {
    const head = Buffer.from(`${n++} 0 obj\n`, 'latin1');
    parts.push(head, ...(typeof body === 'string' ? [Buffer.from(body, 'latin1')] : body));
    parts.push(Buffer.from('\nendobj\n', 'latin1'));
  };
  obj('<< /Type /Catalog /Pages 2 0 R >>');
  obj('<< /Type /Pages /Kids [3 0 R] /Count 1 >>');
  obj('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>');
  for (const uri of o.plain ?? []) {
    obj(
      `<< /Type /Annot /Subtype /Link /Rect [0 0 100 20] /A << /S /URI /URI ${pdfString(uri)} >> >>`,
    );
  }
  if (o.compressed?.length) {
    const objects = o.compressed.map(
      (u) => `<< /Type /Annot /Subtype /Link /A << /S /URI /URI ${pdfString(u)} >> >>`,
    );
    let offset = 0;
    const header: string[] = [];
    objects.forEach((text, i) => {
      header.push(`${100 + i} ${offset}`);
      offset += text.length + 1;
    });
    const head = `${header.join(' ')}\n`;
    const data = deflateSync(Buffer.from(head + objects.join('\n'), 'latin1'));
    obj([
      Buffer.from(
        `<< /Type /ObjStm /N ${objects.length} /First ${head.length} /Filter /FlateDecode /Length ${data.length} >>\nstream\r\n`,
        'latin1',
      ),
      data,
      Buffer.from('\r\nendstream', 'latin1'),
    ]);
  }
  for (const img of o.jpegs ?? []) {
    obj([
      Buffer.from(
        `<< /Type /XObject /Subtype /Image /Width 10 /Height 10 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode /Length ${img.length} >>\nstream\n`,
        'latin1',
      ),
      img,
      Buffer.from('\nendstream', 'latin1'),
    ]);
  }
  parts.push(Buffer.from('trailer\n<< /Root 1 0 R >>\n%%EOF\n', 'latin1'));
  return Buffer.concat(parts);
}

/** A zip of `entries` ([name, content]), deflated unless `stored`. */
export function zip(entries: [string, string | Buffer][], o: { stored?: boolean } = {}): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, content] of entries) {
    const n = Buffer.from(name);
    const raw = typeof content === 'string' ? Buffer.from(content) : content;
    const data = o.stored ? raw : deflateRawSync(raw);
    const method = o.stored ? 0 : 8;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(raw.length, 22);
    local.writeUInt16LE(n.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(raw.length, 24);
    central.writeUInt16LE(n.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, n, data);
    centrals.push(central, n);
    offset += 30 + n.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(entries.length, 8);
  eocd.writeUInt16LE(entries.length, 10);
  eocd.writeUInt32LE(cd.length, 12);
  eocd.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, eocd]);
}

const RELS_NS = 'http://schemas.openxmlformats.org/package/2006/relationships';
const HYPERLINK_TYPE =
  'http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink';

/** A .docx whose document links to each of `links` (external relationships) and `fields`. */
export function docx(o: { links?: string[]; fields?: string[]; template?: string }): Buffer {
  const rels = (o.links ?? []).map(
    (l, i) =>
      `<Relationship Id="rId${i + 10}" Type="${HYPERLINK_TYPE}" Target="${l.replace(/&/g, '&amp;')}" TargetMode="External"/>`,
  );
  rels.push(
    `<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>`,
  );
  const settingsRels = o.template
    ? `<?xml version="1.0"?><Relationships xmlns="${RELS_NS}"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/attachedTemplate" Target="${o.template}" TargetMode="External"/></Relationships>`
    : undefined;
  const body = (o.fields ?? [])
    .map(
      (f) =>
        `<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> HYPERLINK "${f}" </w:instrText></w:r><w:r><w:t>click</w:t></w:r></w:p>`,
    )
    .join('');
  return zip([
    ['[Content_Types].xml', '<?xml version="1.0"?><Types/>'],
    ['_rels/.rels', `<?xml version="1.0"?><Relationships xmlns="${RELS_NS}"/>`],
    [
      'word/document.xml',
      `<?xml version="1.0"?><w:document><w:body>${body}<w:p><w:r><w:t>Invoice</w:t></w:r></w:p></w:body></w:document>`,
    ],
    [
      'word/_rels/document.xml.rels',
      `<?xml version="1.0"?><Relationships xmlns="${RELS_NS}">${rels.join('')}</Relationships>`,
    ],
    ...(settingsRels
      ? ([['word/_rels/settings.xml.rels', settingsRels]] as [string, string][])
      : []),
  ]);
}

/** RGBA pixels of `text`'s QR code, `scale` pixels a module, with a 4-module quiet zone. */
function qrPixels(
  text: string,
  scale = 6,
  o: { invert?: boolean } = {},
): { data: Buffer; width: number; height: number } {
  const qr = QRCode.create(text, { errorCorrectionLevel: 'M' });
  const size = qr.modules.size;
  const side = (size + 8) * scale;
  const data = Buffer.alloc(side * side * 4);
  for (let y = 0; y < side; y++) {
    for (let x = 0; x < side; x++) {
      const mx = Math.floor(x / scale) - 4;
      const my = Math.floor(y / scale) - 4;
      const dark = mx >= 0 && my >= 0 && mx < size && my < size && qr.modules.get(my, mx) === 1;
      const v = dark !== (o.invert === true) ? 0 : 255;
      const i = (y * side + x) * 4;
      data[i] = v;
      data[i + 1] = v;
      data[i + 2] = v;
      data[i + 3] = 255;
    }
  }
  return { data, width: side, height: side };
}

export function qrPng(text: string, scale = 6, o: { invert?: boolean } = {}): Buffer {
  const px = qrPixels(text, scale, o);
  const png = new PNG({ width: px.width, height: px.height });
  px.data.copy(png.data);
  return PNG.sync.write(png);
}

export function qrJpeg(text: string, scale = 6): Buffer {
  return jpeg.encode(qrPixels(text, scale), 90).data;
}

/** An iCalendar invitation with the given extra content lines (folded as RFC 5545 says). */
export function ics(lines: string[]): string {
  const fold = (l: string) => {
    const out: string[] = [];
    for (let i = 0; i < l.length; i += 70) out.push((i ? ' ' : '') + l.slice(i, i + 70));
    return out.join('\r\n');
  };
  return [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Test//EN',
    'METHOD:REQUEST',
    'BEGIN:VEVENT',
    'UID:1@example.com',
    'DTSTART:20260301T100000Z',
    ...lines.map(fold),
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  ].join('\r\n');
}
