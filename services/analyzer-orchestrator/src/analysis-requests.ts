import {
  AnalysisRequestMessage,
  type BackoffPolicy,
  backoffDelay,
  type Email,
  errorText,
  toProblems,
} from '@trawl/contracts';
import type { Delivery, FinishedJob, Store } from '@trawl/platform';
import type { ConfigSource } from '@trawl/workflow-engine';
import { type RunOutcome, WORKFLOW_ERROR_CODES } from '@trawl/workflow-engine';
import type { Logger } from 'pino';
import type { CampaignQueue } from './campaign-queue.ts';
import { ORCHESTRATOR_ERROR_CODES } from './errors.ts';
import { jobIdOf, storedEmail } from './job-message.ts';
import type { OrchestratorMetrics } from './metrics.ts';
import { type JobRunDeps, jobFinishOf, runJob, withJobEvidence } from './run-job.ts';
import type { Settlement } from './settlement.ts';

/** The pauses between store writes retried in-process: 100 ms doubling up to 2 s. */
const STORE_RETRY_BACKOFF: BackoffPolicy = { initialMs: 100, maxMs: 2000 };

/** What stop() changes while requests are handled (read on each request). */
interface RequestRunState {
  /** stop() has begun: a request that arrives goes back to the queue. */
  readonly stopping: boolean;
  /** stop()'s grace period is over: the runs are cancelled and their messages returned. */
  readonly forceCancelled: boolean;
  /** The abort controllers of the runs in progress, so that stop() can cancel them. */
  readonly runControllers: Set<AbortController>;
}

export interface AnalysisRequestDeps {
  store: Pick<Store, 'jobs'> & Partial<Pick<Store, 'senders'>>;
  config: ConfigSource;
  /** The invoker, the analyzer cache and the metrics a run calls. */
  run: JobRunDeps;
  metrics: OrchestratorMetrics;
  settlement: Settlement;
  campaigns: CampaignQueue;
  state: RequestRunState;
  log: Logger;
  clock: () => Date;
  /** A pause that stop() cuts short (stop-delay.ts). */
  delay: (ms: number) => Promise<void>;
  /** How long a store write of a running job is retried in-process before the message is requeued. */
  storeRetryMs: number;
}

/**
 * The handler of one analysis request: claims the job (reading its Email back), runs its workflow
 * on the configuration current when it starts, attaches the evidence, stores the result with the
 * sender history, then settles the message (cache, event, ack) and queues the job for campaign
 * grouping. A message that cannot be handled now goes back to the queue; one that never can fails
 * its job.
 */
export function createRequestHandler(deps: AnalysisRequestDeps): (d: Delivery) => Promise<void> {
  const { store, config, metrics, settlement, campaigns, state, log, clock, delay } = deps;

  /**
   * Runs a store operation, retrying with capped exponential backoff while the store is down, for up
   * to storeRetryMs and never past stop(). Throws the last error when it gives up.
   */
  async function retryStore<T>(what: string, jlog: Logger, fn: () => Promise<T>): Promise<T> {
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (e) {
        const wait = backoffDelay(attempt, STORE_RETRY_BACKOFF);
        if (state.stopping || Date.now() - started + wait > deps.storeRetryMs) throw e;
        if (attempt === 1)
          jlog.warn({ err: errorText(e) }, `store unavailable (${what}): retrying`);
        await delay(wait);
      }
    }
  }

  return async function handleRequest(d: Delivery): Promise<void> {
    if (state.stopping) {
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
          await settlement.failOutsideRun(
            jobId,
            {
              code: ORCHESTRATOR_ERROR_CODES.invalidMessage,
              message: `invalid analysis request: ${detail}`,
            },
            jlog,
          );
        } catch (e) {
          jlog.error({ err: errorText(e) }, 'could not fail the job of an invalid request');
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
      await settlement.failAndAck(
        d,
        msg.job_id,
        {
          code: ORCHESTRATOR_ERROR_CODES.unknownWorkflow,
          message: `workflow ${msg.workflow_id} is not defined in configuration ${snapshot.version}`,
        },
        jlog,
        'could not fail a job with an unknown workflow',
        msg.origin,
      );
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
      await settlement.requeueLater(
        d,
        jlog,
        e,
        'could not mark the job processing: returned to the queue',
      );
      return;
    }
    if (!claimed) {
      // Already finished (a redelivery after the result was stored) or unknown: not run again.
      // Its event may not have gone out before the crash: publish it again (at least once). Not
      // only when the broker says `redelivered`: a redelivered batch comes back split into fresh
      // single messages, and a job whose event could not be published is requeued as one.
      try {
        const job = await store.jobs.get(msg.job_id);
        const ev = job ? settlement.eventFromJob(job, msg.origin) : null;
        if (ev) await settlement.publishEvent(ev);
      } catch (e) {
        jlog.warn({ err: errorText(e) }, 'could not re-publish the event of a finished job');
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
        await settlement.failAndAck(
          d,
          msg.job_id,
          {
            code: ORCHESTRATOR_ERROR_CODES.invalidStoredEmail,
            message: `the job's stored Email is not a valid Email: ${stored.detail}`,
          },
          jlog,
          'could not fail a job whose stored Email is invalid',
          msg.origin,
        );
        return;
      }
      email = stored.email;
    }

    const ac = new AbortController();
    if (state.forceCancelled) ac.abort();
    state.runControllers.add(ac);
    const t0 = performance.now();
    metrics.inFlight.inc();
    let outcome: RunOutcome;
    try {
      outcome = await runJob(deps.run, snapshot, wf, email, ac.signal);
    } catch (e) {
      jlog.error({ err: errorText(e), stack: (e as Error).stack }, 'the engine threw');
      outcome = {
        status: 'failed',
        error: { code: ORCHESTRATOR_ERROR_CODES.internal, message: 'internal error while running' },
        trace: { workflow_id: wf.id, config_version: snapshot.version, duration_ms: 0, stages: [] },
        context: {},
      };
    } finally {
      metrics.inFlight.dec();
      state.runControllers.delete(ac);
    }
    const seconds = (performance.now() - t0) / 1000;

    if (
      state.forceCancelled &&
      outcome.status === 'failed' &&
      outcome.error.code === WORKFLOW_ERROR_CODES.cancelled
    ) {
      jlog.info({}, 'shutdown: job cancelled and returned to the queue');
      await d.nack({ requeue: true });
      return;
    }

    // The evidence (issue 16): in a completed job's result, and the search terms of the job.
    const withEv = withJobEvidence(email, outcome, snapshot);
    if (withEv.error !== undefined) {
      jlog.error(
        { err: errorText(withEv.error) },
        'could not build the evidence: stored without it',
      );
    }
    outcome = withEv.outcome;

    // One statement (shared with the jobs finishing in the same event-loop turn) stores the result,
    // records the sender history (it feeds the sender-history context provider) and answers the
    // stored job for the cache and the event.
    let finished: FinishedJob | null;
    try {
      finished = await retryStore('store the result', jlog, () =>
        store.jobs.finish(
          jobFinishOf(
            msg.job_id,
            email,
            { outcome, terms: withEv.terms },
            !!store.senders,
            clock(),
          ),
        ),
      );
    } catch (e) {
      await settlement.requeueLater(
        d,
        jlog,
        e,
        'could not store the result: returned to the queue',
      );
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
      jlog.warn({ err: errorText(finished.senderError) }, 'could not record the sender history');
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

    if (!(await settlement.settleFinished(d, msg.job_id, finished.job, jlog, msg.origin))) return;
    // Campaigns (issue 16): a suspicious or reported job joins the campaign whose lure it shares,
    // after the job is settled, in the background (campaign-queue.ts).
    if (outcome.status === 'completed') {
      campaigns.recordLater(
        msg.job_id,
        email,
        outcome.result,
        jlog,
        finished.job.report !== undefined,
      );
    }
  };
}
