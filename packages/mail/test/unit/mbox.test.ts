import { describe, expect, it } from 'vitest';
import { isMbox, splitMbox } from '../../src/index.ts';

describe('mbox', () => {
  it('splits on From lines and unquotes >From lines (mboxrd)', () => {
    const mbox = [
      'From sender@example.test Mon Nov  2 10:00:00 2026',
      'From: a@example.test',
      'Subject: one',
      '',
      'first body',
      '>From here on, one quote goes',
      '>>From two stay one',
      '',
      'From other@example.test Mon Nov  2 11:00:00 2026',
      'From: b@example.test',
      'Subject: two',
      '',
      'second body',
      '',
    ].join('\n');
    const buf = Buffer.from(mbox);
    expect(isMbox(buf)).toBe(true);
    const { messages, dropped } = splitMbox(buf);
    expect(dropped).toBe(0);
    expect(messages.map((m) => m.toString())).toEqual([
      'From: a@example.test\nSubject: one\n\nfirst body\nFrom here on, one quote goes\n>From two stay one\n',
      'From: b@example.test\nSubject: two\n\nsecond body\n',
    ]);
  });

  it('is not fooled by a plain message', () => {
    expect(isMbox(Buffer.from('From: a@example.test\n\nhi\n'))).toBe(false);
  });
});
