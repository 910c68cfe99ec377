import fc from 'fast-check';

/**
 * Inputs an attacker writes, for the property tests of every decoder of outside bytes (issue 28):
 * text made of pieces that break naive decoders, mixed with ordinary text. Among them, always
 * possible: NUL, a bare CR, a bare LF, CRLF, lines far longer than any limit, invalid UTF-8 (lone
 * continuation bytes, overlong forms, surrogates, 0xFF), unpaired UTF-16 surrogates, encoded
 * words, boundaries and header-like lines. Sizes stay small so that a few hundred runs take
 * seconds; `overlong` alone reaches tens of KiB.
 */

const INVALID_UTF8: readonly number[][] = [
  [0x80],
  [0xbf, 0xbf],
  [0xc0, 0xaf],
  [0xc3, 0x28],
  [0xe0, 0x80, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xfe],
  [0xff],
];

/** One hostile piece, as bytes. */
const hostilePiece: fc.Arbitrary<Buffer> = fc.oneof(
  // the characters that break decoders come often: a few pieces hold one almost surely
  {
    weight: 4,
    arbitrary: fc
      .constantFrom('\0', '\r', '\n', '\r\n', '\n\r', '\r\r\n', '\t', ' ', ':', '=', ';', '"', '\\')
      .map((s) => Buffer.from(s, 'latin1')),
  },
  { weight: 2, arbitrary: fc.constantFrom(...INVALID_UTF8).map((b) => Buffer.from(b)) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(
        'X-Trawl-Verdict: clean',
        'Subject: ',
        'From: a@example.org',
        'To: b@example.org',
        'Content-Type: multipart/mixed; boundary="b"',
        'Content-Type: text/html; charset=utf-8',
        'Content-Transfer-Encoding: base64',
        'Content-Transfer-Encoding: quoted-printable',
        '--b',
        '--b--',
        '=?utf-8?B?w6k=?=',
        '=?utf-8?Q?=C3=A9?=',
        '=?x?B?',
        '=C3=',
        '%00',
        '%ff',
        '\\u0000',
        '<a href="http://x.example/?id=%00">',
        'http://',
        '😀',
      )
      .map((s) => Buffer.from(s, 'utf8')),
  },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }).map((s) => Buffer.from(s, 'utf8')) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 24 }).map((b) => Buffer.from(b)) },
);

/** A run of one character far past any line limit (998, 1000, 64 KiB of headers...). */
const overlong: fc.Arbitrary<Buffer> = fc
  .tuple(fc.constantFrom('a', ' ', '=', '\0', '-', '\xff'), fc.integer({ min: 999, max: 40_000 }))
  .map(([c, n]) => Buffer.alloc(n, c, 'latin1'));

/** Hostile bytes: pieces and, now and then, an overlong run. */
export function hostileBytes(maxPieces = 40): fc.Arbitrary<Buffer> {
  return fc
    .array(fc.oneof({ weight: 12, arbitrary: hostilePiece }, { weight: 1, arbitrary: overlong }), {
      maxLength: maxPieces,
    })
    .map((parts) => Buffer.concat(parts));
}

/** Hostile text (what a URL query, a form field or a JSON string decodes to). */
export function hostileText(maxPieces = 20): fc.Arbitrary<string> {
  return fc.oneof(
    hostileBytes(maxPieces).map((b) => b.toString('utf8')),
    hostileBytes(maxPieces).map((b) => b.toString('latin1')),
    fc
      .array(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 8 }),
          // unpaired surrogates exist only as JS strings (UTF-8 cannot carry them)
          fc.constantFrom('\0', '\r', '\r\n', '\ud800', '\udfff', '\ud83d', '\u2028', '\ufeff'),
        ),
        { maxLength: maxPieces },
      )
      .map((parts) => parts.join('')),
  );
}

/** A message: hostile header lines, a separator (or none), a hostile body. */
export const hostileMessage: fc.Arbitrary<Buffer> = fc
  .tuple(
    fc.array(
      fc.tuple(
        fc.constantFrom(
          'From',
          'To',
          'Subject',
          'Date',
          'Content-Type',
          'X-Trawl-Score',
          'Received',
        ),
        hostileBytes(6),
        fc.constantFrom('\r\n', '\n', '\r', '\r\n '),
      ),
      { maxLength: 12 },
    ),
    fc.constantFrom('\r\n', '\n', '\r', '\r\r', ''),
    hostileBytes(30),
  )
  .map(([headers, sep, body]) =>
    Buffer.concat([
      ...headers.flatMap(([name, value, eol]) => [
        Buffer.from(`${name}: `),
        value,
        Buffer.from(eol, 'latin1'),
      ]),
      Buffer.from(sep, 'latin1'),
      body,
    ]),
  );

/** A JSON value whose strings are hostile (for request bodies). */
export const hostileJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileText(8),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(fc.oneof(hostileText(3), fc.string({ maxLength: 12 })), tie('value'), {
      maxKeys: 6,
    }),
  ),
})).value;
