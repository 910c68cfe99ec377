import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createEmailSchema,
  DEFAULT_EMAIL_LIMITS,
  type EmailLimits,
  emailParser,
  safeParseEmail,
} from '../../src/index.ts';
import { canon, expectSameResult } from './canon.ts';

const SMALL: EmailLimits = {
  maxAttachments: 2,
  maxRecipients: 3,
  maxSubjectChars: 10,
  maxAttachmentBytes: 6,
};

function sameAsZod(input: unknown, limits: EmailLimits = DEFAULT_EMAIL_LIMITS): boolean {
  return expectSameResult(
    emailParser(limits).safeParse(input),
    createEmailSchema(limits).safeParse(input),
  );
}

const headers = {
  subject: 'Verify your account',
  sender: 'security@examp1e-bank.com',
  recipients: ['alice@example.org'],
  date: '2024-05-01T09:30:00Z',
};

describe('safeParseEmail: exactly Email.safeParse', () => {
  it('gives zod’s output, key order included, on valid Emails of every shape', () => {
    const cases: unknown[] = [
      { headers, body_text: 'hi' },
      { body_html: '<p>x</p>', headers, extra: 1 },
      { headers: { ...headers, cc: ['b@example.org'], bcc: [], raw_headers: {} }, body_text: '' },
      {
        headers: {
          raw_headers: { received: ['a', 'b'], '1': 'x', subject: 'y', 'x-a': [] },
          date: '2024-05-01T09:30:00.123+02:00',
          recipients: ['a@b.co', 'c@d.example'],
          sender: "o'brien+x@mail.example.com",
          subject: 's'.repeat(998),
          other: true,
        },
        body_text: 'a',
        body_html: 'b',
        language: 'EN',
        source: 'imap',
        analysis_context: { stage: { providers: {}, analyzers: {} } },
      },
      // keys holding undefined stay where they are, as zod leaves them
      { headers: { ...headers, cc: undefined, raw_headers: undefined }, body_text: 'x' },
      {
        headers,
        body_text: undefined,
        body_html: 'x',
        attachments: undefined,
        language: undefined,
      },
      { headers, body_text: 'x', source: undefined, analysis_context: undefined },
      {
        headers,
        body_text: 'x',
        attachments: [
          { filename: 'a.pdf', content: 'QUJD' },
          { content: 'QUJDRA==\r\n', filename: 'b', content_type: 'text/plain', size: 9 },
          { filename: 'c', size: undefined, content: 'QQ==' },
          { filename: 'd', content_id: '<x@y>', sha256: 'a'.repeat(64), size: 0 },
          { filename: 'e', content: undefined, sha256: undefined, content_type: undefined },
        ],
      },
      // a local date without a zone is accepted by the schema
      { headers: { ...headers, date: '2024-05-01T09:30' }, body_text: 'x' },
    ];
    for (const c of cases) expect(sameAsZod(c)).toBe(true);
  });

  it('refuses what zod refuses, with zod’s issues', () => {
    const cases: unknown[] = [
      null,
      [],
      'x',
      { headers },
      { headers, body_text: 1 },
      { headers: { ...headers, sender: 'not an address' }, body_text: 'x' },
      { headers: { ...headers, recipients: [] }, body_text: 'x' },
      { headers: { ...headers, recipients: 'a@b.co' }, body_text: 'x' },
      { headers: { ...headers, cc: ['x'] }, body_text: 'x' },
      { headers: { ...headers, date: '2024-02-30T00:00:00Z' }, body_text: 'x' },
      { headers: { ...headers, subject: 's'.repeat(999) }, body_text: 'x' },
      { headers: { ...headers, raw_headers: { a: 1 } }, body_text: 'x' },
      { headers: { ...headers, raw_headers: { a: ['x', 2] } }, body_text: 'x' },
      { headers, body_text: 'x', language: 'xx' },
      { headers, body_text: 'x', source: 's'.repeat(256) },
      { headers, body_text: 'x', attachments: [{ filename: 'a', content: 'not base64!' }] },
      { headers, body_text: 'x', attachments: [{ filename: 'a', size: -1 }] },
      { headers, body_text: 'x', attachments: [{ filename: 'a', size: 1.5 }] },
      { headers, body_text: 'x', attachments: [{ filename: 'a', sha256: 'A'.repeat(64) }] },
      { headers, body_text: 'x', attachments: [{ filename: 'a', content_type: null }] },
      { headers, body_text: 'x', attachments: [{}] },
      { headers, body_text: 'x', analysis_context: [] },
    ];
    for (const c of cases) expect(sameAsZod(c)).toBe(false);
  });

  it('applies the configured limits as the schema of those limits does', () => {
    const h = { ...headers, subject: 'short' };
    const four = ['a@b.co', 'c@d.co', 'e@f.co', 'g@h.co'];
    expect(sameAsZod({ headers: { ...h, subject: 's'.repeat(10) }, body_text: 'x' }, SMALL)).toBe(
      true,
    );
    expect(sameAsZod({ headers: { ...h, subject: 's'.repeat(11) }, body_text: 'x' }, SMALL)).toBe(
      false,
    );
    expect(
      sameAsZod({ headers: { ...h, recipients: four.slice(0, 3) }, body_text: 'x' }, SMALL),
    ).toBe(true);
    expect(
      sameAsZod(
        {
          headers: { ...h, recipients: four.slice(0, 2), cc: four.slice(2) },
          body_text: 'x',
        },
        SMALL,
      ),
    ).toBe(false);
    const att = { filename: 'a', content: 'QUJDREVG' }; // 6 bytes
    expect(sameAsZod({ headers: h, body_text: 'x', attachments: [att, att] }, SMALL)).toBe(true);
    expect(sameAsZod({ headers: h, body_text: 'x', attachments: [att, att, att] }, SMALL)).toBe(
      false,
    );
    expect(
      sameAsZod(
        { headers: h, body_text: 'x', attachments: [{ filename: 'a', content: 'QUJDREVGRw==' }] },
        SMALL,
      ),
    ).toBe(false);
  });

  it('leaves unusual objects to zod', () => {
    const nullProto = Object.assign(Object.create(null) as Record<string, unknown>, {
      headers,
      body_text: 'x',
    });
    class Mail {
      headers = headers;
      body_text = 'x';
    }
    const withSymbol = {
      headers: { ...headers, raw_headers: { a: 'x', [Symbol('s')]: 'y' } },
      body_text: 'x',
    };
    for (const c of [
      nullProto,
      new Mail(),
      withSymbol,
      JSON.parse(
        `{"__proto__": {"x": 1}, "headers": ${JSON.stringify(headers)}, "body_text": "x"}`,
      ),
      { headers: { ...headers, raw_headers: JSON.parse('{"__proto__": "x"}') }, body_text: 'x' },
      { headers, body_text: 'x', analysis_context: { constructor: 'x' } },
    ])
      sameAsZod(c);
  });

  it('matches zod on generated Emails (property)', () => {
    const odd = fc.constantFrom(undefined, null, 0, '', 'x', [], {}, true);
    const address = fc.oneof(
      fc.constantFrom('a@b.co', 'x.y+z@mail.example.org', 'bad', '@b.co', 'a@b', 'A_B@C-D.EXAMPLE'),
      fc.emailAddress(),
      odd,
    );
    const text = (max: number) =>
      fc.oneof(fc.string({ maxLength: 8 }), fc.constant('s'.repeat(max + 1)), odd);
    const hdrs = fc.record(
      {
        subject: text(998),
        sender: address,
        recipients: fc.oneof(fc.array(address, { maxLength: 3 }), odd),
        cc: fc.oneof(fc.array(address, { maxLength: 2 }), odd),
        bcc: fc.oneof(fc.array(address, { maxLength: 2 }), odd),
        date: fc.oneof(
          fc.constantFrom(
            '2024-05-01T09:30:00Z',
            '2024-05-01T09:30:00+01:00',
            '2024-13-01T00:00:00Z',
            '2024-05-01',
          ),
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          odd,
        ),
        raw_headers: fc.oneof(
          fc.dictionary(
            fc.string({ maxLength: 5 }),
            fc.oneof(
              fc.string({ maxLength: 5 }),
              fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 }),
              odd,
            ),
          ),
          odd,
        ),
        junk: fc.anything(),
      },
      { requiredKeys: [] },
    );
    const attachment = fc.oneof(
      fc.record(
        {
          filename: text(1024),
          content_type: text(255),
          size: fc.oneof(
            fc.integer({ min: -2, max: 10 }),
            fc.constantFrom(1.5, Number.MAX_SAFE_INTEGER + 2, -0),
            odd,
          ),
          content: fc.oneof(
            fc.base64String({ maxLength: 12 }),
            fc.constantFrom('QUJD\r\n', '====', 'a b'),
            odd,
          ),
          content_id: text(998),
          sha256: fc.oneof(fc.stringMatching(/^[a-f0-9]{64}$/), odd),
        },
        { requiredKeys: [] },
      ),
      odd,
    );
    const email = fc.record(
      {
        headers: fc.oneof({ weight: 8, arbitrary: hdrs }, { weight: 1, arbitrary: odd }),
        body_text: text(10),
        body_html: text(10),
        attachments: fc.oneof(fc.array(attachment, { maxLength: 3 }), odd),
        language: fc.oneof(fc.constantFrom('en', 'DE', 'pt', 'zz', 'english'), odd),
        source: text(255),
        analysis_context: fc.oneof(fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue()), odd),
        other: fc.anything(),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(email, (e) => {
        sameAsZod(e);
        sameAsZod(e, SMALL);
      }),
      { numRuns: 3000 },
    );
    // thousands of generated Emails: a few seconds alone, several times that beside other work
  }, 120_000);

  it('matches zod on generated valid Emails, with keys holding undefined (property)', () => {
    const addr = fc.constantFrom('a@b.co', 'x.y+z@mail.example.org', "o'k@ex-ample.com");
    const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
    const email = fc.record(
      {
        headers: fc.record(
          {
            subject: fc.string({ maxLength: 10 }),
            sender: addr,
            recipients: fc.array(addr, { minLength: 1, maxLength: 3 }),
            cc: maybe(fc.array(addr, { maxLength: 2 })),
            bcc: maybe(fc.array(addr, { maxLength: 2 })),
            date: fc
              .date({
                noInvalidDate: true,
                min: new Date(0),
                max: new Date('2999-12-31T00:00:00Z'),
              })
              .map((d) => d.toISOString()),
            raw_headers: maybe(
              fc.dictionary(
                fc.string({ maxLength: 5 }).filter((k) => k !== '__proto__'),
                fc.oneof(fc.string({ maxLength: 5 }), fc.array(fc.string({ maxLength: 3 }))),
              ),
            ),
          },
          { requiredKeys: ['subject', 'sender', 'recipients', 'date'] },
        ),
        body_text: fc.string({ maxLength: 5 }),
        body_html: maybe(fc.string({ maxLength: 5 })),
        attachments: maybe(
          fc.array(
            fc.record(
              {
                filename: fc.string({ maxLength: 5 }),
                content_type: maybe(fc.constantFrom('text/plain', 'application/pdf')),
                size: maybe(fc.nat(100)),
                content: maybe(fc.base64String({ maxLength: 12 })),
                content_id: maybe(fc.string({ maxLength: 5 })),
                sha256: maybe(fc.stringMatching(/^[a-f0-9]{64}$/)),
              },
              { requiredKeys: ['filename'] },
            ),
            { maxLength: 2 },
          ),
        ),
        language: maybe(fc.constantFrom('en', 'DE', 'pt')),
        source: maybe(fc.string({ maxLength: 5 })),
        analysis_context: maybe(fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue())),
      },
      { requiredKeys: ['headers', 'body_text'] },
    );
    fc.assert(
      fc.property(email, (e) => {
        expect(sameAsZod(e)).toBe(true);
        expect(sameAsZod(JSON.parse(JSON.stringify(e)))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  }, 120_000);

  it('is the default-limits parser', () => {
    const input = { headers, body_text: 'x' };
    expect(canon(safeParseEmail(input))).toEqual(canon(emailParser().safeParse(input)));
  });
});
