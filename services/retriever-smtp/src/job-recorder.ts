import {
  type CampaignQueue,
  createCampaignQueue,
  createMetrics,
  createSettlement,
  delayUntilAborted,
  type OrchestratorMetrics,
  type Settlement,
} from '@trawl/analyzer-orchestrator';
import {
  type AnalysisResult,
  type BackoffPolicy,
  backoffDelay,
  type Email,
  errorText,
  type Job,
  type Topology,
} from '@trawl/contracts';
import type { Broker, Cache, FinishedJob, JobFinish, NewJob, Store } from '@trawl/platform';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';

/** A job analysed before it was stored (ADR 013 section 5): its row, its result, its Email. */
export interface JobRecord {
  job: NewJob & { email: Email };
  finish: JobFinish;
}

export interface JobRecorderOptions {
  /** Records waiting (and reserved) at most; past it `reserve()` says no. */
  maxQueued: number;
  /** Records written by one round (one statement inserting them finished). */
  maxBatch: number;
  /**
   * How long a round that is not full waits for more records before it is written (ms; default 0:
   * the next turn of the event loop). The answer went already: a short wait lets a milter at tens
   * of messages a second write several records per statement instead of one.
   */
  lingerMs?: number;
  /** The pause after a round that failed, by consecutive failed rounds. */
  backoff: BackoffPolicy;
}

export interface JobRecorderDeps {
  store: {
    jobs: {
      createFinished(j: NewJob, f: JobFinish): Promise<FinishedJob | null>;
      get(id: string): Promise<Job | null>;
    };
  };
  /** The orchestrator's own finishing: the job's cache entry and its event. */
  settlement: Pick<Settlement, 'writeJobCache' | 'eventFromJob' | 'publishEvent'>;
  campaigns: CampaignQueue;
  metrics: Pick<OrchestratorMetrics, 'jobs' | 'verdicts'>;
  log: Logger;
  /** A pause that `stop()` cuts short (stop-delay.ts). */
  delay: (ms: number) => Promise<void>;
  /** Cuts the pauses of `delay` short (at the end of close()'s grace period). */
  stop: () => void;
}

/**
 * The bounded queue of jobs analysed before they were stored (ADR 013 section 5): a caller reserves
 * a place before it analyses (`reserve()` false: answer "try again later", nothing is lost), then
 * hands the record over. In the background, rounds of up to `maxBatch` records are written by the
 * store's own group commit (`jobs.createFinished`: one statement inserting the queued jobs finished,
 * with the same rows, terms, sender history and webhook events as a job the orchestrator
 * finishes; no job is ever `queued` without a request message), then each is
 * settled as the orchestrator settles a job (its cache entry, its `analysis.completed|failed`
 * event) and queued for campaign grouping. A round that fails is retried with the shared backoff
 * (each record from the step it reached: a row written is not inserted again); `close()` stops the
 * reservations and flushes what is queued.
 */
export function createJobRecorder(deps: JobRecorderDeps, o: JobRecorderOptions) {
  const { store, settlement, log } = deps;
  type Entry = JobRecord & { step: 'write' | 'settle'; stored?: Job };
  const queue: Entry[] = [];
  let reserved = 0;
  let closing = false;
  let pumping: Promise<void> | undefined;
  let failedRounds = 0;
  /** close()'s grace period is over: no more rounds. */
  let gaveUp = false;
  const lingerMs = Math.max(0, o.lingerMs ?? 0);
  /** Ends the current round's wait for more records at once (set while it waits). */
  let wake: (() => void) | undefined;

  /** The wait before a round: a turn of the event loop, or up to lingerMs for a round not full. */
  function linger(): Promise<void> {
    if (lingerMs === 0 || closing || queue.length >= o.maxBatch) {
      return new Promise((r) => setImmediate(r));
    }
    return new Promise((r) => {
      const t = setTimeout(done, lingerMs);
      function done() {
        clearTimeout(t);
        wake = undefined;
        r();
      }
      wake = done;
    });
  }

  /** One record's next step; true once it is done. */
  async function advance(e: Entry): Promise<boolean> {
    if (e.step === 'write') {
      const finished = await store.jobs.createFinished(e.job, e.finish);
      // null: written by an attempt whose answer was lost; its event is sent from the row
      const stored = finished ? finished.job : await store.jobs.get(e.job.job_id);
      if (!stored) throw new Error(`job ${e.job.job_id} not found after its insert`);
      e.stored = stored;
      e.step = 'settle';
      if (finished) countFinished(e.finish);
      if (finished?.senderError !== undefined) {
        log.warn(
          { job_id: e.job.job_id, err: errorText(finished.senderError) },
          'could not record the sender history',
        );
      }
    }
    const job = e.stored as Job;
    const jlog = log.child({ job_id: job.job_id });
    await settlement.writeJobCache(job.job_id, job, jlog);
    const ev = settlement.eventFromJob(job);
    if (ev) await settlement.publishEvent(ev);
    if (job.status === 'completed' && job.result) {
      deps.campaigns.recordLater(
        job.job_id,
        e.job.email,
        job.result as AnalysisResult,
        jlog,
        false,
      );
    }
    return true;
  }

  function countFinished(f: JobFinish): void {
    deps.metrics.jobs.inc({ status: f.outcome.status });
    if (f.outcome.status === 'completed') {
      deps.metrics.verdicts.inc({
        verdict: f.outcome.result.is_phishing ? 'phishing' : 'not_phishing',
        threat_level: f.outcome.result.threat_level,
        workflow: f.outcome.trace.workflow_id,
      });
    }
  }

  async function round(): Promise<void> {
    const batch = queue.slice(0, o.maxBatch);
    // the calls of one turn share one statement per step (the store's group commits)
    const results = await Promise.allSettled(batch.map(advance));
    let failed: unknown;
    results.forEach((r, i) => {
      if (r.status === 'fulfilled') {
        const at = queue.indexOf(batch[i] as Entry);
        if (at >= 0) queue.splice(at, 1);
      } else failed ??= r.reason;
    });
    if (failed === undefined) {
      failedRounds = 0;
      return;
    }
    failedRounds++;
    const wait = backoffDelay(failedRounds, o.backoff);
    if (failedRounds === 1 || failedRounds % 20 === 0) {
      log.warn(
        { err: errorText(failed), queued: queue.length, retry_ms: wait },
        'analysed jobs not recorded yet: retrying',
      );
    }
    await deps.delay(wait);
  }

  function pump(): void {
    pumping ??= (async () => {
      // the records handed over meanwhile join the round
      while (queue.length > 0 && !gaveUp) {
        await linger();
        if (!gaveUp) await round();
      }
    })().finally(() => {
      pumping = undefined;
    });
  }

  return {
    /** A place in the queue for a message about to be analysed; false when full or closing. */
    reserve(): boolean {
      if (closing || queue.length + reserved >= o.maxQueued) return false;
      reserved++;
      return true;
    },
    /** Gives a reserved place back (the message was not analysed). */
    release(): void {
      reserved = Math.max(0, reserved - 1);
    },
    /** Queues a record in its reserved place; it is written in the background. */
    record(r: JobRecord): void {
      reserved = Math.max(0, reserved - 1);
      queue.push({ ...r, step: 'write' });
      if (queue.length >= o.maxBatch) wake?.();
      pump();
    },
    /** Records queued and places reserved. */
    size: () => queue.length + reserved,
    /** Resolves once the queue is empty (tests, benches). */
    async settled(): Promise<void> {
      while (pumping || queue.length > 0) await (pumping ?? Promise.resolve());
    },
    /**
     * Stops the reservations and writes what is queued, retrying for at most `graceMs`; what is left
     * then is logged as lost (the store was down for the whole grace period).
     */
    async close(graceMs: number): Promise<void> {
      closing = true;
      wake?.();
      const deadline = Date.now() + graceMs;
      while (queue.length > 0 && Date.now() < deadline) {
        if (!pumping) pump();
        await new Promise((r) => setTimeout(r, Math.max(1, Math.min(50, deadline - Date.now()))));
      }
      gaveUp = true;
      deps.stop();
      await pumping;
      if (queue.length > 0) {
        log.error(
          { lost: queue.length, jobs: queue.slice(0, 20).map((e) => e.job.job_id) },
          'analysed jobs not recorded at close: the store stayed unavailable',
        );
      }
      await deps.campaigns.drain(Math.max(0, deadline - Date.now()));
    },
  };
}

export type JobRecorder = ReturnType<typeof createJobRecorder>;

/** What the record queue of an inline analysis writes through. */
export interface JobRecordingPorts {
  store: Store;
  broker: Broker;
  topology: Topology;
  /** The job's status copy (none in the milter: ADR 024). */
  cache?: Cache | undefined;
  clock: () => Date;
  log: Logger;
  /** The orchestrator's job and verdict counters (on a registry of their own when absent). */
  metrics?: OrchestratorMetrics | undefined;
}

/**
 * The record queue of an inline analysis (createJobRecorder) over the orchestrator's own finishing:
 * its settlement (only the finishing part: no delivery is ever requeued here) and its background
 * campaign grouping. Its pauses between failed rounds end when close()'s grace period does.
 */
export function startJobRecording(ports: JobRecordingPorts, o: JobRecorderOptions): JobRecorder {
  const { store, log } = ports;
  const metrics = ports.metrics ?? createMetrics(new Registry());
  const stopAc = new AbortController();
  const settlement = createSettlement({
    clock: ports.clock,
    metrics,
    broker: ports.broker,
    topology: ports.topology,
    store,
    cache: ports.cache,
    jobCacheTtlSeconds: 3600,
    requeueDelayMs: 0,
    delay: async () => undefined,
  });
  return createJobRecorder(
    {
      store,
      settlement,
      campaigns: createCampaignQueue({ store, log }),
      metrics,
      log,
      delay: delayUntilAborted(stopAc.signal),
      stop: () => stopAc.abort(),
    },
    o,
  );
}
