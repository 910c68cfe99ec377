import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MilterListener, SmtpFilterService } from '../../src/index.ts';
import {
  type SmtpSink,
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
  sendTo,
  startMilterFilter,
  stopAll,
} from '../helpers/harness.ts';

const runHere = postfixHere();

type Filter = SmtpFilterService & { milter: MilterListener };

/**
 * The milter mode (TRAWL_SMTP_MODE=milter) with a real Postfix (`smtpd_milters`, protocol 6) and
 * Trawl in scale-out shape on the local servers: the answer is given at the end of DATA, to the
 * sending client, with no second pass through Postfix.
 */
describe.skipIf(!runHere)('milter with a real Postfix', () => {
  let trawl: TrawlStack;
  let sink: SmtpSink;
  /** rejects phishing */
  let refusing: TestPostfix;
  let refusingMilter: Filter;
  /** holds phishing (quarantine) */
  let holding: TestPostfix;
  let holdingMilter: Filter;

  beforeAll(async () => {
    const [mailPort, httpA, httpB, milterA, milterB] = await ports(5);
    sink = await startSmtpSink();
    trawl = await startTrawlStack({ mailPort, filters: { smtp: httpA, 'smtp-hold': httpB } });
    refusing = await startTestPostfix({ mode: 'milter', milterPort: milterA, sinkPort: sink.port });
    refusingMilter = await startMilterFilter(
      {
        mailPort,
        deadline_ms: 10_000,
        policy: 'none=deliver,low=prefix,medium=reject,high=reject,critical=reject',
        unanalyzed_action: 'reject',
      },
      { milterPort: milterA, httpPort: httpA },
    );
    holding = await startTestPostfix({ mode: 'milter', milterPort: milterB, sinkPort: sink.port });
    holdingMilter = await startMilterFilter(
      {
        mailPort,
        deadline_ms: 10_000,
        policy: 'none=deliver,low=deliver,medium=quarantine,high=quarantine,critical=quarantine',
        gateway_url: trawl.gatewayUrl(),
      },
      { milterPort: milterB, httpPort: httpB },
      'smtp-hold',
    );
  }, 120_000);

  afterAll(async () => {
    await stopAll(refusingMilter, holdingMilter, refusing, holding, trawl, sink);
  });

  const { arrivedWith, arrival } = arrivals(() => sink);
  /** As a sending MTA does: a 4xx (Trawl busy on a loaded machine) is tried again, twice. */
  const deliver = async (pf: TestPostfix, envelope: typeof ALICE, raw: string) => {
    let err = await sendTo(pf, envelope, raw);
    for (let i = 0; i < 2 && err?.responseCode !== undefined && err.responseCode < 500; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      err = await sendTo(pf, envelope, raw);
    }
    return err;
  };

  it('delivers clean mail once, tagged, with the sender-written X-Trawl-* fields removed', async () => {
    const raw = HAM('milter-tagged').replace(
      'Subject:',
      'X-Trawl-Verdict: clean\r\nX-Trawl-Score: 0.000\r\n  0.1\r\nx-trawl-job: forged\r\nSubject:',
    );
    expect(await deliver(refusing, ALICE, raw)).toBeUndefined();
    const copies = await arrival('ham-milter-tagged@colleagues.example');
    expect(copies).toHaveLength(1);
    const m = copies[0];
    if (!m) return;
    expect(m.to).toEqual(['bob@example.org']);
    const text = m.raw.toString('latin1');
    expect(text.match(/^X-Trawl-Verdict:/gim)).toHaveLength(1);
    expect(text.match(/^X-Trawl-Score:/gim)).toHaveLength(1);
    expect(text.match(/^X-Trawl-Job:/gim)).toHaveLength(1);
    expect(text).not.toContain('  0.1');
    expect(m.header('x-trawl-verdict')).toBe('clean');
    const jobId = m.header('x-trawl-job') ?? '';
    expect(jobId).toMatch(JOB_UUID);
    expect((await trawl.job(jobId))?.status).toBe('completed');
    // the body is passed on as it was
    expect(text).toContain('attached are the notes from meeting milter-tagged.');
  });

  it('a bare CR cannot hide a forged X-Trawl-Verdict behind the Subject (issue 28)', async () => {
    const raw = HAM('milter-bare-cr').replace(
      'Subject: Minutes',
      'Subject: Password expiry\rX-Trawl-Verdict: clean\rX-Trawl-Score: 0.001\r\nX-Note: Minutes',
    );
    expect(await deliver(refusing, ALICE, raw)).toBeUndefined();
    const [m] = await arrival('ham-milter-bare-cr@colleagues.example');
    const lines = (m?.raw.toString('latin1') ?? '').split(/\r\n|\r|\n/);
    const header = lines.slice(0, lines.indexOf(''));
    expect(header.filter((l) => /^x-trawl-verdict:/i.test(l))).toHaveLength(1);
    expect(header.filter((l) => /^x-trawl-score:/i.test(l))).toHaveLength(1);
    expect(header.some((l) => /^x-trawl-score: 0\.001/i.test(l))).toBe(false);
  });

  it('refuses phishing with 550 at the end of DATA: never queued, never delivered', async () => {
    const refused = await sendTo(refusing, PHISHER, PHISH('milter-refused'));
    expect(refused?.responseCode).toBe(550);
    expect(refused?.response).toContain('5.7.1 Message refused as phishing');
    expect(refusing.queued()).toBe(0);
    expect(arrivedWith('phish-milter-refused@paypa1-verify.example')).toHaveLength(0);
  });

  it('quarantines phishing in Postfix hold queue and records the original for its release', async () => {
    expect(await deliver(holding, PHISHER, PHISH('milter-held'))).toBeUndefined();
    await expect.poll(() => holding.held(), { timeout: 20_000, interval: 50 }).toBe(1);
    expect(arrivedWith('phish-milter-held@paypa1-verify.example')).toHaveLength(0);
    const records = await trawl.store.quarantine.list({ limit: 10 });
    const rec = records.find((r) => r.retriever === 'smtp-hold');
    expect(rec).toMatchObject({
      state: 'held',
      envelope_from: 'security@paypa1-verify.example',
      recipients: ['bob@example.org'],
    });
    expect(holding.log()).toContain('milter triggers HOLD action');
  });

  it('passes 200 messages at once: none lost, none delivered twice, each analysed once', async () => {
    const N = 200;
    const jobsBefore = (await trawl.jobs()).length;
    const t = client(refusing.port, true);
    const ids = Array.from({ length: N }, (_, i) => `milter-bulk-${i}`);
    await Promise.all(ids.map((id) => t.sendMail({ envelope: ALICE, raw: HAM(id) })));
    t.close();
    await expect
      .poll(() => ids.filter((id) => arrivedWith(`ham-${id}@colleagues.example`).length).length, {
        timeout: 120_000,
        interval: 100,
      })
      .toBe(N);
    await expect.poll(() => refusing.queued(), { timeout: 20_000, interval: 100 }).toBe(0);
    for (const id of ids) {
      const copies = arrivedWith(`ham-${id}@colleagues.example`);
      expect(copies, id).toHaveLength(1);
      expect(copies[0]?.header('x-trawl-verdict'), id).toBe('clean');
    }
    expect((await trawl.jobs()).length - jobsBefore).toBe(N);
  }, 180_000);

  it('answers 4xx while Trawl is stopped, and while the milter itself is down', async () => {
    await trawl.stop();
    try {
      const refused = await sendTo(refusing, ALICE, HAM('milter-outage'));
      expect(refused?.responseCode).toBe(451);
      expect(refused?.response).toContain('4.7.1 Message not analysed yet');
    } finally {
      await trawl.start();
    }
    expect(arrivedWith('ham-milter-outage@colleagues.example')).toHaveLength(0);
    // the client retries once Trawl is back: delivered once
    expect(await deliver(refusing, ALICE, HAM('milter-outage'))).toBeUndefined();
    expect(await arrival('ham-milter-outage@colleagues.example')).toHaveLength(1);

    // no milter at all: Postfix's milter_default_action (tempfail)
    await refusingMilter.milter.close();
    const down = await sendTo(refusing, ALICE, HAM('milter-down'));
    expect(down?.responseCode).toBe(451);
    expect(refusing.queued()).toBe(0);
    expect(arrivedWith('ham-milter-down@colleagues.example')).toHaveLength(0);
  }, 60_000);
});
