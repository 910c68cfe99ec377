import { createHash } from 'node:crypto';
import type { EmailInput } from '@trawl/contracts';
import { emailId } from '@trawl/mail';
import { describe, expect, it } from 'vitest';

function email(over: Record<string, unknown> = {}): EmailInput {
  return {
    headers: {
      subject: 'Verify your account',
      sender: 'security@examp1e-bank.com',
      recipients: ['alice@example.org', 'bob@example.org'],
      date: '2024-05-01T09:30:00Z',
      raw_headers: { 'message-id': '<a@b>', received: ['x', 'y'] },
    },
    body_text: 'Dear customer',
    ...over,
  } as EmailInput;
}

describe('emailId', () => {
  it('is the documented encoding (docs/api.md): sha256 over tagged, length-prefixed values', () => {
    const e = {
      headers: {
        subject: 'Hi',
        sender: 'a@b.c',
        recipients: ['d@e.f'],
        date: '2024-05-01T09:30:00Z',
      },
      body_text: 'é',
      body_html: 'x'.repeat(1500),
      attachments: [{ filename: 'x', content_type: 'text/plain', size: 3 }],
    } as EmailInput;
    const encoded =
      'o4:s11:attachmentsa1:o3:s12:content_types10:text/plains8:filenames1:xs4:sizen3;' +
      `s9:body_htmls1500:${'x'.repeat(1500)}` +
      's9:body_texts1:é' +
      's7:headerso4:s4:dates20:2024-05-01T09:30:00Zs10:recipientsa1:s5:d@e.f' +
      's6:senders5:a@b.cs7:subjects2:Hi';
    const hex = createHash('sha256').update(encoded).digest('hex');
    expect(emailId(e)).toBe(`em_${hex.slice(0, 32)}`);
  });

  it('does not depend on key order, analysis_context or undefined members', () => {
    const a = email();
    const reordered = JSON.parse(
      JSON.stringify({ body_text: a.body_text, analysis_context: { s: { x: 1 } }, ...a }),
    );
    expect(emailId(reordered)).toBe(emailId(a));
    expect(emailId({ ...a, body_html: undefined })).toBe(emailId(a));
    expect(emailId(a)).toMatch(/^em_[a-f0-9]{32}$/);
  });

  it('is the same for an Email and its JSON round trip', () => {
    const a = email({
      attachments: [
        { filename: 'a.txt', content_type: 'text/plain', size: 5, content: 'aGVsbG8=' },
      ],
      language: 'en',
    });
    expect(emailId(JSON.parse(JSON.stringify(a)))).toBe(emailId(a));
  });

  it('differs when any field differs, including where plain concatenation would not tell', () => {
    const base = email();
    const variants: EmailInput[] = [
      email({ body_text: 'Dear customer.' }),
      email({ body_html: 'Dear customer' }),
      email({ body_text: 'Dear customer', source: '' }),
      email({ language: 'en' }),
      // the same characters split differently between key and value, or between values
      email({ headers: { ...base.headers, raw_headers: { 'message-id<a@b>': '' } } }),
      email({
        headers: { ...base.headers, raw_headers: { 'message-id': '<a@b>', received: 'xy' } },
      }),
      email({
        headers: { ...base.headers, raw_headers: { 'message-id': '<a@b>', received: ['xy'] } },
      }),
      email({
        headers: {
          ...base.headers,
          raw_headers: { 'message-id': '<a@b>', received: ['x', 'y', ''] },
        },
      }),
      email({ headers: { ...base.headers, recipients: ['alice@example.orgbob@example.org'] } }),
      email({ headers: { ...base.headers, recipients: ['bob@example.org', 'alice@example.org'] } }),
      // a number and a string that print alike; a lone surrogate and the U+FFFD UTF-8 would make of it
      email({ attachments: [{ filename: 'a', size: 1 }] }),
      email({ attachments: [{ filename: 'a', size: '1' }] }),
      email({ body_text: '\ud800' }),
      email({ body_text: '\ufffd' }),
      email({ body_text: 'Dear customer', headers: { ...base.headers, subject: 'Verify\ud800' } }),
      email({ body_text: 'Dear customer', headers: { ...base.headers, subject: 'Verify\ufffd' } }),
      email({ attachments: [] }),
      email({ attachments: [{}] }),
      email({ attachments: [null] }),
    ];
    const ids = new Set([emailId(base), ...variants.map((v) => emailId(v))]);
    expect(ids.size).toBe(variants.length + 1);
  });
});
