import type { FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

export interface GatewayMetrics {
  registry: Registry;
  jobsSubmitted: Counter<'workflow' | 'source'>;
}

/** One registry per app (several apps may live in one process: tests, embedded mode). */
export function registerMetrics(
  app: FastifyInstance,
  opts: {
    enabled: boolean;
    defaultMetrics?: boolean;
    /** Registries shown after the gateway's own (embedded mode), read at every scrape. */
    also?: readonly Registry[];
  },
): GatewayMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service: 'api-gateway' });
  if (opts.defaultMetrics) collectDefaultMetrics({ register: registry, prefix: 'trawl_gateway_' });
  const requests = new Counter({
    name: 'trawl_http_requests_total',
    help: 'HTTP requests answered, by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'trawl_http_request_duration_seconds',
    help: 'Time to answer an HTTP request',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const jobsSubmitted = new Counter({
    name: 'trawl_jobs_submitted_total',
    help: 'Analysis jobs accepted (stored and confirmed by the broker)',
    labelNames: ['workflow', 'source'] as const,
    registers: [registry],
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const labels = { method: request.method, route, status: String(reply.statusCode) };
    requests.inc(labels);
    duration.observe(labels, reply.elapsedTime / 1000);
  });
  if (opts.enabled) {
    app.get('/metrics', { config: { access: 'public' } }, async (_request, reply) => {
      reply.type(registry.contentType);
      const texts = await Promise.all([registry, ...(opts.also ?? [])].map((r) => r.metrics()));
      return texts.map((t) => (t.endsWith('\n') || t === '' ? t : `${t}\n`)).join('');
    });
  }
  return { registry, jobsSubmitted };
}
