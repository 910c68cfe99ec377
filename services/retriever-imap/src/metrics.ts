import { Counter, Gauge, Registry } from 'prom-client';

/** The IMAP retriever's metrics in `registry`. */
export function createImapMetrics(registry: Registry) {
  const registers = [registry];
  const counter = <L extends string = string>(name: string, help: string, labelNames: L[] = []) =>
    new Counter({ name, help, labelNames, registers });
  const gauge = (name: string, help: string) => new Gauge({ name, help, registers });
  return {
    fetched: counter('trawl_imap_fetched_total', 'Messages handed out on /internal/fetch'),
    acked: counter('trawl_imap_acked_total', 'Messages moved to the processed folder'),
    verdicts: counter(
      'trawl_imap_verdicts_total',
      'Verdicts applied, by recommended action (unanalyzed: held, whatever the action)',
      ['action'],
    ),
    errors: counter('trawl_imap_errors_total', 'Failed requests by operation', ['op']),
    backlog: gauge(
      'trawl_imap_backlog',
      'Messages waiting in the mailbox after the last fetch (not yet handed out)',
    ),
    connected: gauge('trawl_imap_connected', '1 while connected to the IMAP server'),
    reconnects: counter(
      'trawl_imap_reconnects_total',
      'Connections restored after the server dropped one',
    ),
  };
}
/** The IMAP retriever's metrics. */
export type ImapMetrics = ReturnType<typeof createImapMetrics>;
export { Registry };
