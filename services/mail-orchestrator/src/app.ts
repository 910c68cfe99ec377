import { randomUUID } from 'node:crypto';
import {
  type BackoffPolicy,
  BackoffState,
  IngestRequest,
  type MailRetrievers,
  type Topology,
  toProblems,
  verifyCredential,
} from '@trawl/contracts';
import { type Broker, type Cache, refuseUnknownRoute, serviceChild } from '@trawl/platform';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { DedupStore } from './dedup-store.ts';
import { MAIL_ERRORS } from './errors.ts';
import {
  createGatewayClient,
  type GatewayClient,
  type GatewayTransport,
} from './gateway-client.ts';
import { ACKED_OUTCOMES, createMessageProcessor, type Outcome } from './message-processor.ts';
import { createMailMetrics, type MailMetrics } from './metrics.ts';
import { createPoller, type PassReport, type PolledRetriever } from './poller.ts';
import { RetrieverClient } from './retriever-client.ts';
import { createVerdictRelay } from './verdicts.ts';

/** The service's name, in logs, metrics and /health. */
export const SERVICE_NAME = 'mail-orchestrator';

/** How the mail orchestrator polls and submits: intervals, batch sizes, back-off, timeouts. */
export interface MailOrchestratorOptions {
  /** Pause between polling passes when no retriever had a full batch (default 5000). */
  pollIntervalMs?: number;
  /** max_messages per fetch (default 25). */
  batchSize?: number;
  /**
   * Largest raw message a retriever may hand over (default 25 MiB, the gateway's default
   * TRAWL_MAX_RAW_MESSAGE_BYTES): a fetch answer is read up to batchSize such messages in base64.
   */
  maxMessageBytes?: number;
  /** Messages of a batch submitted at once (default 4). */
  concurrency?: number;
  /** Backoff of a failing retriever (default 1 s doubling up to 5 min, 20 % jitter). */
  retrieverBackoff?: BackoffPolicy;
  /** Timeout of calls to retrievers (default 15000). */
  retrieverTimeoutMs?: number;
  /** Timeout of calls to the gateway (default 30000). */
  gatewayTimeoutMs?: number;
  /** How long a handled message is remembered for dedup (default 7 days). */
  dedupTtlSeconds?: number;
  /** A claim older than this belongs to a dead replica and is recovered (default 120000). */
  pendingStaleMs?: number;
  /** Verdict callback attempts per delivery (default 5), backoff (default 500 ms .. 10 s). */
  verdictAttempts?: number;
  verdictBackoff?: BackoffPolicy;
  /** Deliveries of one event before its verdict is dropped (default 5). */
  verdictMaxDeliveries?: number;
  verdictPrefetch?: number;
  /** Reported by /health. */
  serviceVersion?: string;
  /** Names this replica in claims (default: random). */
  instanceId?: string;
}

/** What the mail orchestrator is built from: retrievers, the gateway, the platform key, broker. */
export interface MailOrchestratorDeps {
  retrievers: MailRetrievers;
  /**
   * The gateway: a client, or its base URL (the internal key is `internalApiKey`) with, when it
   * runs in this process, the transport that calls it directly (inProcessTransport).
   */
  gateway:
    | GatewayClient
    | { baseUrl: string; workflowId?: string; transport?: GatewayTransport | undefined };
  /**
   * The platform key (INTERNAL_API_KEY). Never sent: each retriever gets its own credential
   * derived from it, messages go to the gateway with their retriever's credential, job reads with
   * the mail orchestrator's own; POST /internal/ingest takes a retriever's credential only.
   */
  internalApiKey: string;
  broker: Broker;
  topology: Topology;
  /** Dedup marks and job origins (Redis in production, shared by replicas). */
  cache: Cache;
  logger: Logger;
  registry?: Registry;
  clock?: () => Date;
  options?: MailOrchestratorOptions;
}

/** The mail orchestrator: polls the retrievers, submits to the gateway, sends back verdicts. */
export interface MailOrchestrator {
  /** Subscribes to verdicts and starts polling. */
  start(): Promise<void>;
  /**
   * Stops polling and the verdict consumer. graceMs > 0: lets the current pass finish within it.
   * graceMs = 0: abandons everything at once, as a crash would (tests use it): nothing more is
   * written, acked or called.
   */
  stop(graceMs?: number): Promise<void>;
  /** One polling pass (tests; start() runs passes in a loop). */
  pollOnce(): Promise<PassReport>;
  app: FastifyInstance;
  metrics: MailMetrics;
  registry: Registry;
}

function problem(status: number, code: string, title: string, detail: string, extra: object = {}) {
  return { type: 'about:blank', title, status, detail, code, ...extra };
}

/** Builds the mail orchestrator from its dependencies (it does not start polling). */
export function buildMailOrchestrator(deps: MailOrchestratorDeps): MailOrchestrator {
  const o = deps.options ?? {};
  const clock = deps.clock ?? (() => new Date());
  const now = () => clock().getTime();
  const registry = deps.registry ?? new Registry();
  const metrics = createMailMetrics(registry);
  const logger = serviceChild(deps.logger, SERVICE_NAME);
  const instanceId = o.instanceId ?? randomUUID();
  const gatewayTimeoutMs = o.gatewayTimeoutMs ?? 30_000;
  const gateway: GatewayClient =
    'submitRaw' in deps.gateway
      ? deps.gateway
      : createGatewayClient({
          baseUrl: deps.gateway.baseUrl,
          workflowId: deps.gateway.workflowId,
          transport: deps.gateway.transport,
          internalApiKey: deps.internalApiKey,
          timeoutMs: gatewayTimeoutMs,
        });
  const dedup = new DedupStore(deps.cache, {
    doneSeconds: o.dedupTtlSeconds ?? 7 * 24 * 3600,
    pendingSeconds: Math.max(3600, Math.ceil((o.pendingStaleMs ?? 120_000) / 1000) * 10),
  });

  const clients = new Map<string, RetrieverClient>();
  const polled: PolledRetriever[] = [];
  const retrieverBackoff = o.retrieverBackoff ?? { initialMs: 1000, maxMs: 300_000, jitter: 0.2 };
  const maxMessageBytes = o.maxMessageBytes ?? 25 * 1024 * 1024;
  const maxFetchBytes =
    (o.batchSize ?? 25) * (Math.ceil((maxMessageBytes * 4) / 3) + 4096) + 64 * 1024;
  for (const [name, entry] of Object.entries(deps.retrievers)) {
    const client = new RetrieverClient({
      name,
      url: entry.url,
      internalApiKey: deps.internalApiKey,
      timeoutMs: o.retrieverTimeoutMs ?? 15_000,
      maxFetchBytes,
    });
    clients.set(name, client);
    if (entry.enabled) {
      polled.push({
        client,
        priority: entry.priority,
        backoff: new BackoffState(retrieverBackoff),
      });
    }
  }

  let killed = false;
  let running = false;
  let passAbort = new AbortController();
  let wake: (() => void) | undefined;
  let loopDone: Promise<void> | undefined;

  const verdicts = createVerdictRelay({
    broker: deps.broker,
    topology: deps.topology,
    retrievers: clients,
    dedup,
    metrics,
    logger,
    options: {
      attempts: o.verdictAttempts ?? 5,
      backoff: o.verdictBackoff ?? { initialMs: 500, maxMs: 10_000, jitter: 0.2 },
      maxDeliveries: o.verdictMaxDeliveries ?? 5,
      prefetch: o.verdictPrefetch ?? 8,
    },
  });

  const processor = createMessageProcessor({
    gateway,
    dedup,
    metrics,
    logger,
    instanceId,
    now,
    pendingStaleMs: o.pendingStaleMs ?? 120_000,
    onRecoveredJob: (job, origin) => verdicts.deliverJob(job, origin),
    fileUnanalyzed: (retriever, id, ref, error) =>
      verdicts.fileUnanalyzed(retriever, id, ref, error),
    isReport: (retriever) => deps.retrievers[retriever]?.report === true,
    killed: () => killed,
  });

  const poller = createPoller({
    retrievers: polled,
    processor,
    metrics,
    logger,
    now,
    options: {
      pollIntervalMs: o.pollIntervalMs ?? 5000,
      batchSize: o.batchSize ?? 25,
      concurrency: o.concurrency ?? 4,
      backoff: retrieverBackoff,
    },
  });

  async function loop(): Promise<void> {
    while (running) {
      let delay = o.pollIntervalMs ?? 5000;
      try {
        const report = await poller.pollOnce(passAbort.signal);
        delay = poller.nextDelay(report);
      } catch (err) {
        if (!running) return;
        logger.error({ err: String(err) }, 'polling pass failed');
      }
      if (!running) return;
      if (delay > 0) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, delay);
          wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
        wake = undefined;
      }
    }
  }

  /**
   * A pushing retriever that sends a message again (the same bytes) is waiting for its verdict: an
   * SMTP filter that answered 451 at its deadline gets the message back from Postfix. When the job
   * is already finished, its verdict is sent again now (its event went by earlier); otherwise the
   * event still to come carries it. In the background: the ingest answer does not wait for it.
   */
  function redeliverVerdict(jobId: string, origin: { retriever: string; id: string }): void {
    void (async () => {
      const job = await gateway.getJob(jobId);
      if (job && (job.status === 'completed' || job.status === 'failed')) {
        await verdicts.deliverJob(job, origin);
      }
    })().catch((err: unknown) =>
      logger.warn({ job_id: jobId, err: String(err) }, 'verdict of a duplicate not sent again'),
    );
  }

  // Authenticated pushes carry messages (up to 64 MiB); an unauthenticated request is refused in
  // onRequest, before a byte of its body is read (issue 28: a 36 MB body was parsed, then refused).
  const app = Fastify({ logger: false, bodyLimit: 64 * 1024 * 1024 });
  app.addHook('onRequest', refuseUnknownRoute);
  const pushers = new WeakMap<object, string>();

  app.get('/health', async () => ({
    status: 'healthy',
    service: SERVICE_NAME,
    version: o.serviceVersion ?? '0.0.0',
    polling: running,
    retrievers: poller.order.map((r) => ({
      name: r.client.name,
      priority: r.priority,
      failures: r.backoff.failures,
      backing_off: !r.backoff.ready(now()),
    })),
  }));

  app.get('/metrics', async (_req, reply) => {
    reply.header('content-type', registry.contentType);
    return registry.metrics();
  });

  /** A retriever pushes as itself: its own credential names it (constant-time MAC check). */
  const retrieverOnly = async (request: FastifyRequest, reply: FastifyReply) => {
    const key = request.headers['x-internal-api-key'];
    const party = typeof key === 'string' ? verifyCredential(deps.internalApiKey, key) : null;
    if (party?.kind === 'retriever') {
      pushers.set(request, party.id);
      return;
    }
    return reply
      .code(401)
      .type('application/problem+json')
      .send(
        problem(
          401,
          MAIL_ERRORS.unauthorized,
          'Unauthorized',
          "a retriever's own credential is required in X-Internal-API-Key",
        ),
      );
  };

  app.post('/internal/ingest', { onRequest: retrieverOnly }, async (request, reply) => {
    const pusher = pushers.get(request);
    if (pusher === undefined) return reply.code(401).send();
    const parsed = IngestRequest.safeParse(request.body);
    if (!parsed.success) {
      return reply
        .code(422)
        .type('application/problem+json')
        .send(
          problem(
            422,
            MAIL_ERRORS.badRequest,
            'Unprocessable Content',
            'the body is not an ingest request',
            {
              errors: toProblems(parsed.error),
            },
          ),
        );
    }
    if (killed) {
      return reply
        .code(503)
        .header('retry-after', '5')
        .type('application/problem+json')
        .send(
          problem(
            503,
            MAIL_ERRORS.stopping,
            'Service Unavailable',
            'the mail orchestrator is stopping',
          ),
        );
    }
    if (parsed.data.retriever !== undefined && parsed.data.retriever !== pusher) {
      return reply
        .code(403)
        .type('application/problem+json')
        .send(
          problem(
            403,
            MAIL_ERRORS.forbidden,
            'Forbidden',
            `the credential of retriever:${pusher} pushes mail only as itself`,
          ),
        );
    }
    const retriever = pusher;
    const results: { id: string; status: Outcome['kind']; job_id?: string; detail?: string }[] = [];
    for (const m of parsed.data.messages) {
      const out = await processor.process(retriever, m);
      if (out.kind === 'duplicate' && out.jobId && clients.has(retriever)) {
        redeliverVerdict(out.jobId, { retriever, id: m.id });
      }
      results.push({
        id: m.id,
        status: out.kind,
        ...('jobId' in out && out.jobId ? { job_id: out.jobId } : {}),
        ...(out.kind === 'rejected' ? { detail: out.detail } : {}),
        ...(out.kind === 'failed' ? { detail: out.reason } : {}),
      });
    }
    const retry = results.some((r) => !ACKED_OUTCOMES.has(r.status));
    if (retry) reply.code(503).header('retry-after', '5');
    return { results };
  });

  return {
    app,
    metrics,
    registry,
    async start() {
      killed = false;
      await verdicts.start();
      if (running) return;
      running = true;
      passAbort = new AbortController();
      loopDone = loop();
      logger.info(
        { retrievers: poller.order.map((r) => r.client.name) },
        'mail orchestrator started',
      );
    },
    async stop(graceMs = 10_000) {
      running = false;
      wake?.();
      if (graceMs <= 0) {
        killed = true;
        passAbort.abort();
        await verdicts.stop(false);
        await loopDone?.catch(() => undefined);
        return;
      }
      const timer = new Promise<void>((r) => setTimeout(r, graceMs).unref());
      await Promise.race([loopDone ?? Promise.resolve(), timer]);
      passAbort.abort();
      await loopDone?.catch(() => undefined);
      await verdicts.stop(true);
    },
    pollOnce: () => poller.pollOnce(passAbort.signal),
  };
}
