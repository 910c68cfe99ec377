import { randomUUID } from 'node:crypto';
import { consoleDistDir } from '@trawl/console';
import { emailParser } from '@trawl/contracts';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import pino from 'pino';
import { createAuditTrail } from './audit-trail.ts';
import { createAccessVersions } from './auth/access-versions.ts';
import { createLoginThrottle } from './auth/login-throttle.ts';
import { createPasswordHasher } from './auth/password-hasher.ts';
import { enforceRouteAccess } from './auth/route-access.ts';
import { createTokenService } from './auth/tokens.ts';
import type { GatewayContext } from './context.ts';
import { createCpuWork, DEFAULT_CPU_WORK } from './cpu-work/cpu-work.ts';
import type { GatewayDeps } from './deps.ts';
import type { GatewayOptions } from './options.ts';
import { registerEdgeHooks } from './plugins/edge.ts';
import { registerMetrics } from './plugins/metrics.ts';
import { registerProblemHandlers } from './plugins/problems.ts';
import { registerUnstorableTextCheck } from './plugins/unstorable-text.ts';
import { GatewayLogController, registerRequestLogFields } from './request-log.ts';
import { analyzeRoutes } from './routes/analyze.ts';
import { auditRoutes } from './routes/audit.ts';
import { authRoutes } from './routes/auth.ts';
import { backupRoutes } from './routes/backup.ts';
import { campaignRoutes } from './routes/campaigns.ts';
import { configRoutes } from './routes/config.ts';
import { configVersionRoutes } from './routes/config-versions.ts';
import { consoleRoutes } from './routes/console.ts';
import { docsRoutes } from './routes/docs.ts';
import { eventRoutes } from './routes/events.ts';
import { feedbackRoutes } from './routes/feedback.ts';
import { healthRoutes } from './routes/health.ts';
import { listRoutes } from './routes/lists.ts';
import { meRoutes } from './routes/me.ts';
import { messageRoutes } from './routes/message.ts';
import { quarantineRoutes } from './routes/quarantine.ts';
import { systemStatsRoutes } from './routes/system-stats.ts';
import { userRoutes } from './routes/users.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { workflowRoutes } from './routes/workflows.ts';

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

/** A number of hops becomes proxy-addr's trust function (Fastify's types take no number). */
function fastifyTrustProxy(
  tp: GatewayOptions['trustProxy'],
): boolean | string | string[] | ((address: string, hop: number) => boolean) {
  if (typeof tp === 'number') return (_address, hop) => hop < tp;
  return tp ?? false;
}

/** Builds the gateway's Fastify app. Never listens: main.ts (or a test with inject()) does. */
export async function buildApp(deps: GatewayDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const logger: FastifyBaseLogger = deps.logger ?? pino({ level: 'silent' });
  const app: FastifyInstance = Fastify({
    loggerInstance: logger,
    bodyLimit: config.limits.jsonBodyBytes,
    trustProxy: fastifyTrustProxy(config.trustProxy),
    requestIdHeader: false,
    logController: new GatewayLogController(logger),
    genReqId: (req) => {
      const h = req.headers['x-request-id'];
      return typeof h === 'string' && REQUEST_ID_RE.test(h) ? h : randomUUID();
    },
    return503OnClosing: true,
  });

  const now = deps.clock ?? (() => new Date());
  const tokens = createTokenService({
    secretKey: config.secretKey,
    accessTokenExpireMinutes: config.accessTokenExpireMinutes,
    cacheSeconds: config.tokenCacheSeconds ?? 10,
    now: () => now().getTime(),
  });
  const throttle = createLoginThrottle({
    cache: deps.cache,
    free: config.loginFailuresFree ?? 5,
    maxSeconds: config.loginLockoutMaxSeconds ?? 300,
    now: () => now().getTime(),
  });

  const versions = createAccessVersions({
    cache: deps.cache,
    users: deps.store.users,
    ttlSeconds: config.accessVersionCacheSeconds ?? 300,
  });
  const audit = createAuditTrail({
    store: deps.store,
    logger,
    now,
    retentionDays: config.audit?.retentionDays ?? 365,
    failureWindowSeconds: config.audit?.failureWindowSeconds ?? 60,
  });
  app.addHook('onReady', async () => audit.start());
  app.addHook('onClose', async () => audit.stop());

  // First: every route registered after this must declare who may call it.
  enforceRouteAccess(app, { publicBodyBytes: config.publicBodyBytes ?? 64 * 1024 });
  registerProblemHandlers(app);
  registerUnstorableTextCheck(app);
  registerRequestLogFields(app);
  const metrics = registerMetrics(app, {
    enabled: config.metrics ?? true,
    ...(deps.metricsRegistries ? { also: deps.metricsRegistries } : {}),
  });
  registerEdgeHooks(app, { config, tokens, versions, cache: deps.cache });

  const ctx: GatewayContext = {
    ...deps,
    now,
    tokens,
    throttle,
    versions,
    passwords: createPasswordHasher(
      config.passwordHashConcurrency === undefined
        ? {}
        : { concurrency: config.passwordHashConcurrency },
    ),
    audit,
    metrics,
    emailParser: emailParser(config.limits),
    cpu: createCpuWork(
      { ...DEFAULT_CPU_WORK, ...config.cpuWork },
      {
        onReplace: (info) => logger.warn(info, 'a gateway CPU worker was replaced'),
      },
    ),
  };
  app.addHook('onClose', async () => ctx.cpu.close());
  // the CPU workers start once the gateway listens, not on the first large message (app.inject in
  // tests never listens: no worker starts there unless a task needs one)
  app.addHook('onListen', async () => ctx.cpu.warm());

  await app.register(healthRoutes(ctx));
  await app.register(docsRoutes(ctx));
  await app.register(authRoutes(ctx));
  await app.register(analyzeRoutes(ctx), { prefix: '/api/v1' });
  await app.register(messageRoutes(ctx), { prefix: '/api/v1' });
  await app.register(campaignRoutes(ctx), { prefix: '/api/v1' });
  await app.register(configRoutes(ctx), { prefix: '/api/v1' });
  await app.register(workflowRoutes(ctx), { prefix: '/api/v1' });
  await app.register(userRoutes(ctx), { prefix: '/api/v1' });
  await app.register(auditRoutes(ctx), { prefix: '/api/v1' });
  await app.register(feedbackRoutes(ctx), { prefix: '/api/v1' });
  await app.register(webhookRoutes(ctx), { prefix: '/api/v1' });
  await app.register(quarantineRoutes(ctx), { prefix: '/api/v1' });
  await app.register(listRoutes(ctx), { prefix: '/api/v1' });
  await app.register(meRoutes(ctx), { prefix: '/api/v1' });
  if (deps.backup) await app.register(backupRoutes(ctx, deps.backup), { prefix: '/api/v1' });
  await app.register(eventRoutes(ctx), { prefix: '/api/v1' });
  await app.register(systemStatsRoutes(ctx), { prefix: '/api/v1' });
  await app.register(configVersionRoutes(ctx), { prefix: '/api/v1' });
  // The web console at / (its client routes too); null: not served (deps.consoleDir).
  await app.register(
    consoleRoutes(deps.consoleDir === undefined ? consoleDistDir() : deps.consoleDir),
  );
  return app;
}
