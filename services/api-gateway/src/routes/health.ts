import type { FastifyPluginAsync } from 'fastify';
import { allow } from '../auth/route-access.ts';
import type { GatewayContext } from '../context.ts';

interface ComponentHealth {
  status: 'ok' | 'down';
  latency_ms: number;
  error?: string;
}

const CHECK_TIMEOUT_MS = 3000;

async function timed(fn: () => Promise<unknown>): Promise<ComponentHealth> {
  const start = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const r = await Promise.race([
      fn(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS);
      }),
    ]);
    const latency = Math.round((performance.now() - start) * 100) / 100;
    if (r && typeof r === 'object' && 'ok' in r && (r as { ok: boolean }).ok === false) {
      const e = (r as { error?: string }).error;
      return { status: 'down', latency_ms: latency, ...(e ? { error: e } : {}) };
    }
    return { status: 'ok', latency_ms: latency };
  } catch (err) {
    return {
      status: 'down',
      latency_ms: Math.round((performance.now() - start) * 100) / 100,
      error: err instanceof Error ? err.message.slice(0, 200) : 'unavailable',
    };
  } finally {
    if (timer) clearTimeout(timer);
  }
}

export function healthRoutes(ctx: GatewayContext): FastifyPluginAsync {
  const features = {
    configuration_api: ctx.config.features?.configuration_api ?? true,
    database_config: ctx.config.features?.database_config ?? false,
    oauth: true,
    rate_limiting: ctx.config.rateLimit.enabled,
    audit_logging: ctx.config.features?.audit_logging ?? true,
  };

  return async (app) => {
    app.get('/health', { config: { access: 'public' } }, async () => ({
      status: 'ok',
      service: 'api-gateway',
      version: ctx.version,
      features,
    }));

    app.get(
      '/api/v1/system/health',
      allow({ role: 'viewer', service: ['config:read'] }),
      async (_request, reply) => {
        const svc = ctx.configState.current().files.service;
        const pluginIds = [
          ...Object.entries(svc.plugins.analyzers),
          ...Object.entries(svc.plugins.context_providers),
        ]
          .filter(([, p]) => p.enabled)
          .map(([id]) => id);
        for (const [id, a] of Object.entries(svc.analyzers)) {
          if (a.enabled && a.url && !pluginIds.includes(id)) pluginIds.push(id);
        }
        const [database, broker, cache, ...plugins] = await Promise.all([
          timed(() => ctx.store.sql.ping()),
          timed(() => ctx.broker.ping()),
          timed(() => ctx.cache.ping()),
          ...pluginIds.map((id) =>
            timed(async () => (ctx.invoker.health ? ctx.invoker.health(id) : { ok: true })),
          ),
        ]);
        const components = { database: database!, broker: broker!, cache: cache! };
        const pluginMap = Object.fromEntries(pluginIds.map((id, i) => [id, plugins[i]!]));
        const degraded = [...Object.values(components), ...Object.values(pluginMap)].some(
          (c) => c.status !== 'ok',
        );
        reply.code(degraded ? 503 : 200);
        return {
          status: degraded ? 'degraded' : 'ok',
          service: 'api-gateway',
          version: ctx.version,
          config_version: ctx.configState.current().files.version,
          components,
          plugins: pluginMap,
        };
      },
    );
  };
}
