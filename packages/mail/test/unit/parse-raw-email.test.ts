import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BadInputError, Email, TrawlError } from '@trawl/contracts';
import { describe, expect, it } from 'vitest';
import {
  emailId,
  MAIL_ERROR_CODES,
  PARSER_NOTES_HEADER,
  parseRawEmail,
  UNDISCLOSED_RECIPIENT,
  UNKNOWN_SENDER,
} from '../../src/index.ts';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '../fixtures');
const fixture = (name: string): Buffer => readFileSync(join(fixtures, name));

async function rejection(p: Promise<unknown>): Promise<TrawlError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(TrawlError);
    return err as TrawlError;
  }
  throw new Error('expected a rejection');
}

describe('parseRawEmail: headers', () => {
  it('maps a simple message to a valid Email', async () => {
    const e = await parseRawEmail(fixture('simple.eml'));
    expect(Email.safeParse(e).success).toBe(true);
    expect(e.headers.subject).toBe('Quarterly report');
    expect(e.headers.sender).toBe('alice@example.com');
    expect(e.headers.recipients).toEqual(['bob@example.org', 'carol@example.net']);
    expect(e.headers.cc).toEqual(['dave@example.com']);
    expect(e.headers.date).toBe('2024-05-14T07:30:00.000Z');
    expect(e.body_text).toContain('quarterly numbers');
    expect(e.body_html).toBeUndefined();
    expect(e.language).toBe('en');
    expect(e.analysis_context).toEqual({});
  });

  it('keeps every header in raw_headers, lower-cased, repeated ones as arrays', async () => {
    const e = await parseRawEmail(fixture('simple.eml'));
    const raw = e.headers.raw_headers ?? {};
    expect(raw['message-id']).toBe('<abc123@example.com>');
    expect(raw['content-type']).toBe('text/plain; charset=us-ascii');
    expect(Array.isArray(raw.received)).toBe(true);
    expect((raw.received as string[]).length).toBe(2);
    expect(raw.from).toBe('"Alice Example" <alice@example.com>');
    expect(raw[PARSER_NOTES_HEADER]).toBeUndefined();
  });

  it('punycodes IDN domains, rewrites quoted local parts, drops unusable recipients and notes it', async () => {
    const e = await parseRawEmail(fixture('idn-quoted.eml'));
    expect(e.headers.sender).toBe('john_doe@xn--bcher-kva.example');
    expect(e.headers.recipients).toEqual([
      'weird_local@example.org',
      'ok@example.org',
      'user@xn--mnchen-3ya.de',
    ]);
    const notes = e.headers.raw_headers?.[PARSER_NOTES_HEADER] as string[];
    expect(notes.some((n) => n.includes('rewrote'))).toBe(true);
  });

  it('rewrites a single-label domain under .invalid instead of losing the address', async () => {
    const raw =
      'From: Correios <info@correios>\nTo: phishing@pot\nSubject: x\nDate: Fri, 3 May 2024 11:22:33 +0000\n\nbody\n';
    const e = await parseRawEmail(raw);
    expect(e.headers.sender).toBe('info@correios.invalid');
    expect(e.headers.recipients).toEqual(['phishing@pot.invalid']);
  });

  it('takes the date from the newest Received header when Date is missing', async () => {
    const e = await parseRawEmail(fixture('no-date.eml'));
    expect(e.headers.date).toBe('2024-05-03T11:22:33.000Z');
    expect(e.headers.raw_headers?.[PARSER_NOTES_HEADER]).toContain(
      'date taken from Received (no Date header)',
    );
  });

  it('accepts broken but readable Date forms', async () => {
    const raw = (d: string) =>
      `From: a@example.com\nTo: b@example.com\nSubject: s\nDate: ${d}\n\nx\n`;
    expect((await parseRawEmail(raw('Fri, 3 May 2024 11:22:33 +0000 (UTC)'))).headers.date).toBe(
      '2024-05-03T11:22:33.000Z',
    );
    expect((await parseRawEmail(raw('3 May 2024 11:22:33 GMT'))).headers.date).toBe(
      '2024-05-03T11:22:33.000Z',
    );
    expect((await parseRawEmail(raw('Fri, 03 May 24 11:22:33 +0200'))).headers.date).toBe(
      '2024-05-03T09:22:33.000Z',
    );
  });

  it('answers 422 on /headers/date for an invalid Date and no Received; receivedAt rescues it', async () => {
    const err = await rejection(parseRawEmail(fixture('bad-date-no-received.eml')));
    expect(err).toBeInstanceOf(BadInputError);
    expect(err.status).toBe(422);
    expect(err.code).toBe(MAIL_ERROR_CODES.invalid);
    expect(err.problems?.map((p) => p.path)).toEqual(['/headers/date']);
    const e = await parseRawEmail(fixture('bad-date-no-received.eml'), {
      receivedAt: new Date('2024-06-01T00:00:00Z'),
    });
    expect(e.headers.date).toBe('2024-06-01T00:00:00.000Z');
  });

  it('uses a placeholder recipient for "undisclosed-recipients:;"', async () => {
    const e = await parseRawEmail(fixture('undisclosed.eml'));
    expect(e.headers.recipients).toEqual([UNDISCLOSED_RECIPIENT]);
  });

  it('falls back to Delivered-To when there is no To', async () => {
    const e = await parseRawEmail(fixture('delivered-to.eml'));
    expect(e.headers.recipients).toEqual(['mailbox@example.org']);
  });

  it('falls back to the envelope recipients', async () => {
    const e = await parseRawEmail(fixture('no-to.eml'), {
      envelope: { to: ['owner@example.org'] },
    });
    expect(e.headers.recipients).toEqual(['owner@example.org']);
  });

  it('analyses a message with no recipient at all (a Bcc copy) with the undisclosed placeholder', async () => {
    const e = await parseRawEmail(fixture('no-to.eml'));
    expect(e.headers.recipients).toEqual([UNDISCLOSED_RECIPIENT]);
  });

  it('answers 422 naming /headers/sender when there is no From', async () => {
    const err = await rejection(parseRawEmail(fixture('no-from.eml')));
    expect(err.status).toBe(422);
    expect(err.problems?.map((p) => p.path)).toEqual(['/headers/sender']);
  });

  it('falls back to Return-Path when From has no address, else to a placeholder', async () => {
    const e = await parseRawEmail(fixture('return-path-sender.eml'));
    expect(e.headers.sender).toBe('bounce@example.net');
    const raw =
      'From: Someone <>\nTo: b@example.com\nSubject: s\nDate: Fri, 3 May 2024 11:22:33 +0000\n\nx\n';
    expect((await parseRawEmail(raw)).headers.sender).toBe(UNKNOWN_SENDER);
  });

  it('caps recipients at the limit instead of refusing', async () => {
    const to = Array.from({ length: 30 }, (_, i) => `u${i}@example.com`).join(', ');
    const raw = `From: a@example.com\nTo: ${to}\nCc: c@example.com\nSubject: s\nDate: Fri, 3 May 2024 11:22:33 +0000\n\nx\n`;
    const e = await parseRawEmail(raw, {
      limits: {
        maxAttachments: 100,
        maxRecipients: 10,
        maxSubjectChars: 998,
        maxAttachmentBytes: 1000,
      },
    });
    expect(e.headers.recipients.length).toBe(10);
    expect(e.headers.cc).toBeUndefined();
  });

  it('does not let a forged parser-notes header through', async () => {
    const raw = `X-Trawl-Parser-Notes: all clean\nFrom: a@example.com\nTo: b@example.com\nSubject: s\nDate: Fri, 3 May 2024 11:22:33 +0000\n\nx\n`;
    const e = await parseRawEmail(raw);
    expect(e.headers.raw_headers?.[PARSER_NOTES_HEADER]).toBeUndefined();
  });
});

describe('parseRawEmail: charsets and structure', () => {
  it('decodes latin1 bodies and Q-encoded subjects', async () => {
    const e = await parseRawEmail(fixture('latin1.eml'));
    expect(e.headers.subject).toBe('Grüße');
    expect(e.body_text).toContain('Grüße aus München, schöne Tage à la française.');
  });

  it('decodes windows-1252 quoted-printable', async () => {
    const e = await parseRawEmail(fixture('windows-1252.eml'));
    expect(e.body_text).toContain('Price: €100 “special” offer – today');
  });

  it('decodes a base64 utf-8 subject and a koi8-r body', async () => {
    const e = await parseRawEmail(fixture('koi8r-utf8-subject.eml'));
    expect(e.headers.subject).toBe('Ваш аккаунт заблокирован ✓');
    expect(e.body_text).toContain('Здравствуйте! Ваш счёт заблокирован');
    expect(e.language).toBe('ru');
  });

  it('keeps both parts of multipart/alternative', async () => {
    const e = await parseRawEmail(fixture('alternative.eml'));
    expect(e.body_text).toContain('Visit www.paypal.com');
    expect(e.body_html).toContain('<a href="https://paypa1-secure.com/login">www.paypal.com</a>');
    expect(e.headers.raw_headers?.['reply-to']).toBe('collect@evil.example');
  });

  it('walks nested multiparts and returns attachments as base64 with size and sha256', async () => {
    const e = await parseRawEmail(fixture('nested.eml'));
    expect(e.body_text).toContain('See the invoice attached.');
    expect(e.body_html).toContain('cid:logo@x');
    const att = e.attachments ?? [];
    expect(att.map((a) => a.filename)).toEqual(['', 'invoice.bin']);
    const inv = att[1];
    const bytes = Buffer.alloc(1024);
    for (let i = 0; i < 1024; i++) bytes[i] = i % 256;
    expect(inv?.size).toBe(1024);
    expect(inv?.content_type).toBe('application/octet-stream');
    expect(Buffer.from(inv?.content ?? '', 'base64').equals(bytes)).toBe(true);
    const { createHash } = await import('node:crypto');
    expect(inv?.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(att[0]?.content_type).toBe('image/png');
    expect(att[0]?.content_id).toBe('<logo@x>');
  });

  it('makes body_text from the HTML when there is no text part', async () => {
    const raw =
      'From: a@example.com\nTo: b@example.com\nSubject: s\nDate: Fri, 3 May 2024 11:22:33 +0000\nContent-Type: text/html\n\n<p>Hello&nbsp;<b>world</b></p><script>x()</script>\n';
    const e = await parseRawEmail(raw);
    expect(e.body_html).toContain('<b>world</b>');
    expect(e.body_text).toBe('Hello world');
  });

  it('keeps attachments over the size limit as metadata without content', async () => {
    const e = await parseRawEmail(fixture('nested.eml'), {
      limits: {
        maxAttachments: 100,
        maxRecipients: 1000,
        maxSubjectChars: 998,
        maxAttachmentBytes: 100,
      },
    });
    const inv = e.attachments?.[1];
    expect(inv?.size).toBe(1024);
    expect(inv?.content).toBeUndefined();
    expect(inv?.sha256).toMatch(/^[a-f0-9]{64}$/);
  });
});

describe('emailId', () => {
  it('is stable for the same message and independent of key order and analysis_context', async () => {
    const a = await parseRawEmail(fixture('simple.eml'));
    const b = await parseRawEmail(fixture('simple.eml'));
    expect(emailId(a)).toBe(emailId(b));
    expect(emailId(a)).toMatch(/^em_[a-f0-9]{32}$/);
    const reordered = JSON.parse(
      JSON.stringify({ body_text: a.body_text, ...a, analysis_context: { s: {} } }),
    );
    expect(emailId(reordered)).toBe(emailId(a));
    const other = await parseRawEmail(fixture('latin1.eml'));
    expect(emailId(other)).not.toBe(emailId(a));
  });
});
