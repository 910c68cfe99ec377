import {
  AnalysisEvent,
  type AnalysisRequestMessage,
  errorText,
  type Job,
  type JobError,
  type Topology,
} from '@trawl/contracts';
import { type Broker, type Cache, type Delivery, type Store, storableJson } from '@trawl/platform';
import type { Logger } from 'pino';
import type { OrchestratorMetrics } from './metrics.ts';

/** Where the request came from (mail retrievers), carried into the job's event. */
type RequestOrigin = AnalysisRequestMessage['origin'];

export interface SettlementDeps {
  broker: Broker;
  store: Pick<Store, 'jobs'>;
  cache?: Cache | undefined;
  topology: Topology;
  metrics: OrchestratorMetrics;
  clock: () => Date;
  /** TTL of the `job:<id>` cache entries. */
  jobCacheTtlSeconds: number;
  /** Pause before a message goes back to the queue after a store failure. */
  requeueDelayMs: number;
  /** A pause that stop() cuts short (stop-delay.ts). */
  delay: (ms: number) => Promise<void>;
}

/**
 * How a job ends and its message is settled: the finished job goes to the status cache and out as
 * an event, then the delivery is acked; a store that fails sends the message back to the queue
 * after a pause (the redelivery tries again).
 */
export interface Settlement {
  /** Writes a finished job to the status cache (`job:<id>`) that GET /analyze/{id} reads first. */
  writeJobCache(jobId: string, job: Job, jlog: Logger): Promise<void>;
  publishEvent(e: AnalysisEvent): Promise<void>;
  /** The event of a finished job (null while it is not finished). */
  eventFromJob(job: Job, origin?: RequestOrigin): AnalysisEvent | null;
  /**
   * Fails a job outside a run (invalid message, unknown workflow, dead letter, reaper): answers
   * false when the job was already finished.
   */
  failOutsideRun(
    jobId: string,
    error: JobError,
    jlog: Logger,
    origin?: RequestOrigin,
  ): Promise<boolean>;
  /** Logs `why` (an error), waits requeueDelayMs, then returns the message to the queue. */
  requeueLater(d: Delivery, jlog: Logger, e: unknown, why: string): Promise<void>;
  /**
   * Fails the job outside a run and acks its message; when the job could not be failed (the store
   * is down), logs `whyNot` and returns the message to the queue after a pause instead.
   */
  failAndAck(
    d: Delivery,
    jobId: string,
    error: JobError,
    jlog: Logger,
    whyNot: string,
    origin?: RequestOrigin,
  ): Promise<void>;
  /**
   * Settles the message of a job a run finished (stored): the cache, the event, then the ack. An
   * event that cannot be published returns the message to the queue (its redelivery publishes it
   * again): answers whether the message was acked.
   */
  settleFinished(
    d: Delivery,
    jobId: string,
    job: Job,
    jlog: Logger,
    origin?: RequestOrigin,
  ): Promise<boolean>;
}

function withoutEvidence(r: NonNullable<Job['result']>): NonNullable<Job['result']> {
  if (r.evidence === undefined) return r;
  const { evidence: _evidence, ...rest } = r;
  return rest;
}

/**
 * The cached copy of a finished job: its evidence, several KiB a job, is written once, to the
 * job's row (issue 29); the copy says so (`evidence_stored`), and a read of the job that needs it
 * goes to the store (the gateway's GET /analyze/{id}). Status polls still read the cache.
 */
function cachedJobText(job: Job): string {
  if (job.result?.evidence === undefined) return JSON.stringify(job);
  return JSON.stringify({ ...job, result: withoutEvidence(job.result), evidence_stored: true });
}

/** How a job ends and its message is settled (the Settlement described above). */
export function createSettlement(deps: SettlementDeps): Settlement {
  const { broker, store, cache, topology: t, metrics, clock } = deps;

  async function writeJobCache(jobId: string, job: Job, jlog: Logger): Promise<void> {
    if (!cache) return;
    try {
      // the copy reads as the store's does: U+0000 as the text `\u0000` (ADR 014)
      const text = storableJson(cachedJobText(job));
      await cache.set(`job:${jobId}`, text, deps.jobCacheTtlSeconds);
    } catch (e) {
      jlog.warn({ err: errorText(e) }, 'could not write the job to the cache');
      await cache.del(`job:${jobId}`).catch(() => undefined);
    }
  }

  async function publishEvent(e: AnalysisEvent): Promise<void> {
    await broker.publish(t.exchanges.results, e.event, AnalysisEvent.parse(e), {
      messageId: `${e.job_id}:${e.event}`,
      contentType: 'application/json',
      persistent: true,
    });
  }

  function eventFromJob(job: Job, origin?: RequestOrigin): AnalysisEvent | null {
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

  async function failOutsideRun(
    jobId: string,
    error: JobError,
    jlog: Logger,
    origin?: RequestOrigin,
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
        jlog.warn({ err: errorText(e) }, 'could not publish analysis.failed');
      }
    }
    return true;
  }

  async function requeueLater(d: Delivery, jlog: Logger, e: unknown, why: string): Promise<void> {
    jlog.error({ err: errorText(e) }, why);
    await deps.delay(deps.requeueDelayMs);
    await d.nack({ requeue: true });
  }

  return {
    writeJobCache,
    publishEvent,
    eventFromJob,
    failOutsideRun,
    requeueLater,
    async failAndAck(d, jobId, error, jlog, whyNot, origin) {
      try {
        await failOutsideRun(jobId, error, jlog, origin);
      } catch (e) {
        await requeueLater(d, jlog, e, whyNot);
        return;
      }
      await d.ack();
    },
    async settleFinished(d, jobId, job, jlog, origin) {
      await writeJobCache(jobId, job, jlog);
      const ev = eventFromJob(job, origin) as AnalysisEvent; // finished: never null
      try {
        await publishEvent(ev);
      } catch (e) {
        // The result is stored; the redelivered message publishes the event again.
        jlog.warn(
          { err: errorText(e) },
          'could not publish the event: message returned to the queue',
        );
        await d.nack({ requeue: true }).catch(() => undefined);
        return false;
      }
      await d.ack();
      return true;
    },
  };
}
