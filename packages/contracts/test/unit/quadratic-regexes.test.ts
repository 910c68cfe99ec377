/**
 * Regression test for the quadratic base64 pattern (issue 15, "Quadratic regexes stall the
 * process"): an attachment `content` of many line breaks then `!` took seconds in the Email schema
 * (BASE64_RE), once in the hand-written fast path and once more in zod. Every pattern the Email
 * schema and its fast path apply to a request body is fed long runs of the characters it reads, up
 * to the attachment size limit, and must answer within a budget that linear work meets by far.
 */
import { describe, expect, it } from 'vitest';
import {
  Attachment,
  BASE64_RE,
  DEFAULT_EMAIL_LIMITS,
  Email,
  emailParser,
} from '../../src/index.ts';

const BUDGET_MS = 2000;
const MB = 1024 * 1024;
/**
 * The budget of an input: BUDGET_MS per 2 MB, growing with its length as linear work does (the
 * size limit's 35 M characters took 1–2.4 s of linear work on the project's loaded 2-core CI
 * machine; quadratic work on 2 MB already takes hours).
 */
const budgetOf = (s: string) => BUDGET_MS * Math.max(1, s.length / (2 * MB));

function run(unit: string, chars: number): string {
  return unit.repeat(Math.max(1, Math.floor(chars / unit.length)));
}

function timed(work: () => unknown): number {
  const start = performance.now();
  work();
  return performance.now() - start;
}

const headers = {
  subject: 'hostile',
  sender: 'a@example.com',
  recipients: ['b@example.com'],
  date: '2024-05-01T09:30:00Z',
};

function withContent(content: string): unknown {
  return { headers, body_text: 'x', attachments: [{ filename: 'a.bin', content }] };
}

function withHeaders(h: Record<string, unknown>): unknown {
  return { headers: { ...headers, ...h }, body_text: 'x' };
}

/** The base64 text at the attachment limit: what decodes to maxAttachmentBytes. */
const AT_LIMIT = Math.ceil((DEFAULT_EMAIL_LIMITS.maxAttachmentBytes * 4) / 3);

const contents: [string, () => string][] = [
  ['2 MB of CRLF then !', () => `${run('\r\n', 2 * MB)}!`],
  ['2 MB of LF then !', () => `${run('\n', 2 * MB)}!`],
  ['2 MB of CR then =!', () => `${run('\r', 2 * MB)}=!`],
  ['2 MB of letters then !', () => `${run('A', 2 * MB)}!`],
  ['==, 2 MB of CRLF then !', () => `QUJD==${run('\r\n', 2 * MB)}!`],
  ['2 MB of =', () => run('=', 2 * MB)],
  ['2 MB of A=', () => run('A=', 2 * MB)],
  ['the size limit of CRLF then !', () => `${run('\r\n', AT_LIMIT)}!`],
  ['the size limit of letters then !', () => `${run('QUJD', AT_LIMIT)}!`],
];

describe('Email: attachment content (BASE64_RE)', () => {
  for (const [name, make] of contents) {
    it(`${name}: BASE64_RE, the fast path and zod answer within ${BUDGET_MS} ms per 2 MB`, () => {
      const content = make();
      const budget = budgetOf(content);
      expect(timed(() => BASE64_RE.test(content))).toBeLessThan(budget);
      expect(timed(() => emailParser().safeParse(withContent(content)))).toBeLessThan(budget);
      expect(timed(() => Email.safeParse(withContent(content)))).toBeLessThan(budget);
      expect(timed(() => Attachment.safeParse({ filename: 'a', content }))).toBeLessThan(budget);
    });
  }

  it('accepts and refuses base64 as before', () => {
    for (const ok of ['', 'QUJD', 'QUJD\r\nQUI=', 'QQ==\r\n', 'QUJD\nQUJD\n', '\r\n']) {
      expect(BASE64_RE.test(ok)).toBe(true);
      expect(emailParser().safeParse(withContent(ok)).success).toBe(true);
    }
    for (const bad of ['QUJD!', 'QQ===', 'QQ==QQ', 'QQ==\r\nQ', ' QUJD', '\r\n!']) {
      expect(BASE64_RE.test(bad)).toBe(false);
      const r = emailParser().safeParse(withContent(bad));
      expect(r.success).toBe(false);
      expect(r.error?.issues[0]?.message).toBe('must be base64');
    }
  });
});

describe('Email: addresses and timestamps (zod patterns the fast path shares)', () => {
  const values: [string, string][] = [
    ['1 MB of letters', run('a', MB)],
    ['1 MB of a. then @', `${run('a.', MB)}@`],
    ['a@ then 1 MB of a.', `a@${run('a.', MB)}`],
    ['a@ then 1 MB of a- then !', `a@${run('a-', MB)}!`],
    ['1 MB of @', run('@', MB)],
    ['1 MB of dots', run('.', MB)],
    ['1 MB of spaces', run(' ', MB)],
  ];
  for (const [name, v] of values) {
    it(`sender, recipient and date of ${name} answer under ${BUDGET_MS} ms`, () => {
      for (const h of [{ sender: v }, { recipients: [v] }, { date: v }]) {
        expect(timed(() => emailParser().safeParse(withHeaders(h)))).toBeLessThan(BUDGET_MS);
        expect(timed(() => Email.safeParse(withHeaders(h)))).toBeLessThan(BUDGET_MS);
      }
    });
  }
});
