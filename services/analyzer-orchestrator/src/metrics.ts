import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface OrchestratorMetrics {
  jobs: Counter<'status'>;
  jobDuration: Histogram<'status'>;
  analyzerCall: Histogram<'analyzer' | 'status'>;
  inFlight: Gauge;
  redeliveries: Counter;
}

/** The orchestrator's metrics, registered on `registry` (its own Registry, not the global one). */
export function createMetrics(registry: Registry): OrchestratorMetrics {
  return {
    jobs: new Counter({
      name: 'trawl_jobs_total',
      help: 'Jobs finished by this orchestrator, by final status',
      labelNames: ['status'],
      registers: [registry],
    }),
    jobDuration: new Histogram({
      name: 'trawl_job_duration_seconds',
      help: 'Time from the start of a job run to its stored result',
      labelNames: ['status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers: [registry],
    }),
    analyzerCall: new Histogram({
      name: 'trawl_analyzer_call_duration_seconds',
      help: 'Duration of one analyzer call attempt, by analyzer and outcome',
      labelNames: ['analyzer', 'status'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    inFlight: new Gauge({
      name: 'trawl_jobs_in_flight',
      help: 'Jobs being run by this orchestrator now',
      registers: [registry],
    }),
    redeliveries: new Counter({
      name: 'trawl_job_redeliveries_total',
      help: 'Request messages received again (after a crash, a requeue or a shutdown)',
      registers: [registry],
    }),
  };
}
