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
import { testBroker, testRedis, testSchema } from '@trawl/platform/testing';
import type { CompiledWorkflow } from '@trawl/workflow-engine';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildMailOrchestrator, type MailOrchestrator, messageKey } from '../../src/index.ts';
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
  async function startGateway(config: Partial<GatewayOptions>): Promise<string> {
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
      options: { pollIntervalMs: 60_000, retrieverBackoff: { initialMs: 1, maxMs: 1 } },
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

  it('files a message the gateway can never take (no sender, no recipient) as rejected', async () => {
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
  });
});
