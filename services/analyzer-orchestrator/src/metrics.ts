import type { Broker } from '@trawl/platform';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** The orchestrator's prom-client metrics (jobs, verdicts, stages, analyzer calls). */
export interface OrchestratorMetrics {
  jobs: Counter<'status'>;
  jobDuration: Histogram<'status'>;
  /** Completed jobs by verdict and threat level. */
  verdicts: Counter<'verdict' | 'threat_level' | 'workflow'>;
  stageDuration: Histogram<'workflow' | 'stage' | 'status'>;
  analyzerCall: Histogram<'analyzer' | 'status'>;
  /** Analyzer call attempts that did not succeed, by analyzer and kind (error | timeout). */
  analyzerErrors: Counter<'analyzer' | 'kind'>;
  inFlight: Gauge;
  redeliveries: Counter;
}

/** What the queue-depth gauge reads when /metrics is scraped. */
export interface QueueDepthSource {
  broker: Pick<Broker, 'queueDepth'>;
  queues: readonly string[];
}

/**
 * The orchestrator's metrics, registered on `registry` (its own Registry, not the global one). With
 * `queues`, `trawl_queue_depth{queue}` reads each queue's ready messages at every scrape.
 */
export function createMetrics(registry: Registry, queues?: QueueDepthSource): OrchestratorMetrics {
  const registers = [registry];
  if (queues) {
    new Gauge({
      name: 'trawl_queue_depth',
      help: 'Messages ready in a broker queue (analysis requests, dead letters, verdicts), read at scrape time',
      labelNames: ['queue'],
      registers,
      async collect() {
        for (const q of queues.queues) {
          try {
            this.set({ queue: q }, await queues.broker.queueDepth(q));
          } catch {
            // the broker is down or the queue is not declared: no sample rather than a stale one
            this.remove({ queue: q });
          }
        }
      },
    });
  }
  return {
    jobs: new Counter({
      name: 'trawl_jobs_total',
      help: 'Jobs finished by this orchestrator, by final status',
      labelNames: ['status'],
      registers,
    }),
    jobDuration: new Histogram({
      name: 'trawl_job_duration_seconds',
      help: 'Time from the start of a job run to its stored result',
      labelNames: ['status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    }),
    verdicts: new Counter({
      name: 'trawl_job_verdicts_total',
      help: 'Completed jobs by verdict (phishing | not_phishing), threat level and workflow',
      labelNames: ['verdict', 'threat_level', 'workflow'],
      registers,
    }),
    stageDuration: new Histogram({
      name: 'trawl_stage_duration_seconds',
      help: 'Duration of a workflow stage that ran, by workflow, stage and final status',
      labelNames: ['workflow', 'stage', 'status'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    analyzerCall: new Histogram({
      name: 'trawl_analyzer_call_duration_seconds',
      help: 'Duration of one analyzer call attempt, by analyzer and outcome',
      labelNames: ['analyzer', 'status'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    analyzerErrors: new Counter({
      name: 'trawl_analyzer_errors_total',
      help: 'Analyzer calls that did not succeed, by analyzer and kind (error, timeout)',
      labelNames: ['analyzer', 'kind'],
      registers,
    }),
    inFlight: new Gauge({
      name: 'trawl_jobs_in_flight',
      help: 'Jobs being run by this orchestrator now',
      registers,
    }),
    redeliveries: new Counter({
      name: 'trawl_job_redeliveries_total',
      help: 'Request messages received again (after a crash, a requeue or a shutdown)',
      registers,
    }),
  };
}
