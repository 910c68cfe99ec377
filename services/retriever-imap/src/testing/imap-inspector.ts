import { ImapFlow } from 'imapflow';
import type { TestDovecot } from './dovecot.ts';

/**
 * A second IMAP connection to a test Dovecot, logged in as its user, and the server's spelling of a
 * folder path written with '/'.
 */
export async function openTestImap(d: TestDovecot) {
  const c = new ImapFlow({
    host: d.host,
    port: d.port,
    secure: false,
    auth: { user: d.user, pass: d.password },
    logger: false,
  });
  c.on('error', () => undefined);
  await c.connect();
  const delimiter = c.namespace?.delimiter || '/';
  return { client: c, path: (p: string) => p.split('/').join(delimiter) };
}

/** A second IMAP client for tests: appends and inspects folders (server delimiter '.'). */
export async function inspector(d: TestDovecot) {
  const { client: c, path } = await openTestImap(d);
  return {
    client: c,
    path,
    async append(raw: string | Buffer, folder = 'INBOX') {
      await c.append(path(folder), raw);
    },
    /** Message-ID → flags of every message in a folder. */
    async contents(folder: string): Promise<Map<string, Set<string>>> {
      const out = new Map<string, Set<string>>();
      const lock = await c.getMailboxLock(path(folder));
      try {
        await c.noop(); // sync the view with mail moved by the other connection
        if (c.mailbox && c.mailbox.exists === 0) return out;
        for await (const m of c.fetch('1:*', { envelope: true, flags: true })) {
          out.set(m.envelope?.messageId ?? `uid:${m.uid}`, m.flags ?? new Set());
        }
      } finally {
        lock.release();
      }
      return out;
    },
    async close() {
      await c.logout().catch(() => c.close());
    },
  };
}

export function mail(n: number, extra = ''): string {
  return [
    'From: Sender <sender@example.test>',
    'To: user@example.org',
    `Subject: Test ${n}`,
    `Message-ID: <imap-test-${n}@example.test>`,
    'Date: Wed, 01 May 2024 10:00:00 +0000',
    '',
    `Hello ${n}. ${extra}`,
    '',
  ].join('\r\n');
}
