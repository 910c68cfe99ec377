import { join } from 'node:path';
import {
  buildApp,
  createConfigState,
  defaultGatewayOptions,
  type GatewayOptions,
  loadSnapshot,
  type PluginInvoker,
} from '@trawl/api-gateway';
import { diffFiles, findRepoRoot } from '@trawl/config';
import type { VerdictRequest } from '@trawl/contracts';
import { testBroker, testRedis, testSchema } from '@trawl/platform/testing';
import type { CompiledWorkflow } from '@trawl/workflow-engine';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  buildMailOrchestrator,
  contentHash,
  type MailOrchestrator,
  messageKey,
} from '../../src/index.ts';
import { FakeRetriever, rawMessage } from '../unit/fakes.ts';
import { KEY, SECRET, silent } from './stack.ts';

/** The gateway stores and publishes jobs; analysis is not what these tests are about. */
const noAnalysis: PluginInvoker = {
  async analyze() {
    throw new Error('not called');
  },
  async enrich() {
    throw new Error('not called');
  },
};

/**
 * The mail orchestrator against the real gateway (PostgreSQL, Redis, RabbitMQ on 127.0.0.1): which
 * refusals keep a message for later and which file it for good.
 */
describe('mail orchestrator and the real gateway: refusals', () => {
  const root = findRepoRoot();
  const files = {
    configFile: join(root, 'config', 'defaults', 'service.yaml'),
    workflowsFile: join(root, 'config', 'defaults', 'workflows.yaml'),
  };
  let db: Awaited<ReturnType<typeof testSchema>>;
  let redis: ReturnType<typeof testRedis>;
  let tb: Awaited<ReturnType<typeof testBroker>>;
  let gateway: FastifyInstance | undefined;
  let port = 0;
  let retriever: FakeRetriever;
  let mail: MailOrchestrator | undefined;

  beforeAll(async () => {
    db = await testSchema({ max: 4 });
    redis = testRedis();
    tb = await testBroker();
  });

  afterEach(async () => {
    await mail?.stop(0);
    mail = undefined;
    await gateway?.close();
    gateway = undefined;
    await retriever?.close();
  });

  afterAll(async () => {
    await tb?.cleanup();
    await redis?.cleanup();
    await db?.drop();
  });

  /** (Re)starts the gateway with these options on the same port, as an operator would. */
  async function startGateway(config: Partial<GatewayOptions> = {}): Promise<string> {
    await gateway?.close();
    const configState = createConfigState<CompiledWorkflow>({
      initial: loadSnapshot(files),
      load: () => loadSnapshot(files),
      diff: diffFiles,
      store: db.store,
      broker: tb.broker,
      topology: tb.topology,
    });
    gateway = await buildApp({
      config: defaultGatewayOptions({ secretKey: SECRET, internalApiKey: KEY, ...config }),
      store: db.store,
      broker: tb.broker,
      cache: redis.cache,
      topology: tb.topology,
      configState,
      invoker: noAnalysis,
      logger: silent,
      version: '0.0.0-test',
    });
    await gateway.listen({ host: '127.0.0.1', port });
    port = (gateway.server.address() as { port: number }).port;
    return `http://127.0.0.1:${port}`;
  }

  async function orchestrator(
    baseUrl: string,
    opts: { key?: string; workflowId?: string } = {},
  ): Promise<MailOrchestrator> {
    retriever = await new FakeRetriever().start();
    mail = buildMailOrchestrator({
      retrievers: { mailbox: { url: retriever.url, priority: 0, enabled: true } },
      gateway: { baseUrl, ...(opts.workflowId ? { workflowId: opts.workflowId } : {}) },
      internalApiKey: opts.key ?? KEY,
      broker: tb.broker,
      topology: tb.topology,
      cache: redis.cache,
      logger: silent,
      options: {
        pollIntervalMs: 60_000,
        retrieverBackoff: { initialMs: 1, maxMs: 1 },
        verdictBackoff: { initialMs: 20, maxMs: 200 },
      },
    });
    return mail;
  }

  /** The dedup mark of a message, as the orchestrator keeps it in Redis (null: none). */
  function dedupMark(raw: string): Promise<string | null> {
    return redis.cache.get(`mail:seen:${messageKey(Buffer.from(raw)).key}`);
  }

  async function jobsOf(messageId: string): Promise<number> {
    const { rows } = await db.store.sql.query<{ n: string }>(
      `SELECT count(*) AS n FROM jobs
        WHERE position($1 in (email::jsonb)->'headers'->'raw_headers'->>'message-id') > 0`,
      [messageId],
    );
    return Number(rows[0]?.n ?? 0);
  }

  // Regression (issue 19): with the shipped compose, TRUSTED_HOSTS did not name the host the mail
  // orchestrator calls the gateway by; the 400 TRAWL_ERR_GATEWAY_UNTRUSTED_HOST was taken for a
  // refusal of the message: acked unanalysed, its key kept 7 days, so a retry was a "duplicate".
  it('keeps reported mail in the mailbox while the gateway does not trust its host name, and analyses it once trusted', async () => {
    // The orchestrator calls 127.0.0.1; the gateway trusts another name only.
    const url = await startGateway({ trustedHosts: ['api-gateway'] });
    const o = await orchestrator(url);
    const raw = rawMessage(1, { messageId: '<untrusted-host-1@example.test>' });
    retriever.add('m1', raw);

    const refused = await o.pollOnce();
    expect(refused.polled[0]?.outcomes).toEqual(['failed']);
    expect(retriever.acked).toEqual([]);
    expect(await dedupMark(raw)).toBeNull();
    expect(await jobsOf('untrusted-host-1@example.test')).toBe(0);
    const metrics = await o.registry.metrics();
    expect(metrics).toMatch(/trawl_mail_failures_total\{retriever="mailbox",stage="submit"\} 1/);
    expect(metrics).not.toMatch(/trawl_mail_rejected_total\{retriever="mailbox"\} [1-9]/);

    // The operator adds the name to TRUSTED_HOSTS and restarts the gateway.
    await startGateway({ trustedHosts: ['api-gateway', '127.0.0.1'] });
    const accepted = await o.pollOnce();
    expect(accepted.polled[0]?.outcomes).toEqual(['accepted']);
    expect(retriever.acked).toEqual(['m1']);
    expect(await jobsOf('untrusted-host-1@example.test')).toBe(1);
  });

  it('keeps reported mail in the mailbox while the gateway refuses the internal key', async () => {
    const url = await startGateway({ trustedHosts: [] });
    const o = await orchestrator(url, { key: 'not-the-internal-key-0123456789abcdef' });
    const raw = rawMessage(2, { messageId: '<bad-key-2@example.test>' });
    retriever.add('m2', raw);
    const r = await o.pollOnce();
    expect(r.polled[0]?.outcomes).toEqual(['failed']);
    expect(retriever.acked).toEqual([]);
    expect(await dedupMark(raw)).toBeNull();
    expect(await jobsOf('bad-key-2@example.test')).toBe(0);
  });

  it('keeps reported mail in the mailbox while its workflow is unknown to the gateway', async () => {
    const url = await startGateway({ trustedHosts: [] });
    const o = await orchestrator(url, { workflowId: 'no-such-workflow' });
    const raw = rawMessage(3, { messageId: '<no-workflow-3@example.test>' });
    retriever.add('m3', raw);
    const r = await o.pollOnce();
    expect(r.polled[0]?.outcomes).toEqual(['failed']);
    expect(retriever.acked).toEqual([]);
    expect(await dedupMark(raw)).toBeNull();
  });

  it('files a message the gateway can never take (no sender, no recipient) as rejected, with an unanalyzed verdict', async () => {
    const url = await startGateway({ trustedHosts: [] });
    const o = await orchestrator(url);
    retriever.add(
      'm4',
      'Subject: nothing else\r\nMessage-ID: <invalid-4@example.test>\r\n\r\nno headers\r\n',
    );
    const r = await o.pollOnce();
    expect(r.polled[0]?.outcomes).toEqual(['rejected']);
    expect(retriever.acked).toEqual(['m4']);
    expect(await o.registry.metrics()).toMatch(
      /trawl_mail_rejected_total\{retriever="mailbox"\} 1/,
    );
    await o.start();
    const v = await verdictFor('m4');
    expect(v).toMatchObject({ verdict: 'unanalyzed', error: { code: 'TRAWL_ERR_MAIL_INVALID' } });
  });

  /** The verdict the retriever got for `id` (waits for it). */
  async function verdictFor(id: string, timeoutMs = 20_000): Promise<VerdictRequest> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const v = retriever.verdicts.find((x) => x.id === id);
      if (v) return v;
      if (Date.now() > until) throw new Error(`no verdict for ${id}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  // Regression (issue 15): deduplication keyed on the Message-ID alone, so a phish sent after a
  // benign message with the same Message-ID was acked as a duplicate and never analysed.
  it('analyses two messages that share a Message-ID but not their content, and drops an identical redelivery', async () => {
    const url = await startGateway();
    const o = await orchestrator(url);
    const mid = '<shared-mid-5@example.test>';
    const benign = rawMessage(5, { messageId: mid, body: 'Lunch at noon on Friday?' });
    const phish = rawMessage(5, {
      messageId: mid,
      body: 'Your mailbox is full. Sign in at http://mailbox-quota.example.bad/login now.',
    });
    retriever.add('benign', benign);
    expect((await o.pollOnce()).polled[0]?.outcomes).toEqual(['accepted']);
    retriever.add('phish', phish);
    expect((await o.pollOnce()).polled[0]?.outcomes).toEqual(['accepted']);
    expect(await jobsOf('shared-mid-5@example.test')).toBe(2);
    // the same bytes handed out again (an ack that got lost): dropped, not analysed a third time
    retriever.add('phish', phish);
    expect((await o.pollOnce()).polled[0]?.outcomes).toEqual(['duplicate']);
    expect(await jobsOf('shared-mid-5@example.test')).toBe(2);
    expect(retriever.acked).toEqual(['benign', 'phish', 'phish']);
    expect(await o.registry.metrics()).toMatch(
      /trawl_mail_duplicates_total\{retriever="mailbox"\} 1/,
    );
  });

  it('takes the recipient of a Bcc copy from the envelope the retriever knows instead of refusing it', async () => {
    const url = await startGateway();
    const o = await orchestrator(url);
    const bcc = [
      'From: Sender <sender@example.test>',
      'Subject: blind copy',
      'Message-ID: <bcc-6@example.test>',
      'Date: Wed, 01 May 2024 10:00:00 +0000',
      '',
      'You were sent this as a blind copy.',
      '',
    ].join('\r\n');
    retriever.add('bcc', bcc, { to: ['reports@example.org'] });
    expect((await o.pollOnce()).polled[0]?.outcomes).toEqual(['accepted']);
    const { rows } = await db.store.sql.query<{ to: string }>(
      `SELECT (email::jsonb)->'headers'->'recipients'->>0 AS to FROM jobs
        WHERE position('bcc-6@example.test' in (email::jsonb)->'headers'->'raw_headers'->>'message-id') > 0`,
    );
    expect(rows.map((r) => r.to)).toEqual(['reports@example.org']);
  });

  // Regression (issue 15): every one of these refusals is in the sender's hands, and each message
  // was acked without a verdict: filed with the processed mail, as if it had been looked at. (A
  // message without any recipient is no longer refused: issue 16, reported-mail.test.ts.)
  it('gives each message the gateway refuses an unanalyzed verdict that reaches the retriever', {
    timeout: 60_000,
  }, async () => {
    const url = await startGateway({
      limits: { ...defaultGatewayOptions({ secretKey: SECRET }).limits, rawMessageBytes: 2 << 20 },
    });
    const o = await orchestrator(url);
    const head = (n: string, extra: string[] = []) => [
      'From: Sender <sender@example.test>',
      'To: user@example.org',
      `Subject: hostile ${n}`,
      `Message-ID: <hostile-${n}@example.test>`,
      'Date: Wed, 01 May 2024 10:00:00 +0000',
      ...extra,
    ];
    const parts = Array.from(
      { length: 501 },
      (_, i) => `--b\r\nContent-Type: text/plain\r\n\r\npart ${i}\r\n`,
    );
    const cases: [string, string | Buffer, string][] = [
      [
        'parts',
        [
          ...head('parts', ['MIME-Version: 1.0', 'Content-Type: multipart/mixed; boundary="b"']),
          '',
          ...parts,
          '--b--',
          '',
        ].join('\r\n'),
        'TRAWL_ERR_MAIL_UNPARSEABLE',
      ],
      [
        'no-sender',
        [...head('no-sender').filter((l) => !l.startsWith('From:')), '', 'from nobody', ''].join(
          '\r\n',
        ),
        'TRAWL_ERR_MAIL_INVALID',
      ],
      [
        'deep',
        [
          ...head('deep', ['MIME-Version: 1.0', 'Content-Type: multipart/mixed; boundary="d0"']),
          '',
          ...Array.from(
            { length: 40 },
            (_, i) => `--d${i}\r\nContent-Type: multipart/mixed; boundary="d${i + 1}"\r\n`,
          ),
          '--d40\r\nContent-Type: text/plain\r\n\r\ndeep\r\n',
          '',
        ].join('\r\n'),
        'TRAWL_ERR_MAIL_UNPARSEABLE',
      ],
      [
        'large',
        [...head('large'), '', 'x'.repeat(76).concat('\r\n').repeat(40_000), ''].join('\r\n'),
        '413',
      ],
    ];
    for (const [id, raw] of cases) retriever.add(id, raw);
    await o.start();
    for (const [id, raw, code] of cases) {
      const v = await verdictFor(id);
      expect(v.verdict, id).toBe('unanalyzed');
      expect(v.result.recommended_action, id).toBe('review');
      expect(v.job_id, id).toBe(`unanalyzed:${contentHash(Buffer.from(raw))}`);
      if (code === '413') expect(v.error?.message, id).toContain('(413)');
      else expect(v.error?.code, id).toBe(code);
    }
    await waitAcked(cases.map(([id]) => id));
    for (const [id] of cases) expect(await jobsOf(`hostile-${id}@example.test`), id).toBe(0);
  });

  async function waitAcked(ids: string[]): Promise<void> {
    const until = Date.now() + 20_000;
    while (!ids.every((id) => retriever.acked.includes(id))) {
      if (Date.now() > until)
        throw new Error(`not acked: ${ids.filter((id) => !retriever.acked.includes(id))}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
});
