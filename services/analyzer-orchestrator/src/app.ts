import { randomUUID } from 'node:crypto';
import {
  AnalysisEvent,
  AnalysisRequestMessage,
  ConfigReloadedEvent,
  type Email,
  type Job,
  type JobError,
  safeParseEmail,
  type Topology,
  toProblems,
} from '@trawl/contracts';
import {
  type Broker,
  type Cache,
  type Consumer,
  type Delivery,
  expandDeadBatches,
  expandJobBatches,
  type FinishedJob,
  type Store,
  serviceChild,
} from '@trawl/platform';
import type { PluginInvoker } from '@trawl/plugin-client';
import { type RunOutcome, runWorkflow, WORKFLOW_ERROR_CODES } from '@trawl/workflow-engine';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { z } from 'zod';
import { createAnalyzerCache } from './analyzer-cache.ts';
import { recordCampaign } from './campaigns.ts';
import type { ConfigSource } from './config-snapshot.ts';
import { createEngineDeps } from './engine-deps.ts';
import { ORCHESTRATOR_ERROR_CODES } from './errors.ts';
import { attachEvidence } from './evidence.ts';
import { createMetrics, type OrchestratorMetrics } from './metrics.ts';
import type { Retention } from './retention.ts';

export const SERVICE_NAME = 'analyzer-orchestrator';

export interface OrchestratorOptions {
  /** Unacked request messages at once = jobs run concurrently (default 16). */
  prefetch?: number;
  /** How often the reaper looks for stuck jobs (default 30000; 0 = never, call reapOnce()). */
  reaperIntervalMs?: number;
  /** Grace after a job's deadline before the reaper fails it (default 30000). */
  jobGraceMs?: number;
  /**
   * A job still `queued` this long after it was stored is failed by the reaper with
   * TRAWL_ERR_NOT_DISPATCHED (default 0: never; the services pass TRAWL_JOB_QUEUED_MAX_MS).
   */
  queuedMaxMs?: number;
  /** TTL of `job:<id>` entries written to the cache (default 3600). */
  jobCacheTtlSeconds?: number;
  /** Pause before a message is returned to the queue after a store failure (default 500). */
  requeueDelayMs?: number;
  /**
   * How long a store write of a running job is retried in-process, with backoff, before the message
   * goes back to the queue (default 30000). A short database outage then costs neither a delivery
   * (the queue's delivery limit) nor a re-run of the workflow.
   */
  storeRetryMs?: number;
  /** Names this replica's control queue (default: a random id). */
  instanceId?: string;
  /** Reported by /health. */
  serviceVersion?: string;
}

export interface OrchestratorDeps {
  broker: Broker;
  store: Pick<Store, 'jobs'> & Partial<Pick<Store, 'senders' | 'campaigns' | 'sql'>>;
  /** Job status cache (`job:<id>`) and analyzer result cache. Optional. */
  cache?: Cache | undefined;
  /** Calls analyzers and providers: the HTTP plugin client or an in-process invoker. */
  invoker: PluginInvoker;
  config: ConfigSource;
  topology: Topology;
  logger: Logger;
  /** Own prom-client Registry; a new one when absent. */
  registry?: Registry;
  /** Wall clock (deadlines, reaper, event timestamps). */
  clock?: () => Date;
  options?: OrchestratorOptions;
  /** The retention purge (retention.ts), started by the reaper's ticks; none: nothing purged. */
  retention?: Pick<Retention, 'tick' | 'stop'> | undefined;
}

export interface Orchestrator {
  /** Starts consuming requests, dead letters and control events, and the reaper. */
  start(): Promise<void>;
  /**
   * Stops consuming, lets in-flight jobs finish within `graceMs`, then cancels the rest and returns
   * their messages to the queue. Does not close the clients passed in.
   */
  stop(graceMs?: number): Promise<void>;
  /** Fails jobs stuck in `processing` past deadline + grace; answers how many it failed. */
  reapOnce(): Promise<number>;
  /** Jobs running now. */
  inFlight(): number;
  /** Resolves once the finished jobs waiting to be grouped into campaigns are grouped. */
  campaignsSettled(): Promise<void>;
  /** Fastify instance with /health and /metrics; not listening. */
  app: FastifyInstance;
  metrics: OrchestratorMetrics;
  registry: Registry;
}

const JobIdOnly = z.object({ job_id: z.uuid() });

function jobIdOf(body: unknown): string | undefined {
  const r = JobIdOnly.safeParse(body);
  return r.success ? r.data.job_id : undefined;
}

/**
 * The Email a claimed job row holds (claim check, ADR 005): JSON text written by the gateway,
 * parsed and validated here, at the boundary. A row that does not hold a valid Email answers why.
 */
function storedEmail(raw: unknown): { ok: true; email: Email } | { ok: false; detail: string } {
  let value: unknown;
  try {
    value = typeof raw === 'string' ? JSON.parse(raw) : raw;
  } catch {
    return { ok: false, detail: 'it is not JSON' };
  }
  const r = safeParseEmail(value);
  if (r.success) return { ok: true, email: r.data };
  return {
    ok: false,
    detail: toProblems(r.error)
      .slice(0, 5)
      .map((p) => `${p.path || '/'}: ${p.message}`)
      .join('; '),
  };
}

function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** First x-death reason of a dead-lettered message ('rejected', 'delivery_limit', 'expired'...). */
function deathReason(headers: Record<string, unknown>): string | undefined {
  const first = headers['x-first-death-reason'];
  if (typeof first === 'string') return first;
  const deaths = headers['x-death'];
  if (Array.isArray(deaths) && deaths[0] && typeof deaths[0] === 'object') {
    const r = (deaths[0] as { reason?: unknown }).reason;
    if (typeof r === 'string') return r;
  }
  return undefined;
}

interface Running {
  done: Promise<void>;
}

export function buildOrchestrator(deps: OrchestratorDeps): Orchestrator {
  const { broker, store, cache, invoker, config, topology: t } = deps;
  const opts = deps.options ?? {};
  const prefetch = opts.prefetch ?? 16;
  const reaperIntervalMs = opts.reaperIntervalMs ?? 30_000;
  const jobGraceMs = opts.jobGraceMs ?? 30_000;
  const queuedMaxMs = opts.queuedMaxMs ?? 0;
  const jobCacheTtl = opts.jobCacheTtlSeconds ?? 3600;
  const requeueDelayMs = opts.requeueDelayMs ?? 500;
  const storeRetryMs = opts.storeRetryMs ?? 30_000;
  const instanceId = opts.instanceId ?? randomUUID().slice(0, 8);
  const clock = deps.clock ?? (() => new Date());
  const registry = deps.registry ?? new Registry();
  const metrics = createMetrics(registry, {
    broker,
    queues: [t.queues.analysisRequests, t.queues.analysisDead, t.queues.mailVerdicts],
  });
  const log = serviceChild(deps.logger, SERVICE_NAME);
  const analyzerCache = cache ? createAnalyzerCache(cache) : undefined;

  const running = new Set<Running>();
  /** Abort controllers of the runs in progress, so stop() can cancel them after the grace period. */
  const runControllers = new Set<AbortController>();
  const consumers: Consumer[] = [];
  let stopping = false;
  let forceCancelled = false;
  let reaper: ReturnType<typeof setInterval> | undefined;
  let reaping = false;
  const stopAc = new AbortController();

  const delay = (ms: number) =>
    new Promise<void>((resolve) => {
      if (stopAc.signal.aborted || ms <= 0) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        stopAc.signal.removeEventListener('abort', done);
        resolve();
      }
      stopAc.signal.addEventListener('abort', done, { once: true });
    });

  /** Writes a finished job to the status cache (`job:<id>`) that GET /analyze/{id} reads first. */
  async function writeJobCache(jobId: string, job: Job, jlog: Logger): Promise<void> {
    if (!cache) return;
    try {
      await cache.set(`job:${jobId}`, JSON.stringify(job), jobCacheTtl);
    } catch (e) {
      jlog.warn({ err: errText(e) }, 'could not write the job to the cache');
      await cache.del(`job:${jobId}`).catch(() => undefined);
    }
  }

  /**
   * Runs a store operation, retrying with capped exponential backoff while the store is down, for up
   * to storeRetryMs and never past stop(). Throws the last error when it gives up.
   */
  async function retryStore<T>(what: string, jlog: Logger, fn: () => Promise<T>): Promise<T> {
    const started = Date.now();
    let wait = 100;
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (e) {
        if (stopping || Date.now() - started + wait > storeRetryMs) throw e;
        if (attempt === 1) jlog.warn({ err: errText(e) }, `store unavailable (${what}): retrying`);
        await delay(wait);
        wait = Math.min(wait * 2, 2000);
      }
    }
  }

  function withoutEvidence(r: NonNullable<Job['result']>): NonNullable<Job['result']> {
    if (r.evidence === undefined) return r;
    const { evidence: _evidence, ...rest } = r;
    return rest;
  }

  async function publishEvent(e: AnalysisEvent): Promise<void> {
    await broker.publish(t.exchanges.results, e.event, AnalysisEvent.parse(e), {
      messageId: `${e.job_id}:${e.event}`,
      contentType: 'application/json',
      persistent: true,
    });
  }

  function eventFromJob(job: Job, origin?: AnalysisRequestMessage['origin']): AnalysisEvent | null {
    if (job.status !== 'completed' && job.status !== 'failed') return null;
    return {
      event: job.status === 'completed' ? 'analysis.completed' : 'analysis.failed',
      job_id: job.job_id,
      email_id: job.email_id,
      workflow: job.workflow,
      // the verdict without its evidence: the event tells that a job ended and how (retrievers,
      // watchers); the evidence, several KiB a job, is read with the job (GET /api/v1/analyze/{id})
      // and would cost every consumer a parse of it
      ...(job.result ? { result: withoutEvidence(job.result) } : {}),
      ...(job.error ? { error: job.error } : {}),
      ...(origin ? { origin } : {}),
      at: (job.completed_at ?? clock().toISOString()) as string,
    };
  }

  /** Fails a job outside a run (invalid message, unknown workflow, dead letter, reaper). */
  async function failOutsideRun(
    jobId: string,
    error: JobError,
    jlog: Logger,
    origin?: AnalysisRequestMessage['origin'],
  ): Promise<boolean> {
    const finished = await store.jobs.finish({
      job_id: jobId,
      outcome: { status: 'failed', error },
    });
    if (!finished) return false;
    metrics.jobs.inc({ status: 'failed' });
    jlog.warn({ code: error.code, reason: error.message }, 'job failed');
    await writeJobCache(jobId, finished.job, jlog);
    const ev = eventFromJob(finished.job, origin);
    if (ev) {
      try {
        await publishEvent(ev);
      } catch (e) {
        jlog.warn({ err: errText(e) }, 'could not publish analysis.failed');
      }
    }
    return true;
  }

  // ---------------------------------------------------------------- analysis requests

  async function handleRequest(d: Delivery): Promise<void> {
    if (stopping) {
      await d.nack({ requeue: true });
      return;
    }
    const parsed = AnalysisRequestMessage.safeParse(d.body);
    if (!parsed.success) {
      const problems = toProblems(parsed.error);
      const jobId = jobIdOf(d.body);
      const detail = problems
        .slice(0, 5)
        .map((p) => `${p.path || '/'}: ${p.message}`)
        .join('; ');
      const jlog = jobId ? log.child({ job_id: jobId }) : log;
      jlog.warn({ problems: problems.slice(0, 20) }, 'invalid analysis request: dead-lettered');
      if (jobId) {
        try {
          await failOutsideRun(
            jobId,
            {
              code: ORCHESTRATOR_ERROR_CODES.invalidMessage,
              message: `invalid analysis request: ${detail}`,
            },
            jlog,
          );
        } catch (e) {
          jlog.error({ err: errText(e) }, 'could not fail the job of an invalid request');
        }
      }
      await d.nack({ requeue: false });
      return;
    }
    const msg = parsed.data;
    const jlog = log.child({ job_id: msg.job_id });
    if (d.redelivered) metrics.redeliveries.inc();

    // The configuration current when the job starts; a reload only affects later jobs.
    const snapshot = config.getConfig();
    const wf = snapshot.workflows.get(msg.workflow_id);
    if (!wf) {
      try {
        await failOutsideRun(
          msg.job_id,
          {
            code: ORCHESTRATOR_ERROR_CODES.unknownWorkflow,
            message: `workflow ${msg.workflow_id} is not defined in configuration ${snapshot.version}`,
          },
          jlog,
          msg.origin,
        );
      } catch (e) {
        jlog.error({ err: errText(e) }, 'could not fail a job with an unknown workflow');
        await delay(requeueDelayMs);
        await d.nack({ requeue: true });
        return;
      }
      await d.ack();
      return;
    }

    // One statement marks the job processing and reads its Email back (the message does not carry
    // it; a message of an older gateway may, and then that copy is used).
    let claimed: { email: unknown } | null;
    try {
      claimed = await retryStore('claim the job', jlog, () =>
        store.jobs.claim(msg.job_id, new Date(clock().getTime() + wf.timeoutMs), snapshot.version),
      );
    } catch (e) {
      jlog.error({ err: errText(e) }, 'could not mark the job processing: returned to the queue');
      await delay(requeueDelayMs);
      await d.nack({ requeue: true });
      return;
    }
    if (!claimed) {
      // Already finished (a redelivery after the result was stored) or unknown: not run again.
      // Its event may not have gone out before the crash: publish it again (at least once).
      if (d.redelivered) {
        try {
          const job = await store.jobs.get(msg.job_id);
          const ev = job ? eventFromJob(job, msg.origin) : null;
          if (ev) await publishEvent(ev);
        } catch (e) {
          jlog.warn({ err: errText(e) }, 'could not re-publish the event of a finished job');
        }
      }
      jlog.debug({}, 'job already finished or unknown: skipped');
      await d.ack();
      return;
    }
    // No cache entry to clear: `job:<id>` is only written once the job is finished, and a finished
    // job is never claimed again (ADR 007).

    let email: Email;
    if (msg.email) email = msg.email;
    else {
      const stored = storedEmail(claimed.email);
      if (!stored.ok) {
        try {
          await failOutsideRun(
            msg.job_id,
            {
              code: ORCHESTRATOR_ERROR_CODES.invalidStoredEmail,
              message: `the job's stored Email is not a valid Email: ${stored.detail}`,
            },
            jlog,
            msg.origin,
          );
        } catch (e) {
          jlog.error({ err: errText(e) }, 'could not fail a job whose stored Email is invalid');
          await delay(requeueDelayMs);
          await d.nack({ requeue: true });
          return;
        }
        await d.ack();
        return;
      }
      email = stored.email;
    }

    const ac = new AbortController();
    if (forceCancelled) ac.abort();
    runControllers.add(ac);
    const t0 = performance.now();
    metrics.inFlight.inc();
    let outcome: RunOutcome;
    try {
      outcome = await runWorkflow(
        wf,
        email,
        createEngineDeps({
          invoker,
          config: snapshot,
          email,
          cache: analyzerCache,
          metrics,
        }),
        { signal: ac.signal, configVersion: snapshot.version },
      );
    } catch (e) {
      jlog.error({ err: errText(e), stack: (e as Error).stack }, 'the engine threw');
      outcome = {
        status: 'failed',
        error: { code: ORCHESTRATOR_ERROR_CODES.internal, message: 'internal error while running' },
        trace: { workflow_id: wf.id, config_version: snapshot.version, duration_ms: 0, stages: [] },
        context: {},
      };
    } finally {
      metrics.inFlight.dec();
      runControllers.delete(ac);
    }
    const seconds = (performance.now() - t0) / 1000;

    if (
      forceCancelled &&
      outcome.status === 'failed' &&
      outcome.error.code === WORKFLOW_ERROR_CODES.cancelled
    ) {
      jlog.info({}, 'shutdown: job cancelled and returned to the queue');
      await d.nack({ requeue: true });
      return;
    }

    // The evidence (issue 16): in a completed job's result, and the search terms of the job.
    const withEv = attachEvidence(email, outcome, { authservIds: snapshot.authservIds });
    if (withEv.error !== undefined) {
      jlog.error({ err: errText(withEv.error) }, 'could not build the evidence: stored without it');
    }
    outcome = withEv.outcome;

    // One statement (shared with the jobs finishing in the same event-loop turn) stores the result,
    // records the sender history (it feeds the sender-history context provider) and answers the
    // stored job for the cache and the event.
    let finished: FinishedJob | null;
    try {
      finished = await retryStore('store the result', jlog, () =>
        store.jobs.finish({
          job_id: msg.job_id,
          outcome,
          ...(withEv.terms ? { terms: withEv.terms } : {}),
          sender: store.senders
            ? {
                address: email.headers.sender,
                at: clock(),
                is_phishing: outcome.status === 'completed' ? outcome.result.is_phishing : null,
              }
            : undefined,
        }),
      );
    } catch (e) {
      jlog.error({ err: errText(e) }, 'could not store the result: returned to the queue');
      await delay(requeueDelayMs);
      await d.nack({ requeue: true });
      return;
    }
    if (!finished) {
      // Someone else finished it meanwhile (the reaper, another replica): one stored result only.
      jlog.info({}, 'job finished elsewhere meanwhile: result dropped');
      await d.ack();
      return;
    }
    metrics.jobs.inc({ status: outcome.status });
    metrics.jobDuration.observe({ status: outcome.status }, seconds);
    if (outcome.status === 'completed') {
      metrics.verdicts.inc({
        verdict: outcome.result.is_phishing ? 'phishing' : 'not_phishing',
        threat_level: outcome.result.threat_level,
        workflow: wf.id,
      });
    }
    for (const st of outcome.trace?.stages ?? []) {
      if (st.status === 'skipped' || st.status === 'pending') continue;
      metrics.stageDuration.observe(
        { workflow: wf.id, stage: st.name, status: st.status },
        st.duration_ms / 1000,
      );
    }
    // Best effort: the verdict is stored; a sender that could not be recorded must not requeue it.
    if (finished.senderError !== undefined) {
      jlog.warn({ err: errText(finished.senderError) }, 'could not record the sender history');
    }
    if (outcome.status === 'completed') {
      jlog.info(
        {
          workflow: wf.id,
          ms: Math.round(seconds * 1000),
          is_phishing: outcome.result.is_phishing,
        },
        'job completed',
      );
    } else {
      jlog.warn(
        {
          workflow: wf.id,
          ms: Math.round(seconds * 1000),
          code: outcome.error.code,
          reason: outcome.error.message,
        },
        'job failed',
      );
    }

    await writeJobCache(msg.job_id, finished.job, jlog);
    const ev = eventFromJob(finished.job, msg.origin) as AnalysisEvent; // finished: never null
    try {
      await publishEvent(ev);
    } catch (e) {
      // The result is stored; the redelivered message publishes the event again.
      jlog.warn({ err: errText(e) }, 'could not publish the event: message returned to the queue');
      await d.nack({ requeue: true }).catch(() => undefined);
      return;
    }
    await d.ack();
    // Campaigns (issue 16): a suspicious or reported job joins the campaign whose lure it shares,
    // after the job is settled, one at a time in the background (derived data, best effort).
    if (store.campaigns && outcome.status === 'completed') {
      const campaigns = store.campaigns;
      const result = outcome.result;
      const reported = finished.job.report !== undefined;
      groupLater(() =>
        recordCampaign({ campaigns, sql: store.sql }, msg.job_id, email, result, jlog, reported),
      );
    }
  }

  function track(d: Delivery, fn: (d: Delivery) => Promise<void>): Promise<void> {
    const entry: Running = { done: Promise.resolve() };
    entry.done = fn(d)
      .catch(async (e) => {
        log.error({ err: errText(e) }, 'unexpected error while handling a message');
        await d.nack({ requeue: true }).catch(() => undefined);
      })
      .finally(() => running.delete(entry));
    running.add(entry);
    return entry.done;
  }

  const handleRequestTracked = (d: Delivery) => track(d, handleRequest);

  // ---------------------------------------------------------------- dead letters

  async function handleDead(d: Delivery): Promise<void> {
    const jobId = jobIdOf(d.body);
    if (!jobId) {
      log.warn({ routing_key: d.routingKey }, 'dead letter without a job id dropped');
      await d.ack();
      return;
    }
    const jlog = log.child({ job_id: jobId });
    const reason = deathReason(d.headers);
    const error: JobError =
      reason === 'rejected'
        ? {
            code: ORCHESTRATOR_ERROR_CODES.invalidMessage,
            message: 'the analysis request was rejected as invalid',
          }
        : {
            code: ORCHESTRATOR_ERROR_CODES.deliveryLimit,
            message: `the analysis request was delivered more than ${t.deliveryLimit} times without finishing (the orchestrator crashed or could not store the result each time)`,
          };
    const origin = AnalysisRequestMessage.shape.origin.safeParse(
      (d.body as { origin?: unknown } | null)?.origin,
    );
    try {
      await failOutsideRun(jobId, error, jlog, origin.success ? origin.data : undefined);
    } catch (e) {
      jlog.error({ err: errText(e) }, 'could not fail a dead-lettered job: returned to the queue');
      await delay(requeueDelayMs);
      await d.nack({ requeue: true });
      return;
    }
    await d.ack();
  }

  // ---------------------------------------------------------------- control events

  async function handleControl(d: Delivery): Promise<void> {
    const ev = ConfigReloadedEvent.safeParse(d.body);
    if (!ev.success) {
      log.warn({}, 'invalid control event ignored');
      await d.ack();
      return;
    }
    const current = config.getConfig().version;
    if (ev.data.new_version !== current && config.reload) {
      try {
        await config.reload();
        log.info(
          { old_version: current, new_version: config.getConfig().version },
          'configuration reloaded: jobs starting now use it',
        );
      } catch (e) {
        log.error({ err: errText(e) }, 'configuration reload failed: previous configuration kept');
      }
    }
    await d.ack();
  }

  // ---------------------------------------------------------------- campaigns
  // Grouping a job into its campaign costs a few statements under one lock: done on the job's
  // path it halved the msgs/s of a loaded orchestrator (docs/benchmarks.md). One background chain
  // does it after the job is settled; a full queue, or a crash, leaves a job ungrouped (logged).
  const CAMPAIGN_QUEUE_MAX = 5000;
  const campaignQueue: (() => Promise<void>)[] = [];
  let campaignChain: Promise<void> | undefined;
  function groupLater(task: () => Promise<void>): void {
    if (campaignQueue.length >= CAMPAIGN_QUEUE_MAX) {
      log.warn({ queued: campaignQueue.length }, 'campaign queue full: a job is not grouped');
      return;
    }
    campaignQueue.push(task);
    campaignChain ??= (async () => {
      for (let t = campaignQueue.shift(); t; t = campaignQueue.shift()) {
        await t().catch((e) => log.warn({ err: errText(e) }, 'could not group a job'));
      }
      campaignChain = undefined;
    })();
  }

  // ---------------------------------------------------------------- reaper

  async function reapOnce(): Promise<number> {
    if (reaping) return 0;
    reaping = true;
    let n = 0;
    try {
      const ids = await store.jobs.findStuck(clock(), jobGraceMs, 100);
      for (const id of ids) {
        const jlog = log.child({ job_id: id });
        const ok = await failOutsideRun(
          id,
          {
            code: ORCHESTRATOR_ERROR_CODES.deadline,
            message: `the job stayed processing past its workflow deadline plus ${jobGraceMs} ms`,
          },
          jlog,
        );
        if (ok) n++;
      }
      // A job whose row was stored but whose request message never reached the queue (the gateway
      // stopped between the two) would stay queued for ever: after queuedMaxMs it is failed.
      if (queuedMaxMs > 0) {
        for (const id of await store.jobs.findUndispatched(clock(), queuedMaxMs, 100)) {
          const jlog = log.child({ job_id: id });
          const ok = await failOutsideRun(
            id,
            {
              code: ORCHESTRATOR_ERROR_CODES.notDispatched,
              message: `the job stayed queued for more than ${queuedMaxMs} ms: its request never reached an orchestrator`,
            },
            jlog,
          );
          if (ok) n++;
        }
      }
    } finally {
      reaping = false;
    }
    return n;
  }

  // ---------------------------------------------------------------- http

  const app = Fastify({ logger: false });
  app.get('/health', async (_req, reply) => {
    const up = broker.isConnected();
    const body = {
      status: up && !stopping ? 'ok' : 'degraded',
      service: SERVICE_NAME,
      version: opts.serviceVersion ?? '0.1.0',
      config_version: config.getConfig().version,
      broker: up ? 'connected' : 'disconnected',
      in_flight: running.size,
      stopping,
    };
    return reply.code(up ? 200 : 503).send(body);
  });
  app.get('/metrics', async (_req, reply) => {
    const text = await registry.metrics();
    return reply.header('content-type', registry.contentType).send(text);
  });

  return {
    app,
    metrics,
    registry,
    inFlight: () => running.size,
    async campaignsSettled() {
      while (campaignChain) await campaignChain;
    },
    reapOnce,
    async start(): Promise<void> {
      const controlQueue = `${t.exchanges.control}.orchestrator.${instanceId}`;
      await broker.assertQueue(controlQueue, {
        type: 'classic',
        durable: false,
        exclusive: true,
        autoDelete: true,
      });
      await broker.bindQueue(controlQueue, t.exchanges.control, t.routingKeys.configReloaded);
      consumers.push(await broker.consume(controlQueue, handleControl, { prefetch: 1 }));
      consumers.push(
        await broker.consume(
          t.queues.analysisDead,
          expandDeadBatches((d) => track(d, handleDead)),
          { prefetch: 4 },
        ),
      );
      // A message may hold the jobs of one gateway group commit (ADR 008): one delivery per job here.
      const requests = expandJobBatches(handleRequestTracked, {
        requeue: (job) =>
          broker.publish(t.exchanges.analysis, t.routingKeys.analysisRequested, job, {
            persistent: true,
          }),
        reject: (job) =>
          broker.publish(t.exchanges.deadLetter, t.routingKeys.deadLetter, job, {
            persistent: true,
            // what RabbitMQ itself writes on a rejected message: handleDead reads it the same way
            headers: { 'x-first-death-reason': 'rejected' },
          }),
        maxInFlight: prefetch,
      });
      consumers.push(await broker.consume(t.queues.analysisRequests, requests, { prefetch }));
      if (reaperIntervalMs > 0) {
        reaper = setInterval(() => {
          reapOnce().catch((e) => log.error({ err: errText(e) }, 'reaper failed'));
          deps.retention?.tick();
        }, reaperIntervalMs);
        reaper.unref();
      }
      log.info({ prefetch, instance: instanceId }, 'orchestrator consuming');
    },
    async stop(graceMs = 10_000): Promise<void> {
      if (stopping) return;
      stopping = true;
      if (reaper) clearInterval(reaper);
      const retentionStopped = deps.retention?.stop();
      // Not awaited first: an adapter's cancel() may wait for the handlers in flight.
      const cancels = Promise.allSettled(consumers.map((c) => c.cancel()));
      consumers.length = 0;
      const all = () => Promise.allSettled([...running].map((r) => r.done));
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timedOut = await Promise.race([
        all().then(() => false),
        new Promise<boolean>((r) => {
          timer = setTimeout(() => r(true), graceMs);
        }),
      ]);
      clearTimeout(timer);
      if (timedOut && running.size > 0) {
        log.warn({ in_flight: running.size }, 'grace period over: cancelling running jobs');
        forceCancelled = true;
        for (const ac of runControllers) ac.abort();
        stopAc.abort();
        await all();
      }
      await cancels;
      await retentionStopped;
      // the jobs waiting to be grouped, within what is left of the grace period
      if (campaignChain) {
        let t: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([campaignChain, new Promise((r) => (t = setTimeout(r, graceMs)))]);
        clearTimeout(t);
      }
      stopAc.abort();
      log.info({}, 'orchestrator stopped');
    },
  };
}
