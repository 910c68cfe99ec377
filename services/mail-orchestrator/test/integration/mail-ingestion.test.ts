import type { RecommendedAction } from '@trawl/contracts';
import { dovecotAvailable } from '@trawl/retriever-imap/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DOVECOT_HINT,
  requireComponent,
  sharedCorpus,
} from '../../../../test/support/require-component.ts';
import { buildMailOrchestrator, type MailOrchestrator } from '../../src/index.ts';
import {
  type CorpusMessage,
  corpusSample,
  KEY,
  mailboxInspector,
  type Stack,
  silent,
  startStack,
  waitFor,
} from './stack.ts';

const corpus = sharedCorpus() === null ? null : corpusSample(60);
const dovecot = requireComponent('Dovecot', dovecotAvailable(), DOVECOT_HINT);
const VERDICT_KEYWORDS = ['$Phishing', '$TrawlReview', '$TrawlClean', '$TrawlUnanalyzed'];

/** Where each verdict puts a message, and the keyword it carries (a failed job: held). */
function expectedPlace(
  action: RecommendedAction,
  failed = false,
): { folder: string; keyword: string } {
  if (failed) return { folder: 'Trawl/Unanalyzed', keyword: '$TrawlUnanalyzed' };
  switch (action) {
    case 'quarantine':
      return { folder: 'Trawl/Quarantine', keyword: '$Phishing' };
    case 'flag':
      return { folder: 'Trawl/Processed', keyword: '$Phishing' };
    case 'review':
      return { folder: 'Trawl/Processed', keyword: '$TrawlReview' };
    default:
      return { folder: 'Trawl/Processed', keyword: '$TrawlClean' };
  }
}

describe.skipIf(!dovecot || !corpus)(
  'mail ingestion end to end (Dovecot, PostgreSQL, Redis, RabbitMQ)',
  () => {
    let stack: Stack;
    let insp: Awaited<ReturnType<typeof mailboxInspector>>;
    const running: MailOrchestrator[] = [];

    function mailOrchestrator(instanceId: string): MailOrchestrator {
      const m = buildMailOrchestrator({
        retrievers: { mailbox: { url: stack.retrieverUrl, priority: 0, enabled: true } },
        gateway: { baseUrl: stack.gatewayUrl },
        internalApiKey: KEY,
        broker: stack.broker,
        topology: stack.topology,
        cache: stack.cache,
        logger: silent,
        options: {
          instanceId,
          pollIntervalMs: 100,
          batchSize: 4,
          concurrency: 2,
          pendingStaleMs: 2000,
          retrieverBackoff: { initialMs: 100, maxMs: 1000 },
          verdictBackoff: { initialMs: 100, maxMs: 1000 },
          verdictAttempts: 10,
        },
      });
      running.push(m);
      return m;
    }

    beforeAll(async () => {
      stack = await startStack();
      insp = await mailboxInspector(stack.dovecot);
    });

    afterAll(async () => {
      for (const m of running) await m.stop(0).catch(() => undefined);
      await insp?.close();
      await stack?.close();
    });

    /** Message-ID → {folder, flags} over the three folders. */
    async function placement(): Promise<Map<string, { folder: string; flags: Set<string> }>> {
      const out = new Map<string, { folder: string; flags: Set<string> }>();
      for (const folder of ['INBOX', 'Trawl/Processed', 'Trawl/Quarantine', 'Trawl/Unanalyzed']) {
        for (const [mid, flags] of await insp.contents(folder)) out.set(mid, { folder, flags });
      }
      return out;
    }

    /** True once every message left the inbox and carries its verdict's keyword. */
    let lastState = '';
    async function allSettled(msgs: CorpusMessage[]): Promise<boolean> {
      const p = await placement();
      const states = msgs.map((m) => {
        const at = p.get(m.messageId);
        if (!at) return 'missing';
        if (at.folder === 'INBOX') return 'inbox';
        return VERDICT_KEYWORDS.some((k) => at.flags.has(k)) ? 'done' : 'acked';
      });
      const counts: Record<string, number> = {};
      for (const st of states) counts[st] = (counts[st] ?? 0) + 1;
      const jobs = await stack.store.jobs.countByStatus();
      lastState = `${JSON.stringify(counts)} jobs ${JSON.stringify(jobs)}`;
      return states.every((st) => st === 'done');
    }

    /**
     * Each message has exactly one job in the store (found by its Message-ID in the stored Email),
     * finished, and the message sits where its verdict says. The dedup record is not used: after
     * a crash the verdict (the job carries its origin) can file a message before the restarted
     * orchestrator settles the crashed one's claim, which is harmless and eventually consistent.
     */
    async function checkAnalysedOnce(msgs: CorpusMessage[], jobsBefore: number) {
      const jobIds = new Set<string>();
      const p = await placement();
      for (const m of msgs) {
        const rows = (
          await stack.store.sql.query<{ job_id: string }>(
            `SELECT job_id FROM jobs
              WHERE position($1 in (email::jsonb)->'headers'->'raw_headers'->>'message-id') > 0`,
            [m.messageId],
          )
        ).rows;
        expect(rows.length, `${m.file}: jobs for this message`).toBe(1);
        const jobId = rows[0]!.job_id;
        jobIds.add(jobId);
        const job = await stack.store.jobs.get(jobId);
        expect(job?.status, m.file).toMatch(/completed|failed/);
        const action: RecommendedAction = job?.result?.recommended_action ?? 'review';
        const want = expectedPlace(action, job?.status === 'failed');
        const at = p.get(m.messageId);
        expect(at?.folder, `${m.file} (${action})`).toBe(want.folder);
        expect(at?.flags.has(want.keyword), `${m.file} (${action})`).toBe(true);
      }
      // one job per message, and no other job: nothing was analysed twice
      expect(jobIds.size).toBe(msgs.length);
      expect((await stack.jobs()).length - jobsBefore).toBe(msgs.length);
    }

    it('analyses 30 corpus messages once each and files each where its verdict says', {
      timeout: 300_000,
    }, async () => {
      const msgs = (corpus ?? []).slice(0, 30);
      const before = (await stack.jobs()).length;
      for (const m of msgs) await insp.append(m.raw);
      const mo = mailOrchestrator('a');
      await mo.start();
      await waitFor(() => allSettled(msgs), '30 messages analysed and filed').catch((e) => {
        throw new Error(`${e.message}: ${lastState}`);
      });
      await checkAnalysedOnce(msgs, before);
      const metrics = await mo.registry.metrics();
      // Each message is counted submitted once; one whose submission was recorded while the dedup
      // store failed (a loaded machine's cache timeout: counted as a dedup failure, then the job
      // found again on the next pass) may miss its count, never gain a second one.
      const count = (re: RegExp) => Number(re.exec(metrics)?.[1] ?? 0);
      const submitted = count(/trawl_mail_submitted_total\{retriever="mailbox"\} (\d+)/);
      const dedupFailures = count(
        /trawl_mail_failures_total\{retriever="mailbox",stage="dedup"\} (\d+)/,
      );
      expect(submitted).toBeLessThanOrEqual(30);
      expect(submitted + dedupFailures).toBeGreaterThanOrEqual(30);
      const actions = new Set((await stack.jobs()).map((j) => j.result?.recommended_action));
      expect(actions.size).toBeGreaterThan(1); // the sample yields more than one kind of verdict
      await mo.stop(5000);
    });

    it('loses nothing and analyses nothing twice when the mail orchestrator is killed mid-batch', {
      timeout: 300_000,
    }, async () => {
      const msgs = (corpus ?? []).slice(30, 50);
      const before = (await stack.jobs()).length;
      for (const m of msgs) await insp.append(m.raw);
      const first = mailOrchestrator('b1');
      await first.start();
      await waitFor(
        async () => (await stack.jobs()).length - before >= 6,
        'a part of the batch submitted',
      );
      await first.stop(0); // killed: in-flight submissions, acks and callbacks are abandoned
      const submittedBefore = (await stack.jobs()).length - before;
      expect(submittedBefore).toBeLessThan(msgs.length);
      const second = mailOrchestrator('b2');
      await second.start();
      await waitFor(() => allSettled(msgs), 'the rest analysed after the restart').catch((e) => {
        throw new Error(`${e.message}: ${lastState}`);
      });
      await checkAnalysedOnce(msgs, before);
      await second.stop(5000);
    });

    it('carries on after the IMAP server restarts', async () => {
      const msgs = (corpus ?? []).slice(50, 60);
      const before = (await stack.jobs()).length;
      const mo = mailOrchestrator('c');
      await mo.start();
      for (const m of msgs.slice(0, 5)) await insp.append(m.raw);
      await waitFor(() => allSettled(msgs.slice(0, 5)), 'first half filed');
      await insp.close();
      await stack.dovecot.stop();
      await waitFor(
        async () => (await stack.retriever.app.inject({ url: '/health' })).statusCode === 503,
        'the retriever to notice',
      );
      await stack.dovecot.start();
      await waitFor(
        async () => (await stack.retriever.app.inject({ url: '/health' })).statusCode === 200,
        'the retriever to reconnect',
      );
      insp = await mailboxInspector(stack.dovecot);
      for (const m of msgs.slice(5)) await insp.append(m.raw);
      await waitFor(() => allSettled(msgs), 'second half filed after the restart');
      await checkAnalysedOnce(msgs, before);
      await mo.stop(5000);
    });
  },
);
