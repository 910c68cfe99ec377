import { Counter, Gauge, Registry } from 'prom-client';

export function createImapMetrics(registry: Registry) {
  const registers = [registry];
  return {
    fetched: new Counter({
      name: 'trawl_imap_fetched_total',
      help: 'Messages handed out on /internal/fetch',
      registers,
    }),
    acked: new Counter({
      name: 'trawl_imap_acked_total',
      help: 'Messages moved to the processed folder',
      registers,
    }),
    verdicts: new Counter({
      name: 'trawl_imap_verdicts_total',
      help: 'Verdicts applied, by recommended action (unanalyzed: held, whatever the action)',
      labelNames: ['action'],
      registers,
    }),
    errors: new Counter({
      name: 'trawl_imap_errors_total',
      help: 'Failed requests by operation',
      labelNames: ['op'],
      registers,
    }),
    backlog: new Gauge({
      name: 'trawl_imap_backlog',
      help: 'Messages waiting in the mailbox after the last fetch (not yet handed out)',
      registers,
    }),
    connected: new Gauge({
      name: 'trawl_imap_connected',
      help: '1 while connected to the IMAP server',
      registers,
    }),
    reconnects: new Counter({
      name: 'trawl_imap_reconnects_total',
      help: 'Connections restored after the server dropped one',
      registers,
    }),
  };
}
export type ImapMetrics = ReturnType<typeof createImapMetrics>;
export { Registry };
