import { within } from '@trawl/platform';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { ApiRetriever, type ApiRetrieverOptions } from './api-retriever.ts';
import type { ApiRetrieverPorts, ApiRetrieverService } from './main.ts';
import type { ApiRetrieverMetrics } from './metrics.ts';
import { cacheSyncStore, memorySyncStore } from './state-store.ts';

/** How long close() lets in-flight requests finish before it cuts their connections. */
const STOP_GRACE_MS = 5_000;

/**
 * Makes the folders or labels in the background (a consent not granted yet must not stop the
 * start: /health says what is wrong), serves the app, and answers its address and one close.
 */
export async function serveApiRetriever(
  app: FastifyInstance,
  retriever: ApiRetriever,
  listen: { host: string; port: number },
  logger: Logger,
): Promise<{ url: string; close(): Promise<void> }> {
  retriever.prepare().catch(() => undefined);
  await app.listen(listen);
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : listen.port;
  const host = listen.host === '0.0.0.0' || listen.host === '::' ? '127.0.0.1' : listen.host;
  logger.info({ port }, 'listening');
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    async close() {
      const closed = app.close();
      await within(closed, STOP_GRACE_MS).catch(() => app.server.closeAllConnections());
      await closed;
    },
  };
}

/** A provider's mailboxes behind the retriever protocol: what runApiRetriever assembles. */
export interface ApiRetrieverAssembly
  extends Pick<ApiRetrieverOptions, 'sources' | 'rules' | 'defaults' | 'unknownIdCode'> {
  /** `gmail`, `graph`: with `name`, the prefix of its sync state in the cache. */
  kind: string;
  name: string;
  registry: Registry;
  metrics: ApiRetrieverMetrics;
  logger: Logger;
  /** The service's own app (its name and error codes over buildApiRetrieverApp). */
  buildApp(d: {
    logger: Logger;
    registry: Registry;
    retriever: ApiRetriever;
    metrics: ApiRetrieverMetrics;
    internalApiKey: string | undefined;
    version: string | undefined;
  }): FastifyInstance;
  listen: { host: string; port: number };
  internalApiKey: string | undefined;
  /** Said beside `listening` in the log (mailboxes, grant). */
  describe: Record<string, unknown>;
}

/**
 * An API retriever assembled and served: its sync state in the shared cache (in this process
 * without one), the retriever over its mailboxes, its app, and serveApiRetriever's one close.
 */
export async function runApiRetriever(
  ports: ApiRetrieverPorts,
  a: ApiRetrieverAssembly,
): Promise<ApiRetrieverService> {
  const retriever = new ApiRetriever({
    sources: a.sources,
    store: ports.cache
      ? cacheSyncStore(ports.cache, `retriever:${a.kind}:${a.name}:`)
      : memorySyncStore(),
    keyPrefix: '',
    rules: a.rules,
    defaults: a.defaults,
    unknownIdCode: a.unknownIdCode,
    metrics: a.metrics,
    logger: a.logger,
  });
  const app = a.buildApp({
    logger: a.logger,
    registry: a.registry,
    retriever,
    metrics: a.metrics,
    internalApiKey: a.internalApiKey,
    version: ports.version,
  });
  const served = await serveApiRetriever(app, retriever, a.listen, a.logger.child(a.describe));
  return { app, retriever, registry: a.registry, url: served.url, close: served.close };
}
