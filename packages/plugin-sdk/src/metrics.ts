import { Counter, Histogram, Registry } from 'prom-client';

/** A plugin server's metrics: calls, durations, failures. */
export interface PluginMetrics {
  registry: Registry;
  requests: Counter<'plugin' | 'status'>;
  duration: Histogram<'plugin'>;
}

/** The SDK's metrics, registered on `registry` (a fresh one when absent). */
export function createPluginMetrics(registry: Registry = new Registry()): PluginMetrics {
  const existing = registry.getSingleMetric('trawl_plugin_requests_total');
  if (existing) {
    return {
      registry,
      requests: existing as Counter<'plugin' | 'status'>,
      duration: registry.getSingleMetric('trawl_plugin_duration_seconds') as Histogram<'plugin'>,
    };
  }
  const requests = new Counter({
    name: 'trawl_plugin_requests_total',
    help: 'Calls of /internal/analyze and /internal/enrich, by plugin and HTTP status',
    labelNames: ['plugin', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'trawl_plugin_duration_seconds',
    help: 'Time spent answering /internal/analyze and /internal/enrich, by plugin',
    labelNames: ['plugin'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  return { registry, requests, duration };
}
