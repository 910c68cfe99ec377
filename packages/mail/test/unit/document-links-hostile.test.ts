/**
 * The document decoders on hostile input (issue 32: attachments are written by attackers). Each
 * decoder is fed random bytes with its format's magic, NUL bytes, files cut at every length,
 * zip and deflate bombs, and images that claim huge dimensions; it must never throw, must keep its
 * output within its limits, and a bomb must cost what its limit allows, not what it claims. The
 * timed cases hold a budget that the bounded decoders meet by far (a few to a few hundred ms) and an
 * unbounded one would miss (a 1 GiB inflate, a 10,000 × 10,000 decode).
 */
import { deflateSync } from 'node:zlib';
import fc from 'fast-check';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { calendarLinks, unfoldCalendar } from '../../src/calendar-links.ts';
import { DOCUMENT_LINK_LIMITS, documentLinks } from '../../src/index.ts';
import { zipDocumentLinks } from '../../src/office-links.ts';
import { PDF_LINK_LIMITS, pdfLinks } from '../../src/pdf-links.ts';
import { qrText } from '../../src/qr-links.ts';
import { docx, ics, pdf, qrJpeg, qrPng, zip } from '../document-fixtures.ts';

const BUDGET_MS = 3000;
const MB = 1024 * 1024;

function timed(work: () => unknown): number {
  const start = performance.now();
  work();
  return performance.now() - start;
}

const bytes = (max: number) => fc.uint8Array({ maxLength: max }).map((a) => Buffer.from(a));
/** Random bytes after a format's magic, NUL bytes likely. */
const withMagic = (magic: string, max = 2048) =>
  fc
    .array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 255 })), { maxLength: max })
    .map((a) => Buffer.concat([Buffer.from(magic, 'latin1'), Buffer.from(a)]));

/** Every prefix of `b` at `step` (and a few around each cut). */
function prefixes(b: Buffer, step: number): Buffer[] {
  const out: Buffer[] = [];
  for (let n = 0; n <= b.length; n += step) out.push(b.subarray(0, n));
  return out;
}

describe('pdfLinks on hostile input', () => {
  it('never throws on random bytes after %PDF- and keeps within its limits', () => {
    fc.assert(
      fc.property(withMagic('%PDF-1.7\n'), (b) => {
        const r = pdfLinks(b);
        expect(r.uris.length).toBeLessThanOrEqual(PDF_LINK_LIMITS.maxLinks);
        for (const u of r.uris) expect(u.length).toBeLessThanOrEqual(8192);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on PDF tokens in random order (names, strings, streams, NUL)', () => {
    const token = fc.constantFrom(
      '/URI ',
      '/U#52I',
      '(',
      ')',
      '\\',
      '<',
      '>',
      '<<',
      'stream\r\n',
      'endstream',
      ' obj ',
      '/Type /ObjStm /Filter /FlateDecode /Length 5 ',
      '/DCTDecode /Image ',
      '\0',
      'http://x.example/',
      '\xfe\xff',
    );
    fc.assert(
      fc.property(fc.array(token, { maxLength: 200 }), (tokens) => {
        const r = pdfLinks(Buffer.from(`%PDF-1.4\n${tokens.join('')}`, 'latin1'));
        expect(r.jpegs.length).toBeLessThanOrEqual(PDF_LINK_LIMITS.maxImages);
      }),
      { numRuns: 500 },
    );
  });

  it('regression: a UTF-16 string of an odd number of bytes threw (swap16)', () => {
    expect(() =>
      pdfLinks(Buffer.from('%PDF-1.4\n/URI (\xfe\xff\x00h\x00) /URI ', 'latin1')),
    ).not.toThrow();
  });

  it('a file cut at any length gives a subset of the whole file’s links, never an error', () => {
    const whole = pdf({ plain: ['https://a.example/1'], compressed: ['https://b.example/2'] });
    const all = new Set(pdfLinks(whole).uris);
    for (const part of prefixes(whole, 7)) {
      for (const u of pdfLinks(part).uris) {
        // a cut inside a string gives a prefix of one of the links
        expect([...all].some((a) => a.startsWith(u))).toBe(true);
      }
    }
  });

  it(`16 object streams that inflate to 1 GiB cost the inflate budget, no more (under ${BUDGET_MS} ms)`, () => {
    const zeros = deflateSync(Buffer.alloc(64 * MB));
    const bomb = (n: number) =>
      Buffer.concat([
        Buffer.from(
          `${n} 0 obj << /Type /ObjStm /Filter /FlateDecode /Length ${zeros.length} >>\nstream\n`,
          'latin1',
        ),
        zeros,
        Buffer.from('\nendstream endobj\n', 'latin1'),
      ]);
    // the same 64 MiB deflate, sixteen times: 1 GiB if each were inflated
    const file = Buffer.concat([
      Buffer.from('%PDF-1.7\n', 'latin1'),
      ...Array.from({ length: 16 }, (_, i) => bomb(i + 10)),
      pdf({ plain: ['https://plain-after.example/'] }),
    ]);
    let r: ReturnType<typeof pdfLinks> | undefined;
    expect(timed(() => (r = pdfLinks(file)))).toBeLessThan(BUDGET_MS);
    // links written in the file are read whatever the streams cost
    expect(r?.uris).toEqual(['https://plain-after.example/']);
    // one bomb spends one stream's room: a compressed link after it is still read
    const one = Buffer.concat([bomb(10), pdf({ compressed: ['https://after.example/'] })]);
    expect(pdfLinks(Buffer.concat([Buffer.from('%PDF-1.7\n'), one])).uris).toEqual([
      'https://after.example/',
    ]);
  });

  it(`20,000 stream keywords with no dictionary cost one bounded look each (under ${BUDGET_MS} ms)`, () => {
    const file = Buffer.from(`%PDF-1.4\n${'stream\n'.repeat((2 * MB) / 7)}`, 'latin1');
    expect(timed(() => pdfLinks(file))).toBeLessThan(BUDGET_MS);
  });
});

describe('office documents on hostile input', () => {
  it('never throws on random bytes after a zip signature', () => {
    fc.assert(
      fc.property(withMagic('PK\x03\x04'), (b) => {
        expect(zipDocumentLinks(b).length).toBeLessThanOrEqual(100);
      }),
      { numRuns: 300 },
    );
  });

  it('a document cut at any length never throws', () => {
    const whole = docx({ links: ['https://a.example/'], fields: ['https://b.example/'] });
    for (const part of prefixes(whole, 11)) zipDocumentLinks(part);
  });

  it('random entries, names and contents: no error, at most maxLinks', () => {
    const entry = fc.tuple(
      fc.oneof(
        fc.constantFrom(
          'word/_rels/document.xml.rels',
          'word/document.xml',
          'content.xml',
          'a.rels',
        ),
        fc.string({ maxLength: 30 }),
      ),
      fc.oneof(
        fc.string({ maxLength: 300 }),
        fc.constant('<Relationship Target="https://r.example/" TargetMode="External"/>'),
        fc.constant('HYPERLINK "https://h.example/"'),
      ),
    );
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 20 }), fc.boolean(), (entries, stored) => {
        expect(zipDocumentLinks(zip(entries, { stored })).length).toBeLessThanOrEqual(100);
      }),
      { numRuns: 200 },
    );
  });

  it(`a zip bomb (parts of 64 MiB each, 16 times the part limit) is skipped, the other parts read (under ${BUDGET_MS} ms)`, () => {
    // one deflated part of 64 MiB of spaces is about 64 KiB; the bomb parts come first
    const spaces = Buffer.alloc(64 * MB, 0x20);
    const bomb = zip([
      ['word/_rels/bomb.xml.rels', spaces],
      ['word/_rels/bomb2.xml.rels', spaces],
      [
        'word/_rels/document.xml.rels',
        '<Relationships><Relationship Target="https://kept.example/" TargetMode="External"/></Relationships>',
      ],
    ]);
    let links: string[] = [];
    expect(timed(() => (links = zipDocumentLinks(bomb)))).toBeLessThan(BUDGET_MS);
    expect(links).toEqual(['https://kept.example/']);
  });

  it('a central directory that claims 65,535 entries is walked within the buffer', () => {
    const b = Buffer.alloc(64 * 1024);
    b.write('PK\x03\x04', 0, 'latin1');
    const eocd = b.length - 22;
    b.writeUInt32LE(0x06054b50, eocd);
    b.writeUInt16LE(0xffff, eocd + 10);
    b.writeUInt32LE(4, eocd + 16);
    for (let p = 4; p + 46 < eocd; p += 46) b.writeUInt32LE(0x02014b50, p);
    expect(zipDocumentLinks(b)).toEqual([]);
  });
});

describe('calendarLinks on hostile input', () => {
  it('never throws on random text (NUL, lone CR, quotes, colons, semicolons)', () => {
    const ch = fc.constantFrom(
      '\0',
      '\r',
      '\n',
      ' ',
      '\t',
      '"',
      ':',
      ';',
      '=',
      '\\',
      'A',
      'URL',
      'h',
    );
    fc.assert(
      fc.property(fc.array(ch, { maxLength: 500 }), (a) => {
        const r = calendarLinks(a.join(''));
        expect(r.targets.length).toBeLessThanOrEqual(100);
      }),
      { numRuns: 500 },
    );
  });

  it('folding a line anywhere does not change what is found (RFC 5545 unfolding)', () => {
    const url = fc.webUrl({ withQueryParameters: true }).filter((u) => !/[\s,;\\]/.test(u));
    fc.assert(
      fc.property(
        url,
        fc.array(fc.integer({ min: 1, max: 200 }), { maxLength: 5 }),
        fc.constantFrom(' ', '\t'),
        (u, cuts, ws) => {
          const line = `URL:${u}`;
          let folded = '';
          let from = 0;
          for (const c of [...new Set(cuts)].sort((x, y) => x - y)) {
            if (c >= line.length) break;
            folded += `${line.slice(from, c)}\r\n${ws}`;
            from = c;
          }
          folded += line.slice(from);
          expect(unfoldCalendar(folded)).toBe(line);
          expect(
            calendarLinks(ics([]).replace('END:VEVENT', () => `${folded}\r\nEND:VEVENT`)).targets,
          ).toEqual([u]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it(`a 1 MiB line of parameters is read in one pass (under ${BUDGET_MS} ms)`, () => {
    const text = `BEGIN:VCALENDAR\r\nURL${';X="a:b"'.repeat(MB / 8)}:https://x.example/\r\n`;
    expect(timed(() => calendarLinks(text))).toBeLessThan(BUDGET_MS);
  });
});

describe('qrText on hostile input', () => {
  it('never throws on random bytes after a PNG or JPEG signature', () => {
    const png = withMagic('\x89PNG\r\n\x1a\n\0\0\0\rIHDR', 300);
    const jpeg = withMagic('\xff\xd8\xff', 300);
    fc.assert(
      fc.property(fc.oneof(png, jpeg), (b) => {
        const t = qrText(b);
        expect(t === undefined || typeof t === 'string').toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('an image cut at any length never throws', () => {
    for (const img of [qrPng('https://cut.example/'), qrJpeg('https://cut.example/')]) {
      for (const part of prefixes(img, Math.max(1, Math.floor(img.length / 60)))) qrText(part);
    }
  });

  it(`a PNG or JPEG that claims 100,000 × 100,000 pixels is not decoded (under ${BUDGET_MS} ms)`, () => {
    const png = qrPng('https://huge.example/');
    png.writeUInt32BE(100_000, 16);
    png.writeUInt32BE(100_000, 20);
    const jpeg = qrJpeg('https://huge.example/');
    // the first SOF0 marker's height and width
    const sof = jpeg.indexOf(Buffer.from([0xff, 0xc0]));
    jpeg.writeUInt16BE(60_000, sof + 5);
    jpeg.writeUInt16BE(60_000, sof + 7);
    expect(timed(() => expect(qrText(png)).toBeUndefined())).toBeLessThan(BUDGET_MS);
    expect(timed(() => expect(qrText(jpeg)).toBeUndefined())).toBeLessThan(BUDGET_MS);
  });

  it('an interlaced PNG is not decoded (its inflate would have no bound)', () => {
    const png = qrPng('https://interlaced.example/');
    png[28] = 1;
    expect(qrText(png)).toBeUndefined();
  });

  it('noise at the largest size decoded: the search runs on the reduced pixels (under 10 s)', () => {
    // 2000 × 2000 of noise: the search's worst case. Decoded, then searched on 500 × 500 pixels,
    // it took 3.5 s on this project's 2-core machine at load average 25; the search alone on
    // 1,000,000 noise pixels took 6.4 s at load 20, and its cost grows faster than the pixels
    const side = 2000;
    const rgba = Buffer.alloc(side * side * 4);
    let x = 12345;
    for (let i = 0; i < rgba.length; i++) {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      rgba[i] = i % 4 === 3 ? 255 : x & 0xff;
    }
    const png = new PNG({ width: side, height: side });
    rgba.copy(png.data);
    const file = PNG.sync.write(png, { deflateLevel: 1 });
    expect(timed(() => qrText(file))).toBeLessThan(10_000);
  });
});

describe('documentLinks on hostile input', () => {
  it('never throws on random attachments and keeps within its limits', () => {
    const attachment = fc.record({
      filename: fc.constantFrom('a.pdf', 'b.docx', 'c.ics', 'd.png', 'e.jpg', 'f.bin', ''),
      content_type: fc.constantFrom('', 'text/calendar', 'application/pdf', 'image/png'),
      bytes: fc.oneof(
        bytes(500),
        withMagic('%PDF-', 500),
        withMagic('PK\x03\x04', 500),
        withMagic('BEGIN:VCALENDAR\r\n', 500),
        withMagic('{\\rtf', 500),
      ),
    });
    fc.assert(
      fc.property(fc.array(attachment, { maxLength: 8 }), (atts) => {
        const urls = documentLinks(atts);
        expect(urls.length).toBeLessThanOrEqual(DOCUMENT_LINK_LIMITS.maxLinks);
        for (const u of urls) expect(u.attachment).toBeLessThan(atts.length);
      }),
      { numRuns: 200 },
    );
  });

  it('a message with many link-bearing attachments keeps at most maxLinks links', () => {
    const many = Array.from({ length: 40 }, (_, i) => ({
      filename: `${i}.pdf`,
      content_type: 'application/pdf',
      bytes: pdf({ plain: Array.from({ length: 20 }, (_, j) => `https://h${i}-${j}.example/`) }),
    }));
    expect(documentLinks(many)).toHaveLength(DOCUMENT_LINK_LIMITS.maxLinks);
  });
});
