import type { Job } from '@trawl/contracts';
import type { Assembled, Delivery } from '@trawl/platform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningRetrieverSmtp } from '../../src/index.ts';
import {
  type SmtpSink,
  startInlineMilter,
  startSmtpSink,
  startTestPostfix,
  startTrawlStack,
  type TestPostfix,
  type TrawlStack,
} from '../../src/testing/index.ts';
import {
  ALICE,
  arrivals,
  client,
  HAM,
  JOB_UUID,
  PHISH,
  PHISHER,
  ports,
  postfixHere,
  type SendError,
  sendTo,
  stopAll,
} from '../helpers/harness.ts';

const runHere = postfixHere();

const SMTP = {
  // never called: the milter analyses in its own process
  mail_orchestrator_url: 'http://127.0.0.1:9',
  deadline_ms: 20_000,
  policy: 'none=deliver,low=prefix,medium=reject,high=reject,critical=reject',
  unanalyzed_action: 'reject' as const,
};
const subjectOf = (id: string) => `Minutes of the planning meeting ${id}`;

type Milter = RunningRetrieverSmtp & Assembled;

/**
 * The milter analysing inline (TRAWL_MILTER_ANALYSIS=inline, ADR 013 section 5) with a real
 * Postfix, PostgreSQL and RabbitMQ: the verdict is Trawl's analysis in the milter's process, the
 * job is recorded after the answer, once, with its event; a full record queue and a stopped milter
 * answer 4xx, and what was queued is written at close.
 */
describe.skipIf(!runHere)('milter analysing inline: verdict first, record after', () => {
  let trawl: TrawlStack;
  let sink: SmtpSink;
  let pf: TestPostfix;
  let milter: Milter;
  let milterPort: number;
  let httpPort: number;
  const events: string[] = [];
  let eventQueue: string;

  beforeAll(async () => {
    const [mailPort, http, port] = await ports(3);
    milterPort = port;
    httpPort = http;
    sink = await startSmtpSink();
    trawl = await startTrawlStack({ mailPort, filters: {} });
    const { broker, topology } = trawl.analysisPorts;
    // what the console, the notifier and the retrievers' verdict queue receive
    eventQueue = `${topology.exchanges.results}.inline-test`;
    await broker.assertQueue(eventQueue, { type: 'classic', durable: false });
    for (const key of [topology.routingKeys.analysisCompleted, topology.routingKeys.analysisFailed])
      await broker.bindQueue(eventQueue, topology.exchanges.results, key);
    await broker.consume(
      eventQueue,
      async (d: Delivery) => {
        events.push((d.body as { job_id: string }).job_id);
        await d.ack();
      },
      { prefetch: 64 },
    );
    pf = await startTestPostfix({ mode: 'milter', milterPort, sinkPort: sink.port });
    milter = await startInlineMilter({
      smtp: SMTP,
      milterPort,
      httpPort,
      analysis: trawl.analysisPorts,
    });
  }, 120_000);

  afterAll(async () => {
    await trawl?.analysisPorts.broker.deleteQueue(eventQueue).catch(() => undefined);
    await stopAll(milter, pf, trawl, sink);
  });

  const { arrivedWith } = arrivals(() => sink);
  /** Waits until each of HAM(id) arrived. */
  const allArrive = (ids: string[], timeout: number) =>
    expect
      .poll(() => ids.filter((id) => arrivedWith(`ham-${id}@colleagues.example`).length).length, {
        timeout,
        interval: 100,
      })
      .toBe(ids.length);
  /** The X-Trawl-Job of the copy of HAM(id) that arrived. */
  const copiesJob = (id: string) =>
    arrivedWith(`ham-${id}@colleagues.example`)[0]?.header('x-trawl-job') ?? '';

  /** The jobs whose subject is the one HAM(id) has. */
  const jobsOf = (all: Job[], id: string) => all.filter((j) => j.subject === subjectOf(id));

  it('answers from its own analysis and records every message once, completed, with its event', async () => {
    const N = 40;
    const before = (await trawl.jobs()).length;
    const t = client(pf.port, true);
    const ids = Array.from({ length: N }, (_, i) => `inline-bulk-${i}`);
    const phish = ['inline-phish-0', 'inline-phish-1'];
    const refused = await Promise.all([
      ...ids.map((id) => t.sendMail({ envelope: ALICE, raw: HAM(id) }).then(() => undefined)),
      ...phish.map((id) =>
        t.sendMail({ envelope: PHISHER, raw: PHISH(id) }).then(
          () => 'accepted',
          (e: SendError) => e.responseCode,
        ),
      ),
    ]);
    t.close();
    // refused at the end of DATA by Trawl's verdict, never queued
    expect(refused.slice(N)).toEqual([550, 550]);
    await allArrive(ids, 60_000);
    // recorded after the answer: one job per message, completed, and its analysis.completed event
    await expect
      .poll(async () => (await trawl.jobs()).length - before, { timeout: 30_000, interval: 100 })
      .toBe(N + phish.length);
    const all = await trawl.jobs();
    for (const id of ids) {
      const copies = arrivedWith(`ham-${id}@colleagues.example`);
      expect(copies, id).toHaveLength(1);
      const jobId = copies[0]?.header('x-trawl-job') ?? '';
      expect(jobId, id).toMatch(JOB_UUID);
      const jobs = jobsOf(all, id);
      expect(
        jobs.map((j) => [j.job_id, j.status]),
        id,
      ).toEqual([[jobId, 'completed']]);
    }
    const stored = await trawl.job(copiesJob(ids[0] as string));
    expect(stored?.result?.is_phishing).toBe(false);
    expect(stored?.workflow).toBeTruthy();
    await expect.poll(() => events.length, { timeout: 20_000, interval: 100 }).toBe(N + 2);
    expect(new Set(events).size).toBe(N + 2);
  }, 120_000);

  it('answers 451 while its record queue is full, and records nothing lost or twice', async () => {
    const [port, http] = await ports(2);
    const bounded = await startTestPostfix({
      mode: 'milter',
      milterPort: port,
      sinkPort: sink.port,
    });
    // the database stalls: the first record waits in the queue (bound 1)
    let open: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      open = r;
    });
    const { store } = trawl.analysisPorts;
    const stalled = {
      ...store,
      jobs: {
        ...store.jobs,
        createFinished: async (...a: Parameters<typeof store.jobs.createFinished>) => {
          await gate;
          return store.jobs.createFinished(...a);
        },
      },
    };
    const small = await startInlineMilter({
      smtp: SMTP,
      milterPort: port,
      httpPort: http,
      analysis: { ...trawl.analysisPorts, store: stalled },
      recordQueue: 1,
    });
    try {
      expect(await sendTo(bounded, ALICE, HAM('inline-full-a'))).toBeUndefined();
      const full = await sendTo(bounded, ALICE, HAM('inline-full-b'));
      expect(full?.responseCode).toBe(451);
      expect(full?.response).toContain('4.7.1 Message not analysed yet');
      expect(arrivedWith('ham-inline-full-b@colleagues.example')).toHaveLength(0);
      open();
      await expect
        .poll(async () => jobsOf(await trawl.jobs(), 'inline-full-a').length, { timeout: 20_000 })
        .toBe(1);
      // the client tries again: now taken, and recorded once
      expect(await sendTo(bounded, ALICE, HAM('inline-full-b'))).toBeUndefined();
      await expect
        .poll(async () => jobsOf(await trawl.jobs(), 'inline-full-b').length, { timeout: 20_000 })
        .toBe(1);
      expect(jobsOf(await trawl.jobs(), 'inline-full-a')).toHaveLength(1);
    } finally {
      open();
      await stopAll(small, bounded);
    }
  }, 60_000);

  it('stopped mid-run: 4xx, nothing lost or recorded twice, the queue written at close', async () => {
    const N = 24;
    const ids = Array.from({ length: N }, (_, i) => `inline-stop-${i}`);
    const accepted: string[] = [];
    let tempfailed = 0;
    let next = 0;
    let stopped: Promise<void> | undefined;
    // four senders that retry a 4xx as an MTA does; the milter stops after the 8th acceptance
    const sender = async () => {
      while (next < N) {
        const id = ids[next++] as string;
        for (let attempt = 0; attempt < 100; attempt++) {
          const err = await sendTo(pf, ALICE, HAM(id));
          if (!err) break;
          expect(err.responseCode, id).toBeLessThan(500);
          tempfailed++;
          await new Promise((r) => setTimeout(r, 200));
        }
        accepted.push(id);
        if (accepted.length === 8 && !stopped) {
          stopped = milter.close().then(async () => {
            // what was accepted until now is recorded by the time close() resolved
            const all = await trawl.jobs();
            const lost = accepted.filter((a) => jobsOf(all, a).length !== 1);
            expect(lost).toEqual([]);
            // down a moment: Postfix answers its milter_default_action (tempfail)
            await new Promise((r) => setTimeout(r, 500));
            milter = await startInlineMilter({
              smtp: SMTP,
              milterPort,
              httpPort,
              analysis: trawl.analysisPorts,
            });
          });
        }
      }
    };
    await Promise.all([sender(), sender(), sender(), sender()]);
    await stopped;
    expect(tempfailed).toBeGreaterThan(0);
    await allArrive(ids, 30_000);
    await expect
      .poll(
        async () => {
          const all = await trawl.jobs();
          return ids.filter((id) => jobsOf(all, id).length === 1).length;
        },
        { timeout: 20_000, interval: 100 },
      )
      .toBe(N);
    const all = await trawl.jobs();
    for (const id of ids) {
      expect(arrivedWith(`ham-${id}@colleagues.example`), id).toHaveLength(1);
      expect(jobsOf(all, id), id).toHaveLength(1);
    }
  }, 120_000);
});
