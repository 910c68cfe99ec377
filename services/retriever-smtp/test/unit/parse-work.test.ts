import { parseRawEmail } from '@trawl/mail';
import { afterAll, describe, expect, it } from 'vitest';
import { createParseWork } from '../../src/parse-work/parse-pool.ts';

const LIMITS = {
  maxAttachments: 100,
  maxRecipients: 100,
  maxSubjectChars: 998,
  maxAttachmentBytes: 25 * 1024 * 1024,
};

function message(bodyBytes: number, o: { date?: boolean } = {}): Buffer {
  const line =
    'Please find the minutes of the meeting below, and the link https://example.com/m.\r\n';
  return Buffer.from(
    [
      'From: Alice <alice@example.com>',
      'To: bob@example.org',
      'Subject: Minutes',
      ...(o.date === false ? [] : ['Date: Mon, 2 Nov 2026 09:00:00 +0000']),
      'Message-ID: <m1@example.com>',
      'Content-Type: text/plain; charset=utf-8',
      '',
      line.repeat(Math.ceil(bodyBytes / line.length)),
    ].join('\r\n'),
  );
}

describe('the inline milter parses large messages in a worker (parse-pool.ts)', () => {
  const work = createParseWork({
    workers: 1,
    inlineMaxBytes: 64 * 1024,
    deadlineMs: 30_000,
    maxQueued: 2,
  });
  afterAll(() => work.close());
  const opts = { limits: LIMITS, maxBytes: 8 * 1024 * 1024 };

  it('parses a small message on this thread, with no worker started', async () => {
    const raw = message(1000);
    const email = await work.parse({ bytes: raw, ...opts, envelopeTo: ['bob@example.org'] });
    expect(email.headers.subject).toBe('Minutes');
    expect(work.pool()).toBeUndefined();
  });

  it('parses a large one in the worker into the Email the parser gives on this thread', async () => {
    const raw = message(512 * 1024);
    const inWorker = await work.parse({ bytes: raw, ...opts });
    expect(work.pool()?.stats().started).toBe(1);
    const here = await parseRawEmail(raw, { limits: LIMITS, maxBytes: opts.maxBytes });
    expect(inWorker).toEqual(here);
  });

  it("rejects a large message the parser refuses with the parser's reason", async () => {
    const raw = message(512 * 1024, { date: false });
    await expect(work.parse({ bytes: raw, ...opts })).rejects.toThrow(/Date/);
  });
});
