import { describe, expect, it } from 'vitest';
import {
  Attachment,
  createAttachmentSchema,
  createEmailSchema,
  DEFAULT_EMAIL_LIMITS,
  Email,
  parseWith,
} from '../../src/index.ts';

const valid = (): { headers: Record<string, any>; body_text?: string } & Record<string, any> => ({
  headers: {
    subject: 'Quarterly report',
    sender: 'alice@example.com',
    recipients: ['bob@example.org'],
    date: '2024-05-01T09:30:00Z',
  },
  body_text: 'Hello Bob',
});

type Mutate = (e: ReturnType<typeof valid> & Record<string, any>) => void;

function problemsOf(mutate: Mutate) {
  const e = valid() as ReturnType<typeof valid> & Record<string, any>;
  mutate(e);
  const r = parseWith(Email, e);
  return r.ok ? [] : r.problems;
}

describe('Email (spec 2.1)', () => {
  it('accepts a minimal valid email and defaults analysis_context to {}', () => {
    const r = parseWith(Email, valid());
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.value.analysis_context).toEqual({});
  });

  const accepted: [string, Mutate][] = [
    [
      'html body only',
      (e) => {
        delete (e as any).body_text;
        e.body_html = '<p>hi</p>';
      },
    ],
    [
      'both bodies',
      (e) => {
        e.body_html = '<p>hi</p>';
      },
    ],
    [
      'cc and bcc',
      (e) => {
        e.headers.cc = ['c@example.com'];
        e.headers.bcc = ['d@example.com'];
      },
    ],
    [
      'date with offset',
      (e) => {
        e.headers.date = '2024-05-01T09:30:00+02:00';
      },
    ],
    [
      'date with fraction',
      (e) => {
        e.headers.date = '2024-05-01T09:30:00.123Z';
      },
    ],
    [
      'language en',
      (e) => {
        e.language = 'en';
      },
    ],
    [
      'language pt',
      (e) => {
        e.language = 'pt';
      },
    ],
    [
      'raw_headers with repeated header',
      (e) => {
        e.headers.raw_headers = { received: ['a', 'b'], 'x-a': 'b' };
      },
    ],
    [
      'source',
      (e) => {
        e.source = 'imap:inbox';
      },
    ],
    [
      'analysis_context given',
      (e) => {
        e.analysis_context = { triage: { providers: {}, analyzers: {} } };
      },
    ],
    [
      'attachment with content',
      (e) => {
        e.attachments = [{ filename: 'a.txt', content_type: 'text/plain', content: 'aGVsbG8=' }];
      },
    ],
    [
      'empty subject',
      (e) => {
        e.headers.subject = '';
      },
    ],
  ];
  it.each(accepted)('accepts: %s', (_n, m) => {
    expect(problemsOf(m)).toEqual([]);
  });

  const rejected: [string, Mutate, string][] = [
    [
      'missing headers',
      (e) => {
        delete (e as any).headers;
      },
      '/headers',
    ],
    [
      'missing subject',
      (e) => {
        delete (e.headers as any).subject;
      },
      '/headers/subject',
    ],
    [
      'sender not an address',
      (e) => {
        e.headers.sender = 'not-an-address';
      },
      '/headers/sender',
    ],
    [
      'missing sender',
      (e) => {
        delete (e.headers as any).sender;
      },
      '/headers/sender',
    ],
    [
      'no recipients',
      (e) => {
        e.headers.recipients = [];
      },
      '/headers/recipients',
    ],
    [
      'bad recipient',
      (e) => {
        e.headers.recipients = ['ok@example.com', 'nope'];
      },
      '/headers/recipients/1',
    ],
    [
      'bad cc',
      (e) => {
        e.headers.cc = ['x'];
      },
      '/headers/cc/0',
    ],
    [
      'bad bcc',
      (e) => {
        e.headers.bcc = ['x'];
      },
      '/headers/bcc/0',
    ],
    [
      'date not ISO 8601',
      (e) => {
        e.headers.date = 'Wed, 1 May 2024 09:30:00 +0000';
      },
      '/headers/date',
    ],
    [
      'date missing',
      (e) => {
        delete (e.headers as any).date;
      },
      '/headers/date',
    ],
    [
      'no body at all',
      (e) => {
        delete (e as any).body_text;
      },
      '/body_text',
    ],
    [
      'language not ISO 639-1',
      (e) => {
        e.language = 'english';
      },
      '/language',
    ],
    [
      'language unknown code',
      (e) => {
        e.language = 'xx';
      },
      '/language',
    ],
    [
      'subject too long',
      (e) => {
        e.headers.subject = 'x'.repeat(999);
      },
      '/headers/subject',
    ],
    [
      'attachment content not base64',
      (e) => {
        e.attachments = [{ filename: 'a', content_type: 't/p', content: '%%%' }];
      },
      '/attachments/0/content',
    ],
    [
      'attachment negative size',
      (e) => {
        e.attachments = [{ filename: 'a', content_type: 't/p', size: -1 }];
      },
      '/attachments/0/size',
    ],
    [
      'too many attachments',
      (e) => {
        e.attachments = Array.from({ length: 101 }, () => ({ filename: 'a', content_type: 't/p' }));
      },
      '/attachments',
    ],
    [
      'too many recipients',
      (e) => {
        e.headers.recipients = Array.from({ length: 1001 }, (_, i) => `u${i}@example.com`);
      },
      '/headers/recipients',
    ],
  ];
  it.each(rejected)('rejects: %s (at %s)', (_n, m, path) => {
    const problems = problemsOf(m);
    expect(problems.map((p) => p.path)).toContain(path);
    for (const p of problems) expect(p.message.length).toBeGreaterThan(0);
  });

  it('reports every problem at once, each with a JSON pointer', () => {
    const r = parseWith(Email, { headers: { subject: 1, sender: 'x', recipients: [], date: 'y' } });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.problems.map((p) => p.path).sort()).toEqual(
        [
          '/body_text',
          '/headers/date',
          '/headers/recipients',
          '/headers/sender',
          '/headers/subject',
        ].sort(),
      );
    }
  });

  it('counts recipients, cc and bcc together against the limit', () => {
    const schema = createEmailSchema({ ...DEFAULT_EMAIL_LIMITS, maxRecipients: 2 });
    const e = valid() as any;
    e.headers.cc = ['c@example.com'];
    e.headers.bcc = ['d@example.com'];
    const r = parseWith(schema, e);
    expect(r.ok).toBe(false);
  });

  it('computes an attachment size from its base64 content', () => {
    const a = Attachment.parse({
      filename: 'a.txt',
      content_type: 'text/plain',
      content: 'aGVsbG8=',
    });
    expect(a.size).toBe(5);
  });

  it('bounds the decoded size of attachment content exactly, line breaks and padding aside', () => {
    const schema = createAttachmentSchema({ ...DEFAULT_EMAIL_LIMITS, maxAttachmentBytes: 5 });
    const ok = (content: string): boolean => schema.safeParse({ filename: 'a', content }).success;
    expect(ok('aGVsbG8=')).toBe(true); // 5 bytes
    expect(ok('aGVs\r\nbG8=\r\n')).toBe(true); // 5 bytes over 14 characters
    expect(ok('aGVsbG8h')).toBe(false); // 6 bytes
    expect(ok('aGVs\r\nbG8h')).toBe(false);
    expect(ok('aGVsbA==')).toBe(true); // 4 bytes
  });

  it('escapes JSON pointer tokens', () => {
    const r = parseWith(Email, {
      ...valid(),
      headers: { ...valid().headers, raw_headers: { 'a/b': 5 } },
    });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems[0]?.path).toBe('/headers/raw_headers/a~1b');
  });
});
