import {
  type AnalyzerConfigView,
  type ConfigView,
  type ReloadResponse,
  TrawlError,
} from '@trawl/contracts';
import type { FastifyPluginAsync } from 'fastify';
import { actorOf } from '../auth/access.ts';
import { allow } from '../auth/route-access.ts';
import { redactSecrets } from '../auth/secret-settings.ts';
import type { ConfigFiles } from '../config-state.ts';
import type { GatewayContext } from '../context.ts';
import { ForbiddenError, GATEWAY_ERRORS, NotFoundError } from '../errors.ts';

/** One analyzer's entry: form B (plugins.analyzers) wins over form A (analyzers.<id>) for url/enabled; settings merge. */
export function analyzerView(files: ConfigFiles, id: string): AnalyzerConfigView | null {
  const a = files.service.analyzers[id];
  const p = files.service.plugins.analyzers[id] ?? files.service.plugins.context_providers[id];
  if (!a && !p) return null;
  const url = p?.url ?? a?.url;
  return {
    id,
    enabled: p ? p.enabled && (a?.enabled ?? true) : (a?.enabled ?? true),
    settings: { ...(p?.settings ?? {}), ...(a?.settings ?? {}) },
    ...(url ? { url } : {}),
    version: files.analyzerVersions[id] ?? files.version,
  };
}

export function configRoutes(ctx: GatewayContext): FastifyPluginAsync {
  return async (app) => {
    app.get(
      '/config',
      allow({ role: 'viewer', service: ['config:read'] }),
      async (): Promise<ConfigView> => {
        const { service, version } = ctx.configState.current().files;
        return {
          version,
          analyzer: {
            timeout_ms: service.analyzer.timeout_ms,
            min_confidence: service.analyzer.min_confidence,
          },
          workflow: {
            default_workflow_id: service.workflow.default_workflow_id,
            max_retries: service.workflow.max_retries,
          },
        };
      },
    );

    app.get(
      '/config/analyzers/:id',
      { config: { access: { role: 'admin', service: ['settings:own'] } } },
      async (request) => {
        const p = request.principal!;
        const { id } = request.params as { id: string };
        // A plugin reads its own settings only (asked before the lookup: no probing for ids).
        const own = p.kind === 'service' && p.caller.kind === 'plugin' && p.caller.id === id;
        if (p.kind === 'service' && !own) {
          throw new ForbiddenError(
            `the credential of ${p.username} reads only its own plugin's settings`,
            GATEWAY_ERRORS.notOwner,
          );
        }
        const view = analyzerView(ctx.configState.current().files, id);
        if (!view) throw new NotFoundError(`analyzer ${id}`);
        // Its secrets are the plugin's: anyone else (admins too) reads *** in their place.
        return own
          ? view
          : { ...view, settings: redactSecrets(view.settings) as AnalyzerConfigView['settings'] };
      },
    );

    app.post(
      '/config/reload',
      { config: { access: { role: 'admin' } } },
      async (request): Promise<ReloadResponse> => {
        const actor = actorOf(request);
        const before = ctx.configState.current().files.version;
        try {
          const r = await ctx.configState.reload(actor);
          await ctx.store.audit
            .append({
              actor,
              action: 'config.reload',
              target: r.new_version,
              outcome: 'success',
              address: request.ip,
              request_id: String(request.id),
              details: {
                old_version: r.old_version,
                new_version: r.new_version,
                changed: r.changed,
              },
            })
            .catch((err: unknown) => request.log.error({ err }, 'audit append failed'));
          request.log.info(
            { old_version: r.old_version, new_version: r.new_version },
            'configuration reloaded',
          );
          return { old_version: r.old_version, new_version: r.new_version, changed: r.changed };
        } catch (err) {
          const problems = (
            err as {
              problems?: {
                path?: string;
                file?: string;
                message: string;
                line?: number;
                column?: number;
              }[];
            }
          ).problems;
          await ctx.store.audit
            .append({
              actor,
              action: 'config.reload',
              target: before,
              outcome: 'failure',
              address: request.ip,
              request_id: String(request.id),
              details: { problems: problems?.length ?? 0 },
            })
            .catch(() => undefined);
          if (problems || (err instanceof TrawlError && err.status < 500)) {
            throw new TrawlError(
              GATEWAY_ERRORS.configInvalid,
              'the configuration files are invalid; the running configuration is kept',
              {
                status: 400,
                problems: (problems ?? [{ message: (err as Error).message }]).map((p) => ({
                  path: `${p.file ?? ''}${p.path ?? ''}${p.line ? ` (line ${p.line}${p.column ? `, column ${p.column}` : ''})` : ''}`,
                  message: p.message,
                })),
              },
            );
          }
          throw err;
        }
      },
    );
  };
}
