import type { AnalysisResult, RecommendedAction } from '@trawl/contracts';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOVECOT_HINT, requireComponent } from '../../../../test/support/require-component.ts';
import { createImapRetriever, type ImapRetrieverService, ImapSettings } from '../../src/index.ts';
import { inspector, mail } from '../../src/testing/imap-inspector.ts';
import { dovecotAvailable, startTestDovecot, type TestDovecot } from '../../src/testing/index.ts';

const KEY = 'internal-key-for-tests-0123456789';
const silent = pino({ level: 'silent' });
const headers = { 'x-internal-api-key': KEY };

function result(action: RecommendedAction): AnalysisResult {
  return {
    is_phishing: action !== 'allow',
    threat_level: action === 'allow' ? 'none' : 'high',
    confidence: 0.9,
    summary: action,
    recommended_action: action,
    indicators: [],
  };
}

async function waitFor<T>(
  fn: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
) {
  const until = Date.now() + 30_000;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(!requireComponent('Dovecot', dovecotAvailable(), DOVECOT_HINT))(
  'retriever-imap against Dovecot',
  () => {
    let dovecot: TestDovecot;
    let service: ImapRetrieverService;
    let insp: Awaited<ReturnType<typeof inspector>>;

    const make = () =>
      createImapRetriever(
        ImapSettings.parse({
          host: dovecot.host,
          port: dovecot.port,
          secure: false,
          user: dovecot.user,
          password: dovecot.password,
          address: 'reports@example.test',
        }),
        {
          logger: silent,
          internalApiKey: KEY,
          session: { reconnectInitialMs: 50, reconnectMaxMs: 500 },
        },
      );

    beforeAll(async () => {
      dovecot = await startTestDovecot();
      service = make();
      await service.startAndWait();
      insp = await inspector(dovecot);
    });

    afterAll(async () => {
      await insp?.close();
      await service?.stop();
      await dovecot?.destroy();
    });

    const post = (url: string, payload: unknown, h: Record<string, string> = headers) =>
      service.app.inject({ method: 'POST', url, headers: h, payload: payload as object });

    it('refuses calls without the internal key and bodies that are not the protocol', async () => {
      expect((await post('/internal/fetch', { max_messages: 1 }, {})).statusCode).toBe(401);
      const bad = await post('/internal/fetch', { max_messages: 0 });
      expect(bad.statusCode).toBe(422);
      expect(bad.json().errors[0].path).toBe('/max_messages');
    });

    it('fetches, acks into the processed folder, and applies each verdict', async () => {
      for (let i = 1; i <= 5; i++) await insp.append(mail(i));
      const first = await post('/internal/fetch', { max_messages: 3 });
      expect(first.statusCode).toBe(200);
      const msgs = first.json().messages as { id: string; raw: string }[];
      expect(msgs).toHaveLength(3);
      // the retriever backlog (issue 19): 2 messages still wait in the mailbox after this batch
      expect(first.json().backlog).toBe(2);
      expect(Buffer.from(msgs[0]!.raw, 'base64').toString()).toContain(
        'Message-ID: <imap-test-1@example.test>',
      );
      const all = (await post('/internal/fetch', { max_messages: 50 })).json().messages as {
        id: string;
      }[];
      expect(all).toHaveLength(5);
      // fetching does not mark messages \Seen
      for (const flags of (await insp.contents('INBOX')).values())
        expect(flags.has('\\Seen')).toBe(false);

      // message 5: the verdict comes before the ack
      const early = await post('/internal/verdict', {
        id: all[4]!.id,
        job_id: 'j5',
        result: result('quarantine'),
      });
      expect(early.statusCode).toBe(200);

      const ack = await post('/internal/ack', { ids: all.map((m) => m.id) });
      expect(ack.json()).toMatchObject({ acked: 4 });
      const drained = (await post('/internal/fetch', { max_messages: 50 })).json();
      expect(drained.messages).toHaveLength(0);
      expect(drained.backlog).toBe(0);

      const actions: RecommendedAction[] = ['quarantine', 'flag', 'review', 'allow'];
      for (let i = 0; i < 4; i++) {
        const r = await post('/internal/verdict', {
          id: all[i]!.id,
          job_id: `j${i}`,
          result: result(actions[i]!),
        });
        expect(r.statusCode).toBe(200);
      }
      const processed = await insp.contents('Trawl/Processed');
      const quarantine = await insp.contents('Trawl/Quarantine');
      expect([...quarantine.keys()].sort()).toEqual([
        '<imap-test-1@example.test>',
        '<imap-test-5@example.test>',
      ]);
      expect(quarantine.get('<imap-test-1@example.test>')?.has('$Phishing')).toBe(true);
      expect(processed.get('<imap-test-2@example.test>')?.has('$Phishing')).toBe(true);
      expect(processed.get('<imap-test-3@example.test>')?.has('$TrawlReview')).toBe(true);
      expect(processed.get('<imap-test-4@example.test>')?.has('$TrawlClean')).toBe(true);

      // the same verdict again (a retried callback) is harmless
      const again = await post('/internal/verdict', {
        id: all[0]!.id,
        job_id: 'j0',
        result: result('quarantine'),
      });
      expect(again.statusCode).toBe(200);
      expect((await insp.contents('Trawl/Quarantine')).size).toBe(2);
    });

    it('finds an acked message by its Message-ID after the retriever restarted', async () => {
      await insp.append(mail(20));
      const [m] = (await post('/internal/fetch', { max_messages: 10 })).json().messages as {
        id: string;
      }[];
      await post('/internal/ack', { ids: [m!.id] });
      await service.stop();
      service = make();
      await service.startAndWait();
      const r = await post('/internal/verdict', {
        id: m!.id,
        job_id: 'j20',
        result: result('quarantine'),
      });
      expect(r.statusCode).toBe(200);
      expect((await insp.contents('Trawl/Quarantine')).has('<imap-test-20@example.test>')).toBe(
        true,
      );
      const gone = await post('/internal/verdict', {
        id: '1.99999',
        job_id: 'x',
        result: result('flag'),
      });
      expect(gone.statusCode).toBe(404);
      expect(gone.json().code).toBe('TRAWL_ERR_IMAP_MESSAGE_NOT_FOUND');
    });

    // Regression (issue 15): a message Trawl could not analyse was filed with the processed mail.
    it('holds a message Trawl could not analyse in the hold folder, before or after the ack', async () => {
      await insp.append(mail(40));
      await insp.append(mail(41));
      const msgs = (await post('/internal/fetch', { max_messages: 10 })).json().messages as {
        id: string;
        envelope?: { to?: string[] };
      }[];
      expect(msgs).toHaveLength(2);
      expect(msgs[0]?.envelope).toEqual({ to: ['reports@example.test'] });
      const unanalyzed = (id: string) => ({
        id,
        job_id: 'unanalyzed:0000',
        verdict: 'unanalyzed',
        result: { ...result('review'), is_phishing: false, threat_level: 'medium' },
        error: { code: 'TRAWL_ERR_MAIL_UNPARSEABLE', message: 'more than 500 parts' },
      });
      // 40: the verdict before the ack; 41: after it
      const early = (await post('/internal/verdict', unanalyzed(msgs[0]!.id))).json();
      expect(early.verdict).toBe('unanalyzed');
      expect(early.folder).toMatch(/^Trawl.Unanalyzed$/); // the server's delimiter between levels
      await post('/internal/ack', { ids: msgs.map((m) => m.id) });
      expect((await post('/internal/verdict', unanalyzed(msgs[1]!.id))).statusCode).toBe(200);
      const held = await insp.contents('Trawl/Unanalyzed');
      for (const mid of ['<imap-test-40@example.test>', '<imap-test-41@example.test>']) {
        expect(held.get(mid)?.has('$TrawlUnanalyzed'), mid).toBe(true);
        expect(held.get(mid)?.has('$TrawlReview'), mid).toBe(true);
      }
      const processed = await insp.contents('Trawl/Processed');
      expect(processed.has('<imap-test-40@example.test>')).toBe(false);
      expect(processed.has('<imap-test-41@example.test>')).toBe(false);
      // applied twice (a retried callback): still one copy, still held
      expect((await post('/internal/verdict', unanalyzed(msgs[1]!.id))).statusCode).toBe(200);
      expect((await insp.contents('Trawl/Unanalyzed')).size).toBe(2);
      expect(await service.registry.metrics()).toMatch(
        /trawl_imap_verdicts_total\{action="unanalyzed"\} 3/,
      );
    });

    it('answers 503 while Dovecot is down, then reconnects and carries on', async () => {
      await insp.close();
      await dovecot.stop();
      await waitFor(
        async () => (await post('/internal/fetch', { max_messages: 5 })).statusCode === 503,
        '503',
      );
      expect((await service.app.inject({ url: '/health' })).statusCode).toBe(503);
      await dovecot.start();
      await waitFor(
        async () => (await post('/internal/fetch', { max_messages: 5 })).statusCode === 200,
        'reconnect',
      );
      insp = await inspector(dovecot);
      await insp.append(mail(30));
      const msgs = (await post('/internal/fetch', { max_messages: 5 })).json().messages as {
        id: string;
      }[];
      expect(msgs).toHaveLength(1);
      expect((await post('/internal/ack', { ids: [msgs[0]!.id] })).statusCode).toBe(200);
      expect((await insp.contents('Trawl/Processed')).has('<imap-test-30@example.test>')).toBe(
        true,
      );
      expect(await service.registry.metrics()).toMatch(/trawl_imap_reconnects_total 1/);
    });
  },
);
