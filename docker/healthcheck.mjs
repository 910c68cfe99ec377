// Container health check: GET /health of the service this container runs, on its own port.
// Exit 0 when it answers 2xx within 4 s, else 1. Each port variable and default is the one
// @trawl/config reads for the port that service listens on (test/e2e-run/compose.test.ts checks it).
const service = process.env.TRAWL_SERVICE ?? 'api-gateway';
const ports = {
  'api-gateway': process.env.API_GATEWAY_PORT ?? '8001',
  'all-in-one': process.env.API_GATEWAY_PORT ?? '8001',
  'analyzer-orchestrator': process.env.TRAWL_ORCHESTRATOR_PORT ?? '8091',
  'mail-orchestrator': process.env.TRAWL_MAIL_ORCHESTRATOR_PORT ?? '8002',
  analyzers: process.env.TRAWL_ANALYZERS_PORT ?? '8100',
  'retriever-imap': process.env.TRAWL_RETRIEVER_IMAP_PORT ?? '8200',
  'retriever-smtp': process.env.TRAWL_RETRIEVER_SMTP_PORT ?? '8201',
  'retriever-graph': process.env.TRAWL_RETRIEVER_GRAPH_PORT ?? '8202',
  'retriever-gmail': process.env.TRAWL_RETRIEVER_GMAIL_PORT ?? '8203',
};
const port = ports[service];
if (!port) process.exit(0);
try {
  const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(4000) });
  process.exit(res.ok ? 0 : 1);
} catch {
  process.exit(1);
}
