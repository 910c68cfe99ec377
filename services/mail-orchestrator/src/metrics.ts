import { Counter, Gauge, Registry } from 'prom-client';

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
  return {
    fetched: new Counter({
      name: 'trawl_mail_fetched_total',
      help: 'Messages received from retrievers (fetched or pushed)',
      labelNames: ['retriever'],
      registers,
    }),
    submitted: new Counter({
      name: 'trawl_mail_submitted_total',
      help: 'Messages the gateway accepted for analysis',
      labelNames: ['retriever'],
      registers,
    }),
    duplicates: new Counter({
      name: 'trawl_mail_duplicates_total',
      help: 'Messages dropped as duplicates (the same bytes handled before)',
      labelNames: ['retriever'],
      registers,
    }),
    rejected: new Counter({
      name: 'trawl_mail_rejected_total',
      help: 'Messages the gateway refused (unparseable, invalid, too large): acked with an unanalyzed verdict',
      labelNames: ['retriever'],
      registers,
    }),
    failures: new Counter({
      name: 'trawl_mail_failures_total',
      help: 'Failures per retriever and stage (fetch, submit, ack, verdict)',
      labelNames: ['retriever', 'stage'],
      registers,
    }),
    verdicts: new Counter({
      name: 'trawl_mail_verdicts_total',
      help: 'Verdicts delivered to retrievers, by recommended action',
      labelNames: ['retriever', 'action'],
      registers,
    }),
    backlog: new Gauge({
      name: 'trawl_mail_retriever_backlog',
      help: "Messages waiting at a retriever's source after its last fetch (as the retriever reports it)",
      labelNames: ['retriever'],
      registers,
    }),
  };
}

export { Registry };
