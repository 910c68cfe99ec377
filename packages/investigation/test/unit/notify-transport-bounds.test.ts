import { describe, expect, it } from 'vitest';
import { startHostileSmtp } from '../../../../test/support/hostile-smtp.ts';
import { notifyTransport } from '../../src/index.ts';

const MESSAGE = {
  from: 'trawl@example.org',
  to: 'reporter@example.org',
  subject: 'Your report',
  text: 'Thank you.',
  messageId: '<report-x@trawl.invalid>',
  headers: {},
};

/** Issue 28: the reporter notifier's reads of the SMTP relay are bounded in size and time. */
describe('reporter notifications against a hostile SMTP relay', () => {
  it('a relay that trickles its reply is cut off at the reply deadline', async () => {
    const smtp = await startHostileSmtp({ mode: 'trickle', trickleMs: 20 });
    try {
      const t0 = performance.now();
      const send = notifyTransport(`smtp://127.0.0.1:${smtp.port}`, { replyTimeoutMs: 300 });
      await expect(send.sendMail(MESSAGE)).rejects.toThrow();
      expect(performance.now() - t0).toBeLessThan(10_000);
    } finally {
      await smtp.close();
    }
  });

  it('a send is cut off at its deadline whatever the replies (TLS hides them)', async () => {
    const smtp = await startHostileSmtp({ mode: 'trickle', trickleMs: 20 });
    try {
      const t0 = performance.now();
      const send = notifyTransport(`smtp://127.0.0.1:${smtp.port}`, {
        replyTimeoutMs: 60_000,
        deadlineMs: 400,
      });
      await expect(send.sendMail(MESSAGE)).rejects.toThrow(/longer than 400 ms|closed/i);
      expect(performance.now() - t0).toBeLessThan(10_000);
      await expect.poll(() => smtp.cutOff, { timeout: 5000 }).toBeGreaterThan(0);
    } finally {
      await smtp.close();
    }
  });

  it('an endless reply is cut off past 64 KiB', async () => {
    const smtp = await startHostileSmtp({ mode: 'huge' });
    try {
      await expect(
        notifyTransport(`smtp://127.0.0.1:${smtp.port}`).sendMail(MESSAGE),
      ).rejects.toThrow();
      await expect.poll(() => smtp.cutOff, { timeout: 5000 }).toBeGreaterThan(0);
      expect(smtp.bytesWritten).toBeLessThan(16 * 1024 * 1024);
    } finally {
      await smtp.close();
    }
  });
});
