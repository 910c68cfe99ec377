import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { calendarLinks } from '../../src/calendar-links.ts';
import {
  type AttachmentBytes,
  DOCUMENT_LINK_LIMITS,
  documentLinks,
  documentUrls,
} from '../../src/index.ts';
import { rtfLinks, zipDocumentLinks } from '../../src/office-links.ts';
import { pdfLinks } from '../../src/pdf-links.ts';
import { qrText } from '../../src/qr-links.ts';
import { docx, ics, pdf, qrJpeg, qrPng, zip } from '../document-fixtures.ts';

const att = (filename: string, bytes: Buffer | string, content_type = ''): AttachmentBytes => ({
  filename,
  content_type,
  bytes: typeof bytes === 'string' ? Buffer.from(bytes) : bytes,
});

describe('pdfLinks', () => {
  it('reads URI actions written in the file, literal and hex strings, escaped names', () => {
    const base = pdf({ plain: ['https://refund.example.net/claim?id=1', 'http://a.example/(x)'] });
    const extra = Buffer.from(
      '\n9 0 obj << /S /URI /U#52I <68747470733a2f2f6865782e6578616d706c652f> >> endobj\n',
      'latin1',
    );
    expect(pdfLinks(Buffer.concat([base, extra])).uris).toEqual([
      'https://refund.example.net/claim?id=1',
      'http://a.example/(x)',
      'https://hex.example/',
    ]);
  });

  it('reads URI actions inside a compressed object stream (the issue-32 refund lure)', () => {
    const r = pdfLinks(pdf({ compressed: ['https://refund-portal.example.com/login'] }));
    expect(r.uris).toEqual(['https://refund-portal.example.com/login']);
  });

  it('hands back the JPEG images it shows, for the QR decoder', () => {
    const img = qrJpeg('https://scan.example.org/q');
    const r = pdfLinks(pdf({ jpegs: [img] }));
    expect(r.jpegs).toHaveLength(1);
    expect(Buffer.compare(r.jpegs[0] as Buffer, img)).toBe(0);
  });

  it('a UTF-16 text string is decoded', () => {
    const s = Buffer.concat([
      Buffer.from('%PDF-1.4\n1 0 obj << /URI (', 'latin1'),
      Buffer.from([0xfe, 0xff]),
      Buffer.from('https://u16.example/', 'utf16le').swap16(),
      Buffer.from(') >> endobj', 'latin1'),
    ]);
    expect(pdfLinks(s).uris).toEqual(['https://u16.example/']);
  });
});

describe('office documents', () => {
  it('docx: external hyperlink relationships, HYPERLINK fields, remote templates', () => {
    const links = zipDocumentLinks(
      docx({
        links: ['https://portal.example.com/pay?a=1&b=2'],
        fields: ['http://field.example/x'],
        template: 'http://198.51.100.7/t.dotm',
      }),
    );
    expect(links.sort()).toEqual(
      [
        'http://198.51.100.7/t.dotm',
        'http://field.example/x',
        'https://portal.example.com/pay?a=1&b=2',
      ].sort(),
    );
  });

  it('internal relationships (styles, images in the package) are not links', () => {
    expect(zipDocumentLinks(docx({}))).toEqual([]);
  });

  it('xlsx HYPERLINK formulas and ODF xlink:href', () => {
    const xlsx = zip([
      ['[Content_Types].xml', '<Types/>'],
      [
        'xl/worksheets/sheet1.xml',
        '<worksheet><c><f>HYPERLINK(&quot;https://sheet.example/a&quot;,&quot;Open&quot;)</f></c></worksheet>',
      ],
    ]);
    expect(zipDocumentLinks(xlsx)).toEqual(['https://sheet.example/a']);
    const odt = zip([
      ['mimetype', 'application/vnd.oasis.opendocument.text'],
      [
        'content.xml',
        '<office:text><text:a xlink:href="https://odt.example/b?x=1&amp;y=2"/><text:a xlink:href="#Table1"/></office:text>',
      ],
    ]);
    expect(zipDocumentLinks(odt)).toEqual(['https://odt.example/b?x=1&y=2']);
  });

  it('stored (uncompressed) parts are read too', () => {
    const d = zip(
      [
        [
          'word/_rels/document.xml.rels',
          '<Relationships><Relationship Target="https://stored.example/" TargetMode="External" Id="r"/></Relationships>',
        ],
      ],
      { stored: true },
    );
    expect(zipDocumentLinks(d)).toEqual(['https://stored.example/']);
  });

  it('rtf: HYPERLINK fields', () => {
    const rtf = Buffer.from(
      '{\\rtf1{\\field{\\*\\fldinst{HYPERLINK "https://rtf.example/doc"}}{\\fldrslt{click}}}}',
    );
    expect(rtfLinks(rtf)).toEqual(['https://rtf.example/doc']);
  });
});

describe('calendarLinks', () => {
  it('unfolds lines and reads URL, ATTACH, ALTREP, and URLs in DESCRIPTION and LOCATION', () => {
    const long = `https://meet.example.com/j/${'1234567890'.repeat(12)}`;
    const text = ics([
      'SUMMARY:Payroll review',
      `DESCRIPTION:Join here\\: ${long}\\nor call`,
      'LOCATION;ALTREP="https://altrep.example/room":Room 4\\, https://loc.example/map',
      'URL:https://url.example/event',
      'ATTACH;FMTTYPE=application/pdf:https://files.example/agenda.pdf',
      'ATTACH;ENCODING=BASE64;VALUE=BINARY:aHR0cHM6Ly9ub3QuYS5saW5r',
    ]);
    const r = calendarLinks(text);
    expect(r.targets).toEqual([
      'https://altrep.example/room',
      'https://url.example/event',
      'https://files.example/agenda.pdf',
    ]);
    expect(r.texts.join('\n')).toContain(long);
    expect(r.texts.join('\n')).toContain('https://loc.example/map');
  });

  it('an HTML description (X-ALT-DESC) counts as HTML', () => {
    const r = calendarLinks(
      ics(['X-ALT-DESC;FMTTYPE=text/html:<a href="https://alt.example/x">Join</a>']),
    );
    expect(r.html).toEqual(['<a href="https://alt.example/x">Join</a>']);
  });
});

describe('qrText', () => {
  it('reads a QR code in a PNG and in a JPEG', () => {
    expect(qrText(qrPng('https://quish.example/a'))).toBe('https://quish.example/a');
    expect(qrText(qrJpeg('https://quish.example/b'))).toBe('https://quish.example/b');
  });

  it('reads a light-on-dark (inverted) code', () => {
    expect(qrText(qrPng('https://inverted.example/', 6, { invert: true }))).toBe(
      'https://inverted.example/',
    );
  });

  it('reads a large image reduced before the search', () => {
    // 37 modules at 40 px: ~1800 px a side, 3.2 MP, reduced 8 times
    expect(qrText(qrPng('https://large.example/q', 40))).toBe('https://large.example/q');
  });

  it('an image without a code gives nothing; a banner or an icon is not decoded', () => {
    const gradient = new PNG({ width: 200, height: 200 });
    for (let i = 0; i < gradient.data.length; i++)
      gradient.data[i] = i % 4 === 3 ? 255 : (i >> 6) & 0xff;
    expect(qrText(PNG.sync.write(gradient))).toBeUndefined();
    // a code drawn 1 px a module (too small to scan), and one in a 5:1 strip (over maxAspect)
    expect(qrText(qrPng('https://tiny.example/', 1))).toBeUndefined();
    const strip = new PNG({ width: 1000, height: 200 });
    const code = PNG.sync.read(qrPng('https://strip.example/', 5));
    PNG.bitblt(code, strip, 0, 0, code.width, Math.min(code.height, 200), 0, 0);
    expect(qrText(PNG.sync.write(strip))).toBeUndefined();
  });
});

describe('documentLinks', () => {
  it('marks each link with where it was found', () => {
    const urls = documentLinks([
      att('invoice.pdf', pdf({ compressed: ['https://refund.example.com/claim'] })),
      att('notes.txt', 'https://not-read.example/'),
      att('scan.png', qrPng('https://quish.example/login'), 'image/png'),
      att('invite.ics', ics(['URL:https://cal.example/e']), 'text/calendar'),
      att('offer.docx', docx({ links: ['https://office.example/x'] })),
    ]);
    expect(urls.map((u) => [u.source, u.url, u.attachment, u.attachmentName])).toEqual([
      ['pdf', 'https://refund.example.com/claim', 0, 'invoice.pdf'],
      ['qr', 'https://quish.example/login', 2, 'scan.png'],
      ['calendar', 'https://cal.example/e', 3, 'invite.ics'],
      ['office', 'https://office.example/x', 4, 'offer.docx'],
    ]);
    expect(urls[0]).toMatchObject({ host: 'refund.example.com', registrableDomain: 'example.com' });
  });

  it('a QR code inside a PDF is found, marked qr, in the PDF', () => {
    const urls = documentLinks([
      att('doc.pdf', pdf({ jpegs: [qrJpeg('https://pdfqr.example/')] })),
    ]);
    expect(urls.map((u) => [u.source, u.url, u.attachmentName])).toEqual([
      ['qr', 'https://pdfqr.example/', 'doc.pdf'],
    ]);
  });

  it('a QR code that is not a URL is searched for URLs; other schemes are not links', () => {
    const urls = documentLinks([
      att('a.png', qrPng('Pay here: https://pay.example/now thanks')),
      att('b.png', qrPng('WIFI:S:guest;T:WPA;P:secret;;')),
    ]);
    expect(urls.map((u) => u.url)).toEqual(['https://pay.example/now']);
  });

  it('decodes at most maxImages images per message', () => {
    const imgs = Array.from({ length: 4 }, (_, i) =>
      att(`${i}.png`, qrPng(`https://q${i}.example/`)),
    );
    const urls = documentLinks(imgs, { ...DOCUMENT_LINK_LIMITS, maxImages: 2, qrBudgetMs: 60_000 });
    expect(urls.map((u) => u.url)).toEqual(['https://q0.example/', 'https://q1.example/']);
  });

  it('documentUrls reads an Email once and keeps attachment indexes', () => {
    const email = {
      headers: { subject: 's' } as never,
      attachments: [
        { filename: 'meta-only.pdf', content_type: 'application/pdf', size: 10 },
        {
          filename: 'invoice.pdf',
          content_type: 'application/pdf',
          content: pdf({ plain: ['https://x.example/'] }).toString('base64'),
        },
      ],
    };
    const a = documentUrls(email);
    expect(a.map((u) => [u.url, u.attachment])).toEqual([['https://x.example/', 1]]);
    expect(documentUrls(email)).toEqual(a);
  });
});
