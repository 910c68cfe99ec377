import { Counter, Gauge, Registry } from 'prom-client';

/** The mail orchestrator's metrics. */
export interface MailMetrics {
  fetched: Counter<'retriever'>;
  submitted: Counter<'retriever'>;
  duplicates: Counter<'retriever'>;
  rejected: Counter<'retriever'>;
  failures: Counter<'retriever' | 'stage'>;
  verdicts: Counter<'retriever' | 'action'>;
  /** Messages waiting at each retriever's source, as its last fetch answered. */
  backlog: Gauge<'retriever'>;
}

/** The mail orchestrator's counters, registered on `registry`. */
export function createMailMetrics(registry: Registry): MailMetrics {
  const registers = [registry];
  const counter = <L extends string>(name: string, help: string, labelNames: L[]) =>
    new Counter({ name, help, labelNames, registers });
  return {
    fetched: counter(
      'trawl_mail_fetched_total',
      'Messages received from retrievers (fetched or pushed)',
      ['retriever'],
    ),
    submitted: counter('trawl_mail_submitted_total', 'Messages the gateway accepted for analysis', [
      'retriever',
    ]),
    duplicates: counter(
      'trawl_mail_duplicates_total',
      'Messages dropped as duplicates (the same bytes handled before)',
      ['retriever'],
    ),
    rejected: counter(
      'trawl_mail_rejected_total',
      'Messages the gateway refused (unparseable, invalid, too large): acked with an unanalyzed verdict',
      ['retriever'],
    ),
    failures: counter(
      'trawl_mail_failures_total',
      'Failures per retriever and stage (fetch, submit, ack, verdict)',
      ['retriever', 'stage'],
    ),
    verdicts: counter(
      'trawl_mail_verdicts_total',
      'Verdicts delivered to retrievers, by recommended action',
      ['retriever', 'action'],
    ),
    backlog: new Gauge({
      name: 'trawl_mail_retriever_backlog',
      help: "Messages waiting at a retriever's source after its last fetch (as the retriever reports it)",
      labelNames: ['retriever'],
      registers,
    }),
  };
}

export { Registry };
