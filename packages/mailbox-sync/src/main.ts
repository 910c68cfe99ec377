import { type AppConfig, retrieverSettingsOrExit, type SettingsResult } from '@trawl/config';
import type { Cache } from '@trawl/platform';
import { createServiceCache, createServiceLogger, type RunningService } from '@trawl/platform';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ApiRetriever } from './api-retriever.ts';

/** What an API retriever's assembly is given. */
export interface ApiRetrieverPorts {
  logger: Logger;
  /** Where the sync tokens are kept (the shared cache); none: in this process only. */
  cache?: Cache | undefined;
  registry?: Registry;
  fetch?: typeof fetch;
  version?: string;
}

/** An API retriever, running. */
export interface ApiRetrieverService {
  app: FastifyInstance;
  retriever: ApiRetriever;
  registry: Registry;
  /** Where the retriever protocol is served. */
  url: string;
  close(): Promise<void>;
}

/**
 * The `main` of an API retriever for runServiceMain: its own settings read from this process's
 * environment (`read`: its TRAWL_<KIND>_* and their *_FILE secrets; it refuses the platform key),
 * the shared cache (Redis: the sync tokens live beside the mail orchestrator's delivery state),
 * its assembly, and one stop.
 */
export function apiRetrieverMain<S>(
  service: string,
  read: (env: Record<string, string | undefined>) => SettingsResult<S>,
  start: (cfg: AppConfig, settings: S, ports: ApiRetrieverPorts) => Promise<ApiRetrieverService>,
): (cfg: AppConfig, version: string) => Promise<RunningService> {
  return async (cfg, version) => {
    const settings = retrieverSettingsOrExit(cfg, read);
    const logger = createServiceLogger(service, cfg.pinoLevel);
    if (!cfg.retrieverKey)
      logger.warn('TRAWL_RETRIEVER_KEY is not set: /internal/* is open to anyone who can reach it');
    const cache = createServiceCache(cfg, service, logger);
    const running = await start(cfg, settings, { logger, cache, version });
    return {
      logger,
      async stop() {
        await running.close();
        await cache.close();
      },
    };
  };
}
