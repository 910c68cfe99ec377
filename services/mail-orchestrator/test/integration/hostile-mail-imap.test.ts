import { dovecotAvailable } from '@trawl/retriever-imap/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOVECOT_HINT, requireComponent } from '../../../../test/support/require-component.ts';
import { buildMailOrchestrator, type MailOrchestrator } from '../../src/index.ts';
import {
  ENVELOPE_TO,
  KEY,
  mailboxInspector,
  type Stack,
  silent,
  startStack,
  waitFor,
} from './stack.ts';

function message(
  name: string,
  o: { mid?: string; to?: boolean; from?: boolean; body?: string; extra?: string[] } = {},
) {
  return [
    ...(o.from === false ? [] : ['From: Sender <sender@example.test>']),
    ...(o.to === false ? [] : ['To: user@example.org']),
    `Subject: hostile ${name}`,
    `Message-ID: <${o.mid ?? `hostile-${name}`}@example.test>`,
    'Date: Wed, 01 May 2024 10:00:00 +0000',
    ...(o.extra ?? []),
    '',
    o.body ?? `Body of ${name}.`,
    '',
  ].join('\r\n');
}

const manyParts = message('parts', {
  extra: ['MIME-Version: 1.0', 'Content-Type: multipart/mixed; boundary="b"'],
  body: [
    ...Array.from({ length: 501 }, (_, i) => `--b\r\nContent-Type: text/plain\r\n\r\npart ${i}`),
    '--b--',
  ].join('\r\n'),
});

/**
 * Hostile mail through the whole path (Dovecot, retriever-imap, mail orchestrator, gateway,
 * analysis on PostgreSQL, Redis, RabbitMQ): nothing the sender controls makes a message pass
 * without a verdict, and a reused Message-ID does not hide a message.
 */
describe.skipIf(!requireComponent('Dovecot', dovecotAvailable(), DOVECOT_HINT))(
  'hostile mail end to end (Dovecot)',
  () => {
    let stack: Stack;
    let insp: Awaited<ReturnType<typeof mailboxInspector>>;
    let mo: MailOrchestrator | undefined;

    beforeAll(async () => {
      stack = await startStack();
      insp = await mailboxInspector(stack.dovecot);
      mo = buildMailOrchestrator({
        retrievers: { mailbox: { url: stack.retrieverUrl, priority: 0, enabled: true } },
        gateway: { baseUrl: stack.gatewayUrl },
        internalApiKey: KEY,
        broker: stack.broker,
        topology: stack.topology,
        cache: stack.cache,
        logger: silent,
        options: {
          pollIntervalMs: 100,
          retrieverBackoff: { initialMs: 100, maxMs: 1000 },
          verdictBackoff: { initialMs: 100, maxMs: 1000 },
          verdictAttempts: 10,
        },
      });
    }, 120_000);

    afterAll(async () => {
      await mo?.stop(0).catch(() => undefined);
      await insp?.close();
      await stack?.close();
    });

    /** Folder (paths with '/') of each Message-ID, with its flags. */
    async function placement(): Promise<Map<string, { folder: string; flags: Set<string> }>> {
      const out = new Map<string, { folder: string; flags: Set<string> }>();
      for (const folder of ['INBOX', 'Trawl/Processed', 'Trawl/Quarantine', 'Trawl/Unanalyzed']) {
        for (const [mid, flags] of await insp.contents(folder)) out.set(mid, { folder, flags });
      }
      return out;
    }

    it('holds refused mail in the hold folder, analyses a Bcc copy and both messages of a shared Message-ID', {
      timeout: 300_000,
    }, async () => {
      const refused = {
        'hostile-parts@example.test': manyParts,
        'hostile-no-sender@example.test': message('no-sender', { from: false }),
      };
      const analysed = {
        // no recipient in the headers: the mailbox's address stands in (envelope)
        'hostile-bcc@example.test': message('bcc', { to: false }),
      };
      const benign = message('benign', { mid: 'shared-mid', body: 'Lunch at noon on Friday?' });
      const phish = message('phish', {
        mid: 'shared-mid',
        body: 'Your mailbox is full. Sign in at http://mailbox-quota.example.bad/login now.',
      });
      for (const raw of [...Object.values(refused), ...Object.values(analysed), benign, phish]) {
        await insp.append(Buffer.from(raw));
      }
      await mo?.start();

      await waitFor(async () => {
        const p = await placement();
        return Object.keys(refused).every((mid) => p.get(mid)?.folder === 'Trawl/Unanalyzed');
      }, 'refused messages held');
      const p = await placement();
      for (const mid of Object.keys(refused)) {
        expect(p.get(mid)?.flags.has('$TrawlUnanalyzed'), mid).toBe(true);
      }

      // the Bcc copy and both messages with the shared Message-ID are analysed
      const jobsOf = async (mid: string) =>
        (
          await stack.store.sql.query<{ status: string; to: string }>(
            `SELECT status, (email::jsonb)->'headers'->'recipients'->>0 AS to FROM jobs
            WHERE position($1 in (email::jsonb)->'headers'->'raw_headers'->>'message-id') > 0`,
            [mid],
          )
        ).rows;
      await waitFor(
        async () =>
          (await jobsOf('shared-mid@example.test')).length === 2 &&
          (await jobsOf('hostile-bcc@example.test')).length === 1,
        'jobs for the Bcc copy and both shared-Message-ID messages',
      );
      expect((await jobsOf('hostile-bcc@example.test'))[0]?.to).toBe(ENVELOPE_TO);
      for (const mid of Object.keys(refused)) expect(await jobsOf(mid), mid).toHaveLength(0);
    });
  },
);
