import { randomUUID } from 'node:crypto';
import type { Topology } from '@trawl/contracts';
import { errorText } from '@trawl/contracts';
import type { Retention } from '@trawl/investigation';
import {
  type Broker,
  type Cache,
  type Consumer,
  type Delivery,
  expandDeadBatches,
  expandJobBatches,
  refuseUnknownRoute,
  type Store,
  serviceChild,
  watchListChanges,
} from '@trawl/platform';
import type { PluginInvoker } from '@trawl/plugin-client';
import type { ConfigSource } from '@trawl/workflow-engine';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { createRequestHandler } from './analysis-requests.ts';
import { createAnalyzerCache } from './analyzer-cache.ts';
import { createCampaignQueue } from './campaign-queue.ts';
import { consumeControlEvents } from './control-events.ts';
import { createDeadLetterHandler } from './dead-letters.ts';
import { createMetrics, type OrchestratorMetrics } from './metrics.ts';
import { createReaper } from './reaper.ts';
import { createSettlement } from './settlement.ts';
import { delayUntilAborted } from './stop-delay.ts';

/*
 * The analyzer orchestrator, composed of one module per concern:
 *   analysis-requests.ts  one request: claim, run (run-job.ts), evidence, store, settle
 *   settlement.ts         how a job ends and its message is settled (fail / requeue / ack, events)
 *   dead-letters.ts       the dead-letter queue: fails the job of a rejected or undeliverable request
 *   control-events.ts     config.reloaded events: reloads the configuration
 *   campaign-queue.ts     groups finished jobs into campaigns in the background
 *   reaper.ts             fails stuck or never-dispatched jobs; ticks the retention purge
 * This file wires them, tracks the messages in flight, and starts and stops them in order.
 */

const SERVICE_NAME = 'analyzer-orchestrator';

interface OrchestratorOptions {
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

/** What the orchestrator is built from: broker, store, cache, invoker, configuration, logger. */
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
  /**
   * The allow and block lists the in-process `lists` analyzer holds (issue 32): read again on
   * every `lists.changed` control event.
   */
  lists?: { reload(): Promise<void> } | undefined;
}

/** The analyzer orchestrator: consumes jobs, runs their workflows, writes the results. */
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

interface Running {
  done: Promise<void>;
}

/** Builds the orchestrator from its dependencies (it does not start consuming). */
export function buildOrchestrator(deps: OrchestratorDeps): Orchestrator {
  const { broker, store, cache, invoker, config, topology: t } = deps;
  const opts = deps.options ?? {};
  const prefetch = opts.prefetch ?? 16;
  const instanceId = opts.instanceId ?? randomUUID().slice(0, 8);
  const clock = deps.clock ?? (() => new Date());
  const registry = deps.registry ?? new Registry();
  const metrics = createMetrics(registry, {
    broker,
    queues: [t.queues.analysisRequests, t.queues.analysisDead, t.queues.mailVerdicts],
  });
  const log = serviceChild(deps.logger, SERVICE_NAME);

  /** What stop() changes; the request handler reads it on each request. */
  const state = {
    stopping: false,
    forceCancelled: false,
    runControllers: new Set<AbortController>(),
  };
  const running = new Set<Running>();
  const consumers: Consumer[] = [];
  const stopAc = new AbortController();
  const delay = delayUntilAborted(stopAc.signal);

  const settlement = createSettlement({
    broker,
    store,
    cache,
    topology: t,
    metrics,
    clock,
    jobCacheTtlSeconds: opts.jobCacheTtlSeconds ?? 3600,
    requeueDelayMs: opts.requeueDelayMs ?? 500,
    delay,
  });
  const campaigns = createCampaignQueue({ store, log });
  const handleRequest = createRequestHandler({
    store,
    config,
    run: { invoker, cache: cache ? createAnalyzerCache(cache) : undefined, metrics },
    metrics,
    settlement,
    campaigns,
    state,
    log,
    clock,
    delay,
    storeRetryMs: opts.storeRetryMs ?? 30_000,
  });
  const handleDead = createDeadLetterHandler({ topology: t, settlement, log });
  const reaper = createReaper({
    store,
    settlement,
    log,
    clock,
    intervalMs: opts.reaperIntervalMs ?? 30_000,
    jobGraceMs: opts.jobGraceMs ?? 30_000,
    queuedMaxMs: opts.queuedMaxMs ?? 0,
    retention: deps.retention,
  });

  /** Runs a handler and remembers it until it ends, so that stop() can wait for it. */
  function track(d: Delivery, fn: (d: Delivery) => Promise<void>): Promise<void> {
    const entry: Running = { done: Promise.resolve() };
    entry.done = fn(d)
      .catch(async (e) => {
        log.error({ err: errorText(e) }, 'unexpected error while handling a message');
        await d.nack({ requeue: true }).catch(() => undefined);
      })
      .finally(() => running.delete(entry));
    running.add(entry);
    return entry.done;
  }

  const handleRequestTracked = (d: Delivery) => track(d, handleRequest);

  // ---------------------------------------------------------------- http

  // only /health and /metrics: no body is ever read (a request for no route: 404 before it)
  const app = Fastify({ logger: false, bodyLimit: 1024 });
  app.addHook('onRequest', refuseUnknownRoute);
  app.get('/health', async (_req, reply) => {
    const up = broker.isConnected();
    const body = {
      status: up && !state.stopping ? 'ok' : 'degraded',
      service: SERVICE_NAME,
      version: opts.serviceVersion ?? '0.1.0',
      config_version: config.getConfig().version,
      broker: up ? 'connected' : 'disconnected',
      in_flight: running.size,
      stopping: state.stopping,
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
    campaignsSettled: () => campaigns.settled(),
    reapOnce: () => reaper.reapOnce(),
    async start(): Promise<void> {
      consumers.push(await consumeControlEvents({ broker, topology: t, config, log, instanceId }));
      const lists = deps.lists;
      if (lists) {
        consumers.push(
          await watchListChanges(broker, t, `orchestrator.${instanceId}`, () =>
            lists.reload().then(
              () => log.info({}, 'allow and block lists read again'),
              (err: unknown) => log.warn({ err: errorText(err) }, 'lists could not be read again'),
            ),
          ),
        );
      }
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
            // what RabbitMQ itself writes on a rejected message: the dead-letter handler reads it
            headers: { 'x-first-death-reason': 'rejected' },
          }),
        maxInFlight: prefetch,
      });
      consumers.push(await broker.consume(t.queues.analysisRequests, requests, { prefetch }));
      reaper.start();
      log.info({ prefetch, instance: instanceId }, 'orchestrator consuming');
    },
    async stop(graceMs = 10_000): Promise<void> {
      if (state.stopping) return;
      state.stopping = true;
      const retentionStopped = reaper.stop();
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
        state.forceCancelled = true;
        for (const ac of state.runControllers) ac.abort();
        stopAc.abort();
        await all();
      }
      await cancels;
      await retentionStopped;
      // the jobs waiting to be grouped, within what is left of the grace period
      await campaigns.drain(graceMs);
      stopAc.abort();
      log.info({}, 'orchestrator stopped');
    },
  };
}
