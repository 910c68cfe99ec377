import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeQuotedPrintable, parseRawEmail } from '../../src/index.ts';

// parseRawEmail runs mailparser with a few of its internals replaced for speed (fewer header fields
// decoded, a byte-level quoted-printable decoder, no second end() of a part decoder). These tests
// hold it to the library's own answers.

const requireMail = createRequire(
  join(dirname(fileURLToPath(import.meta.url)), '../../package.json'),
);
const requireParser = createRequire(requireMail.resolve('mailparser'));
const requireSplit = createRequire(requireParser.resolve('@zone-eu/mailsplit'));
const libqp = requireSplit('libqp') as { decode(input: Buffer): Buffer };
const { simpleParser } = requireMail('mailparser') as {
  simpleParser(
    input: Buffer,
    options: object,
  ): Promise<{
    text?: string;
    html?: string | false;
    attachments: {
      content: Buffer;
      checksum: string;
      filename?: string;
      size: number;
      contentId?: string;
    }[];
  }>;
};

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '../fixtures');

describe('decodeQuotedPrintable', () => {
  const cases = [
    '',
    '=',
    '==',
    'a=',
    'a=\n',
    'a=\r\nb',
    'a= \r\nb',
    'a=\t \nb',
    'caf=C3=A9 =e9=E9',
    '=4=\r\n1',
    '=41=4',
    '=G1 =1G =\r',
    'trailing   \r\nspaces\t\t\n  only  ',
    'x =\r\r\n',
    '=\r\t\n=\r \r\n',
    '  =\n  \n',
    'bytes \u00e9\u00ff=FF',
  ];
  it.each(cases)('answers what libqp answers for %j', (text) => {
    const input = Buffer.from(text, 'latin1');
    expect(decodeQuotedPrintable(input)).toEqual(libqp.decode(input));
  });

  it.each([
    ['bytes that matter', '= \t\r\nDaFgz3\u00e9\u00ff', 200],
    ['only =, blanks, line breaks and one hex digit', '= \t\r\n3', 40],
  ])('answers what libqp answers for any mix of %s', (_what, alphabet, maxLength) => {
    const byte = fc.constantFrom(...Buffer.from(alphabet, 'latin1'));
    fc.assert(
      fc.property(fc.array(byte, { maxLength }), (bytes) => {
        const input = Buffer.from(bytes);
        expect(decodeQuotedPrintable(input)).toEqual(libqp.decode(input));
      }),
      { numRuns: 3000 },
    );
  });
});

const HEAD =
  'From: a@example.com\r\nTo: b@example.com\r\nSubject: parity\r\nDate: Fri, 3 May 2024 11:22:33 +0000\r\nMIME-Version: 1.0\r\n';
const crafted: Record<string, string> = {
  'quoted-printable text and html': `${HEAD}Content-Type: multipart/alternative; boundary="A"\r\n\r\n--A\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nCaf=C3=A9 au lait, a long line that is soft =\r\nbroken here   \r\n=3D=3d done=\r\n\r\n--A\r\nContent-Type: text/html; charset=iso-8859-1\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n<p>caf=E9 <a href=3D"https://example.com/=\r\npath">x</a></p>\t\r\n--A--\r\n`,
  'an attached message shown inline': `${HEAD}Content-Type: multipart/mixed; boundary="M"\r\n\r\n--M\r\nContent-Type: text/plain\r\n\r\nsee below\r\n--M\r\nContent-Type: message/rfc822\r\nContent-Disposition: inline\r\n\r\nFrom: =?utf-8?q?J=C3=BCrgen?= <j@example.de>\r\nTo: x@example.com, "Y" <y@example.com>\r\nCc: c@example.com\r\nSubject: =?utf-8?b?R3LDvMOfZQ==?=\r\nDate: Thu, 2 May 2024 10:00:00 +0200\r\nX-Other: not decoded\r\nContent-Type: text/plain\r\n\r\ninner body\r\n--M--\r\n`,
  'attachments, one quoted-printable, one with a Content-ID': `${HEAD}Content-Type: multipart/mixed; boundary="B"\r\n\r\n--B\r\nContent-Type: text/plain\r\n\r\nbody\r\n--B\r\nContent-Type: application/octet-stream; name="a.bin"\r\nContent-Transfer-Encoding: base64\r\nContent-ID: <part1@example.com>\r\n\r\nAAECAwQFBgcICQ==\r\n--B\r\nContent-Type: text/csv; name="b.csv"\r\nContent-Disposition: attachment; filename="b.csv"\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\na,b =\r\n,c=0A1,2  \r\n--B--\r\n`,
};

describe('parseRawEmail bodies and attachments match mailparser simpleParser', () => {
  const inputs: [string, Buffer][] = [
    ...readdirSync(fixtures)
      .filter((f) => f.endsWith('.eml'))
      .map((f): [string, Buffer] => [f, readFileSync(join(fixtures, f))]),
    ...Object.entries(crafted).map(([k, v]): [string, Buffer] => [k, Buffer.from(v)]),
  ];
  it.each(inputs)('%s', async (_name, raw) => {
    const ours = await parseRawEmail(raw, {
      envelope: { from: 'env@example.com', to: ['env@example.com'] },
      receivedAt: new Date('2024-05-01T00:00:00Z'),
    });
    const lib = await simpleParser(raw, {
      checksumAlgo: 'sha256',
      skipHtmlToText: true,
      skipTextToHtml: true,
      skipTextLinks: true,
      skipImageLinks: true,
    });
    if (typeof lib.html === 'string') expect(ours.body_html).toBe(lib.html);
    else expect(ours.body_html).toBeUndefined();
    if (lib.text !== undefined && lib.text.trim() !== '') expect(ours.body_text).toBe(lib.text);
    expect(
      (ours.attachments ?? []).map((a) => [a.filename, a.size, a.sha256, a.content, a.content_id]),
    ).toEqual(
      lib.attachments.map((a) => [
        a.filename ?? '',
        a.size,
        a.checksum,
        a.content.toString('base64'),
        a.contentId,
      ]),
    );
  });

  it('an attached message keeps its decoded summary in the text', async () => {
    const e = await parseRawEmail(Buffer.from(crafted['an attached message shown inline'] ?? ''));
    expect(e.body_text).toContain('From: "Jürgen" <j@example.de>');
    expect(e.body_text).toContain('Subject: Grüße');
    expect(e.body_text).toContain('Cc: c@example.com');
    expect(e.body_text).toContain('inner body');
  });
});
