import { randomUUID } from 'node:crypto';
import {
  consumeControlEvents,
  createMetrics,
  jobFinishOf,
  ORCHESTRATOR_ERROR_CODES,
  type OrchestratorSettings,
  orchestratorSettings,
  runJob,
  startAnalysis,
  withJobEvidence,
} from '@trawl/analyzer-orchestrator';
import type { AppConfig } from '@trawl/config';
import { type Email, type EmailLimits, errorText } from '@trawl/contracts';
import { emailId } from '@trawl/mail';
import {
  type Assembled,
  assemble,
  type Cache,
  type StoreServicePorts,
  watchListChanges,
} from '@trawl/platform';
import { WorkerPoolError } from '@trawl/platform/worker-pool';
import type { RunOutcome } from '@trawl/workflow-engine';
import { Gauge, Registry } from 'prom-client';
import { type JobRecorder, startJobRecording } from './job-recorder.ts';
import { createParseWork, DEFAULT_PARSE_WORK } from './parse-work/parse-pool.ts';

/**
 * What the inline analysis is given (ADR 013 section 5): the database (jobs written, senders,
 * classifier and lists read), the broker (events published on `trawl.results`, its own control
 * queue consumed) and, optionally, the cache (the job's status copy, the analyzer result cache).
 */
export interface InlineAnalysisPorts extends Omit<StoreServicePorts, 'cache'> {
  cache?: Cache | undefined;
  registry?: Registry;
}

/** Everything the inline analysis is assembled with: compiled once by inlineAnalysisSettings. */
export interface InlineAnalysisSettings {
  /** The orchestrator's own: configuration files and analysis pool, the same defaults. */
  orchestrator: Pick<OrchestratorSettings, 'files' | 'analysis' | 'consumer'>;
  /** What a raw message may hold (the gateway's limits for POST /analyze/raw). */
  limits: EmailLimits & { rawMessageBytes: number };
  record: {
    /** TRAWL_MILTER_RECORD_QUEUE: analysed jobs waiting to be written at most. */
    maxQueued: number;
    maxBatch: number;
    /** How long a round that is not full waits for more records (job-recorder.ts). */
    lingerMs: number;
    /** How long close() keeps writing what is queued. */
    closeGraceMs: number;
  };
}

export function inlineAnalysisSettings(
  cfg: AppConfig,
  o: { version: string },
): InlineAnalysisSettings {
  const s = orchestratorSettings(cfg, { version: o.version, listen: false });
  return {
    orchestrator: { files: s.files, analysis: s.analysis, consumer: s.consumer },
    limits: {
      maxAttachments: cfg.limits.attachments,
      maxRecipients: cfg.limits.recipients,
      maxSubjectChars: cfg.limits.subjectChars,
      maxAttachmentBytes: cfg.limits.rawMessageBytes,
      rawMessageBytes: cfg.limits.rawMessageBytes,
    },
    record: {
      maxQueued: cfg.milter.recordQueue,
      maxBatch: 64,
      lingerMs: 50,
      closeGraceMs: s.consumer.shutdownGraceMs,
    },
  };
}

/** What an inline analysis of one message came to. */
export type InlineVerdict =
  /** Analysed (completed, or failed as the orchestrator fails a job); its record is queued. */
  | { kind: 'analysed'; jobId: string; outcome: RunOutcome }
  /** The message cannot become an Email (as the gateway refuses it): no job. */
  | { kind: 'refused'; detail: string }
  /** Not analysed now (the record queue is full, or stopping): try again later. */
  | { kind: 'unavailable'; reason: string };

export interface InlineSubmission {
  raw: Buffer;
  /** Envelope recipients (the Email's recipients when its header names none). */
  envelopeTo: string[];
  /** The job's origin: the retriever's name and the message's id (sha256 of its bytes). */
  origin: { retriever: string; message_id: string };
}

export interface RunningInlineAnalysis {
  /** Analyses one message now and queues its record; resolves with the outcome. */
  analyse(m: InlineSubmission): Promise<InlineVerdict>;
  recorder: Pick<JobRecorder, 'size' | 'settled'>;
  describe(): {
    analysis: { workers: number; pooledMinChars: number; defaultTimeoutMs: number };
    record: InlineAnalysisSettings['record'];
    stopOrder: string[];
  };
}

/**
 * The orchestrator's analysis in another service's process (ADR 013 section 5: the milter's
 * "verdict first, record after"): the same configuration, invoker and analysis pool
 * (analysis-setup.ts), the same run and evidence (run-job.ts); the job is then recorded by the
 * orchestrator's own finishing (job-recorder.ts: the store's insert and finish, the settlement's
 * cache entry and event, campaign grouping) in background batches, and the answer does not wait
 * for it. close() stops taking messages, writes what is queued, then closes the analysis.
 */
export async function startInlineAnalysis(
  ports: InlineAnalysisPorts,
  settings: InlineAnalysisSettings,
): Promise<RunningInlineAnalysis & Assembled> {
  const { store, broker, topology, cache, logger } = ports;
  const log = logger.child({ service: 'inline-analysis' });
  return assemble(logger, async (shutdown) => {
    const analysis = await startAnalysis(store, log, settings.orchestrator, shutdown);
    const instanceId = `inline-${randomUUID().slice(0, 8)}`;
    const control = await consumeControlEvents({
      broker,
      topology,
      config: analysis.config,
      log,
      instanceId,
    });
    shutdown.add('control-events', () => control.cancel());
    const lists = analysis.lists;
    if (lists) {
      const watching = await watchListChanges(broker, topology, `orchestrator.${instanceId}`, () =>
        lists.reload().catch((err: unknown) => {
          log.warn({ err: errorText(err) }, 'lists could not be read again');
        }),
      );
      shutdown.add('lists-watch', () => watching.cancel());
    }
    const registry = ports.registry ?? new Registry();
    const metrics = createMetrics(registry);
    const clock = ports.clock ?? (() => new Date());
    const recorder = startJobRecording(
      { store, broker, topology, cache, clock, log, metrics },
      {
        maxQueued: settings.record.maxQueued,
        maxBatch: settings.record.maxBatch,
        lingerMs: settings.record.lingerMs,
        backoff: { initialMs: 100, maxMs: 2000 },
      },
    );
    new Gauge({
      name: 'trawl_inline_record_queue_jobs',
      help: 'Jobs analysed inline (the milter) waiting to be recorded, places reserved included',
      registers: [registry],
      collect() {
        this.set(recorder.size());
      },
    });
    const runs = new Set<AbortController>();
    let stopping = false;
    // a message of megabytes is parsed in a worker, not on the thread every session shares
    const parsing = createParseWork(DEFAULT_PARSE_WORK);
    shutdown.add('parse-pool', () => parsing.close());
    shutdown.add('recorder', async () => {
      await recorder.close(settings.record.closeGraceMs);
    });
    // closed first: no new message is taken, the ones being analysed finish and are queued
    shutdown.add('analyses', async () => {
      stopping = true;
      while (runs.size > 0) await new Promise((r) => setTimeout(r, 10));
    });
    const runDeps = {
      invoker: analysis.invoker,
      metrics,
    };

    async function analyse(m: InlineSubmission): Promise<InlineVerdict> {
      if (stopping || !recorder.reserve()) {
        return { kind: 'unavailable', reason: 'Trawl is busy recording (queue full or stopping)' };
      }
      let email: Email;
      try {
        email = await parsing.parse({
          bytes: m.raw,
          limits: settings.limits,
          maxBytes: settings.limits.rawMessageBytes,
          envelopeTo: m.envelopeTo,
        });
      } catch (err) {
        recorder.release();
        if (err instanceof WorkerPoolError && (err.kind === 'saturated' || err.kind === 'closed'))
          return { kind: 'unavailable', reason: 'Trawl is busy parsing other large messages' };
        return { kind: 'refused', detail: errorText(err) };
      }
      const snapshot = analysis.config.getConfig();
      const wf = snapshot.workflows.get(analysis.defaultWorkflowId());
      if (!wf) {
        recorder.release();
        return { kind: 'unavailable', reason: 'the default workflow is not configured' };
      }
      const jobId = randomUUID();
      const ac = new AbortController();
      runs.add(ac);
      let outcome: RunOutcome;
      try {
        outcome = await runJob(runDeps, snapshot, wf, email, ac.signal);
      } catch (e) {
        log.error({ job_id: jobId, err: errorText(e) }, 'the engine threw');
        outcome = {
          status: 'failed',
          error: {
            code: ORCHESTRATOR_ERROR_CODES.internal,
            message: 'internal error while running',
          },
          trace: {
            workflow_id: wf.id,
            config_version: snapshot.version,
            duration_ms: 0,
            stages: [],
          },
          context: {},
        };
      } finally {
        runs.delete(ac);
      }
      const withEv = withJobEvidence(email, outcome, snapshot);
      if (withEv.error !== undefined) {
        log.error({ job_id: jobId, err: errorText(withEv.error) }, 'evidence not built');
      }
      outcome = withEv.outcome;
      recorder.record({
        job: {
          job_id: jobId,
          email_id: emailId(email),
          workflow_id: wf.id,
          email,
          submitted_by: `retriever:${m.origin.retriever}`,
          origin: m.origin,
        },
        finish: jobFinishOf(
          jobId,
          email,
          { outcome, terms: withEv.terms },
          !!store.senders,
          clock(),
        ),
      });
      return { kind: 'analysed', jobId, outcome };
    }

    const description = {
      analysis: {
        workers: analysis.workers,
        pooledMinChars: analysis.pooledMinChars,
        defaultTimeoutMs: analysis.defaultTimeoutMs,
      },
      record: settings.record,
    };
    return {
      analyse,
      recorder,
      describe: () => ({ ...description, stopOrder: shutdown.order() }),
    };
  });
}
