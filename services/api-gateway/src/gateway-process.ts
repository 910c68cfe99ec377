import type { AppConfig } from '@trawl/config';
import { forgetTeacher, learnFeedback, learnPendingFeedback } from '@trawl/investigation';
import { createWebhookDispatcher, type SqlClient, type Store } from '@trawl/platform';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './app.ts';
import type { GatewayDeps } from './deps.ts';
import { gatewayOptionsFrom } from './options.ts';
import { createReleaseDelivery } from './quarantine-release.ts';

/**
 * What a gateway process (main.ts, embedded mode) shares: the app built with the options of the
 * configuration (the features of the files, not of the database) and learning feedback from `sql`.
 */
export function buildConfiguredGateway(
  cfg: AppConfig,
  sql: SqlClient,
  deps: Omit<GatewayDeps, 'config' | 'learnFeedback' | 'forgetTeacher'>,
): Promise<FastifyInstance> {
  return buildApp({
    config: { ...gatewayOptionsFrom(cfg), features: { database_config: false } },
    releaseQuarantined: createReleaseDelivery(cfg.mailRetrievers, cfg.internalApiKey),
    ...deps,
    learnFeedback: (jobId) =>
      learnFeedback(sql, jobId, { maxShare: cfg.feedback.maxSharePercent / 100 }),
    forgetTeacher: (user) =>
      forgetTeacher(sql, user, { maxShare: cfg.feedback.maxSharePercent / 100 }),
  });
}

/** The background work of a gateway process, started by startGatewayBackground. */
export interface GatewayBackground {
  stop(): Promise<void>;
}

/**
 * Starts what a gateway process runs beside its app: webhook deliveries (issue 17; every gateway
 * claims due ones, FOR UPDATE SKIP LOCKED) unless TRAWL_WEBHOOK_DISPATCHER is false, and the
 * feedback stored but not learnt (learning failed at the time), learnt here once a minute.
 */
export function startGatewayBackground(d: {
  cfg: Pick<AppConfig, 'webhooks' | 'feedback'>;
  sql: SqlClient;
  store: Store;
  logger: Logger;
  version: string;
}): GatewayBackground {
  const { dispatcher: runDispatcher, ...settings } = d.cfg.webhooks;
  const dispatcher = runDispatcher
    ? createWebhookDispatcher({
        webhooks: d.store.webhooks,
        audit: d.store.audit,
        settings,
        logger: d.logger.child({ component: 'webhooks' }),
        userAgent: `Trawl-Webhooks/${d.version}`,
      })
    : undefined;
  dispatcher?.start();
  const feedbackCatchUp = setInterval(() => {
    learnPendingFeedback(d.sql, 100, {
      maxShare: d.cfg.feedback.maxSharePercent / 100,
    }).catch((err: unknown) => d.logger.warn({ err }, 'feedback catch-up failed'));
  }, 60_000);
  feedbackCatchUp.unref();
  return {
    async stop() {
      clearInterval(feedbackCatchUp);
      await dispatcher?.stop();
    },
  };
}
