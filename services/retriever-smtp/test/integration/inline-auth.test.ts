/**
 * Issue 32, "inline as a complete filter", through a real Postfix: the filter reads the client's
 * address and HELO from XFORWARD (after the queue: smtp_send_xforward_command; before the queue:
 * the proxy's own XFORWARD), verifies SPF, DKIM, DMARC and ARC against a DNS server the test starts,
 * drops forged Authentication-Results of its authserv-id, writes its own, and Trawl (gateway,
 * orchestrators on PostgreSQL, Redis, RabbitMQ) reads it as the trusted result. Both filters run
 * in tag-only mode: phishing is delivered, tagged with what the policy would have done.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireComponent } from '../../../../test/support/require-component.ts';
import { createDnsResolver, type SmtpFilterService } from '../../src/index.ts';
import {
  postfixAvailable,
  type SmtpSink,
  smtpClient,
  startSmtpSink,
  startTestDns,
  startTestPostfix,
  startTrawlStack,
  type TestDnsServer,
  type TestPostfix,
  type TrawlStack,
} from '../../src/testing/index.ts';
import { ports, startFilter, stopAll } from '../helpers/harness.ts';
import { message, type SendingDomain, sendingDomain } from '../helpers/signed-mail.ts';

const runHere = requireComponent(
  'Postfix',
  postfixAvailable(),
  'apt-get install postfix (scripts/ci.sh does it, debconf "No configuration"); the tests start it as root',
);

const ID = 'mx.trawl.test';

describe.skipIf(!runHere)('Trawl verifies authentication itself, through a real Postfix', () => {
  let trawl: TrawlStack;
  let sink: SmtpSink;
  let dns: TestDnsServer;
  let sender: SendingDomain;
  let after: TestPostfix;
  let before: TestPostfix;
  let afterFilter: SmtpFilterService;
  let beforeFilter: SmtpFilterService;

  beforeAll(async () => {
    sender = sendingDomain('sender.test');
    dns = await startTestDns({
      ...sender.zone,
      'bank.test': { TXT: [['v=spf1 -all']] },
      '_dmarc.bank.test': { TXT: [['v=DMARC1; p=reject']] },
    });
    const resolver = createDnsResolver({
      servers: [dns.address],
      timeoutMs: 1000,
      tries: 2,
      maxRecords: 50,
      maxTxtChars: 16 * 1024,
    });
    const [mailPort, httpPort, beforeHttp, afterSmtp, beforeSmtp] = await ports(5);
    sink = await startSmtpSink();
    trawl = await startTrawlStack({
      mailPort,
      filters: { smtp: httpPort, 'smtp-before': beforeHttp },
    });
    after = await startTestPostfix({
      mode: 'after-queue',
      filterPort: afterSmtp,
      sinkPort: sink.port,
    });
    before = await startTestPostfix({
      mode: 'before-queue',
      filterPort: beforeSmtp,
      sinkPort: sink.port,
    });
    const common = {
      mailPort,
      deadline_ms: 20_000,
      tag_only: true,
      verify_auth: true,
      authserv_id: ID,
      auth_timeout_ms: 5000,
    };
    afterFilter = await startFilter(
      { ...common, mode: 'after-queue', return_port: after.returnPort },
      { smtpPort: afterSmtp, httpPort },
      'smtp',
      resolver,
    );
    beforeFilter = await startFilter(
      { ...common, mode: 'before-queue', return_port: before.returnPort },
      { smtpPort: beforeSmtp, httpPort: beforeHttp },
      'smtp-before',
      resolver,
    );
  }, 120_000);

  afterAll(async () => {
    await stopAll(afterFilter, beforeFilter, after, before, trawl, sink, dns);
  });

  const arrival = async (messageId: string) => {
    const copies = () => sink.messages.filter((m) => m.header('message-id') === `<${messageId}>`);
    await expect.poll(() => copies().length, { timeout: 60_000, interval: 50 }).toBeGreaterThan(0);
    return copies()[0] as SmtpSink['messages'][number];
  };

  async function send(port: number, from: string, raw: string): Promise<void> {
    const t = smtpClient(port);
    // the HELO name Postfix forwards (XFORWARD HELO)
    (t.options as { name?: string }).name = 'mail.sender.test';
    await t.sendMail({ envelope: { from, to: ['bob@example.org'] }, raw });
    t.close();
  }

  /** The Authentication-Results fields of a delivered message, in order, unfolded. */
  const results = (raw: Buffer) =>
    raw
      .toString('latin1')
      .split(/\r?\n\r?\n/)[0]
      ?.replace(/\r?\n[ \t]/g, ' ')
      .split(/\r?\n/)
      .filter((l) => /^authentication-results:/i.test(l)) ?? [];

  for (const mode of ['after-queue', 'before-queue'] as const) {
    it(`${mode}: a signed message passes, its forged result is gone, Trawl reads Trawl's own`, async () => {
      const id = `signed-${mode}@sender.test`;
      const raw = await sender.sign(
        message({
          from: 'Alice <alice@sender.test>',
          subject: `Minutes (${mode})`,
          id,
          extra: [`Authentication-Results: ${ID}; dkim=fail; spf=fail; dmarc=fail`],
        }),
      );
      await send(mode === 'after-queue' ? after.port : before.port, 'alice@sender.test', raw);
      const m = await arrival(id);
      const ar = results(m.raw);
      const ours = ar.filter((l) => l.toLowerCase().includes(ID));
      expect(ours).toHaveLength(1);
      expect(ours[0]).toMatch(/dkim=pass header\.i=@sender\.test/);
      expect(ours[0]).toMatch(
        /spf=pass .*client-ip|spf=pass \(mx\.trawl\.test: domain of alice@sender\.test designates 127\.0\.0\.1/,
      );
      expect(ours[0]).toMatch(/dmarc=pass/);
      expect(ours[0]).not.toMatch(/dmarc=fail/);
      const job = await trawl.job(m.header('x-trawl-job') ?? '');
      expect(job?.result?.evidence?.auth).toMatchObject({
        spf: 'pass',
        dkim: 'pass',
        dmarc: 'pass',
        authserv_id: ID,
      });
    });
  }

  it('a forged bank sender fails DMARC in the header and in the evidence; tag-only delivers it', async () => {
    const id = 'forged-bank@x.test';
    const raw = message({
      from: '"Bank Security" <security@bank.test>',
      subject: 'Your account is locked: verify your password now',
      id,
    });
    await send(after.port, 'bounce@sender.test', raw);
    const m = await arrival(id);
    expect(m.to).toEqual(['bob@example.org']);
    const ours = results(m.raw).filter((l) => l.toLowerCase().includes(ID));
    expect(ours[0]).toMatch(/dmarc=fail .*header\.from=bank\.test/);
    expect(m.header('x-trawl-policy-action')).toMatch(/^(deliver|prefix|quarantine)$/);
    const job = await trawl.job(m.header('x-trawl-job') ?? '');
    expect(job?.result?.evidence?.auth).toMatchObject({ dmarc: 'fail', authserv_id: ID });
    expect(job?.result?.indicators.some((i) => i.type === 'auth_failure')).toBe(true);
  });
});
