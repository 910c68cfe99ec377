import { BadInputError, Email } from '@trawl/contracts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  hostileBytes,
  hostileMessage,
  hostileText,
} from '../../../../test/support/hostile-arbitraries.ts';
import {
  extractReportedMail,
  MailUnparseableError,
  outlookMsgToEml,
  parseRawEmail,
  splitMbox,
} from '../../src/index.ts';
import { buildMsg } from '../cfb-writer.ts';

/**
 * Property tests of every decoder of outside bytes in @trawl/mail (issue 28): generated hostile
 * input (NUL, bare CR, overlong lines, invalid UTF-8 among it) never makes a decoder throw anything
 * but its own refusal, and what it produces is bounded by what it was given. numRuns keep each
 * property to a few seconds.
 */

/** Characters of every string in a value (how big a decoded Email is, JSON escaping aside). */
function textSize(v: unknown): number {
  if (typeof v === 'string') return v.length;
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + textSize(x), 0);
  if (v && typeof v === 'object') {
    return Object.entries(v).reduce((n, [k, x]) => n + k.length + textSize(x), 0);
  }
  return 0;
}

/** A valid Email no bigger than its bytes allow, or a BadInputError: nothing else. */
async function parsedOrRefused(raw: Buffer): Promise<void> {
  let email: Email;
  try {
    email = await parseRawEmail(raw, { receivedAt: new Date('2026-11-02T10:00:00Z') });
  } catch (err) {
    expect(err).toBeInstanceOf(BadInputError);
    return;
  }
  expect(Email.safeParse(email).success).toBe(true);
  // base64 re-encoding of attachments is the largest growth (4/3); the rest is a bounded overhead
  expect(textSize(email)).toBeLessThanOrEqual(2 * raw.length + 16 * 1024);
}

describe('fuzz: @trawl/mail decoders', () => {
  it('parseRawEmail: a valid, bounded Email or a BadInputError', async () => {
    await fc.assert(fc.asyncProperty(hostileMessage, parsedOrRefused), { numRuns: 150 });
  });

  it('parseRawEmail: arbitrary bytes, headers or not', async () => {
    await fc.assert(fc.asyncProperty(hostileBytes(60), parsedOrRefused), { numRuns: 150 });
  });

  it('outlookMsgToEml: RFC 822 bytes or a MailUnparseableError, for damaged .msg files', () => {
    const good = buildMsg({
      subject: 'Quota',
      fromAddress: 'helpdesk@quota.example',
      to: [{ address: 'ann@corp.example' }],
      text: 'Sign in at http://quota.example/login',
      html: '<p>Sign in</p>',
      attachments: [{ filename: 'a.txt', content: Buffer.from('note') }],
    });
    const damaged = fc
      .array(fc.tuple(fc.nat({ max: good.length - 1 }), fc.integer({ min: 0, max: 255 })), {
        minLength: 1,
        maxLength: 24,
      })
      .chain((flips) =>
        fc.nat({ max: good.length }).map((cut) => {
          const b = Buffer.from(good);
          for (const [at, v] of flips) b[at] = v;
          return b.subarray(0, Math.max(cut, 512));
        }),
      );
    const cfbMagic = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
    const arb = fc.oneof(
      damaged,
      hostileBytes(30),
      hostileBytes(30).map((b) => Buffer.concat([cfbMagic, b])),
    );
    fc.assert(
      fc.property(arb, (buf) => {
        try {
          const eml = outlookMsgToEml(buf);
          // what it writes is built from what it read: bounded by it
          expect(eml.length).toBeLessThanOrEqual(2 * buf.length + 4096);
        } catch (err) {
          expect(err).toBeInstanceOf(MailUnparseableError);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('splitMbox: never throws; the messages are pieces of the input', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(hostileBytes(10), fc.constant(Buffer.from('\nFrom x@y Mon Nov  2\n'))), {
          maxLength: 12,
        }),
        (parts) => {
          const buf = Buffer.concat([Buffer.from('From a@b Mon Nov  2 10:00:00 2026\n'), ...parts]);
          const { messages } = splitMbox(buf);
          const total = messages.reduce((n, m) => n + m.length, 0);
          expect(total).toBeLessThanOrEqual(buf.length);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('extractReportedMail: a report whose attachment is hostile still yields an Email', async () => {
    await fc.assert(
      fc.asyncProperty(hostileMessage, hostileText(6), async (inner, subject) => {
        const wrapper: Email = {
          headers: {
            subject: `Fwd: ${subject}`.slice(0, 998),
            sender: 'reporter@corp.example',
            recipients: ['phishing@corp.example'],
            date: '2026-11-02T10:00:00.000Z',
          },
          body_text: 'see attached',
          attachments: [
            {
              filename: 'original.eml',
              content_type: 'message/rfc822',
              size: inner.length,
              content: inner.toString('base64'),
            },
          ],
          analysis_context: {},
        };
        const r = await extractReportedMail(wrapper);
        expect(Email.safeParse(r.email).success).toBe(true);
      }),
      { numRuns: 100 },
    );
  });
});
