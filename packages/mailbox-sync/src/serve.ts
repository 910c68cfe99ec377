import { within } from '@trawl/platform';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { ApiRetriever } from './api-retriever.ts';

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
