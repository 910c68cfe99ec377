import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** The SMTP filter's Prometheus metrics (messages, verdicts and errors by kind). */
export function createSmtpMetrics(registry: Registry) {
  const registers = [registry];
  return {
    messages: new Counter({
      name: 'trawl_smtp_messages_total',
      help: 'Messages answered, by outcome (delivered, prefixed, quarantined, rejected, tempfailed, unanalyzed_delivered)',
      labelNames: ['outcome'],
      registers,
    }),
    verdicts: new Counter({
      name: 'trawl_smtp_verdicts_total',
      help: 'Verdicts received on /internal/verdict, by kind (analyzed, unanalyzed)',
      labelNames: ['verdict'],
      registers,
    }),
    errors: new Counter({
      name: 'trawl_smtp_errors_total',
      help: 'Failures by stage (submit, reinject)',
      labelNames: ['stage'],
      registers,
    }),
    duration: new Histogram({
      name: 'trawl_smtp_filter_duration_seconds',
      help: 'Time from the end of DATA to the answer given to Postfix (verdict wait and re-injection)',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    inFlight: new Gauge({
      name: 'trawl_smtp_in_flight',
      help: 'Messages waiting for their verdict',
      registers,
    }),
  };
}
/** The metrics `createSmtpMetrics` registers. */
export type SmtpMetrics = ReturnType<typeof createSmtpMetrics>;
