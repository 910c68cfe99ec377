import { Counter, Gauge, type Registry } from 'prom-client';

/** The metrics of an API retriever, named `trawl_<kind>_*` (kind: graph, gmail). */
export function createApiRetrieverMetrics(registry: Registry, kind: string) {
  const registers = [registry];
  const counter = <L extends string = string>(name: string, help: string, labelNames: L[] = []) =>
    new Counter({ name: `trawl_${kind}_${name}`, help, labelNames, registers });
  return {
    fetched: counter('fetched_total', 'Messages handed out on /internal/fetch'),
    acked: counter(
      'acked_total',
      'Messages moved out of the watched folder after the gateway accepted them',
    ),
    verdicts: counter('verdicts_total', 'Verdicts applied, by the rule used', ['rule']),
    errors: counter('errors_total', 'Failed requests by operation', ['op']),
    throttled: counter('throttled_total', 'Answers of the API that throttled (429, 503, quota)'),
    resyncs: counter('resyncs_total', 'Full resyncs after an expired sync token'),
    backlog: new Gauge({
      name: `trawl_${kind}_backlog`,
      help: 'Messages known to wait after the last fetch',
      registers,
    }),
    healthy: new Gauge({
      name: `trawl_${kind}_healthy`,
      help: '1 while every mailbox answered its last request',
      registers,
    }),
  };
}
/** An API retriever's metrics. */
export type ApiRetrieverMetrics = ReturnType<typeof createApiRetrieverMetrics>;
