import {
  type Email,
  parseWith,
  TrawlError,
  type ValidationProblem,
  Workflow,
} from '@trawl/contracts';
import { compileWorkflow, runWorkflow } from '@trawl/workflow-engine';
import type { FastifyPluginAsync } from 'fastify';
import { allow } from '../auth/route-access.ts';
import type { ConfigSnapshot } from '../config-state.ts';
import type { GatewayContext } from '../context.ts';
import { NotFoundError, ValidationError } from '../errors.ts';

/** Analyzer / provider ids a workflow may reference under the current configuration. */
function knownIds(s: ConfigSnapshot): { analyzers: string[]; providers: string[] } {
  const svc = s.files.service;
  const analyzers = new Set<string>(s.known?.analyzers ?? []);
  for (const [id, a] of Object.entries(svc.analyzers)) if (a.enabled) analyzers.add(id);
  for (const [id, p] of Object.entries(svc.plugins.analyzers)) if (p.enabled) analyzers.add(id);
  const providers = new Set<string>(s.known?.providers ?? []);
  for (const [id, p] of Object.entries(svc.plugins.context_providers))
    if (p.enabled) providers.add(id);
  return { analyzers: [...analyzers].sort(), providers: [...providers].sort() };
}

function validateOneWorkflow(body: unknown, s: ConfigSnapshot): ValidationProblem[] {
  const parsed = parseWith(Workflow, body);
  if (!parsed.ok) return parsed.problems;
  const known = knownIds(s);
  try {
    compileWorkflow(parsed.value, {
      knownAnalyzers: known.analyzers,
      knownProviders: known.providers,
    });
    return [];
  } catch (err) {
    if (err instanceof TrawlError && err.problems) return err.problems;
    if (err instanceof TrawlError && err.status < 500) return [{ path: '', message: err.message }];
    throw err;
  }
}

export function workflowRoutes(ctx: GatewayContext): FastifyPluginAsync {
  return async (app) => {
    app.get('/workflows', allow({ role: 'viewer', service: ['config:read'] }), async () => {
      const files = ctx.configState.current().files;
      return {
        items: files.workflows,
        default_workflow_id: files.service.workflow.default_workflow_id,
        version: files.version,
      };
    });

    app.get(
      '/workflows/:id',
      allow({ role: 'viewer', service: ['config:read'] }),
      async (request) => {
        const { id } = request.params as { id: string };
        const wf = ctx.configState.current().files.workflows.find((w) => w.id === id);
        if (!wf) throw new NotFoundError(`workflow ${id}`);
        return wf;
      },
    );

    app.post(
      '/workflows/validate',
      { config: { access: { role: 'analyst' } } },
      async (request) => {
        const problems = validateOneWorkflow(request.body ?? null, ctx.configState.current());
        return { valid: problems.length === 0, problems };
      },
    );

    app.post(
      '/workflows/:id/dry-run',
      // the body is an Email (or {email}): mail content, analysed as sent and never stored
      { config: { access: { role: 'analyst' }, mailContent: [''] } },
      async (request) => {
        const { id } = request.params as { id: string };
        const snapshot = ctx.configState.current();
        const compiled = snapshot.compiled.get(id);
        if (!compiled) throw new NotFoundError(`workflow ${id}`);
        const body = (request.body ?? null) as Record<string, unknown> | null;
        // Accept the Email itself or {email: Email}.
        const input =
          body && typeof body === 'object' && 'email' in body && !('headers' in body)
            ? body.email
            : body;
        const parsed = parseWith(ctx.emailParser, input);
        if (!parsed.ok) throw new ValidationError(parsed.problems, 'the Email is not valid');
        const email: Email = parsed.value;
        const svc = snapshot.files.service;
        const outcome = await runWorkflow(
          compiled,
          email,
          {
            callAnalyzer: (aid, e, o) =>
              ctx.invoker.analyze(aid, e, { signal: o.signal, timeoutMs: o.timeoutMs }),
            callProvider: (pid, req, o) =>
              ctx.invoker.enrich(pid, req, { signal: o.signal, timeoutMs: o.timeoutMs }),
            thresholds: svc.verdict.thresholds,
            defaultAnalyzerTimeoutMs: svc.analyzer.timeout_ms,
          },
          { configVersion: snapshot.files.version },
        );
        return outcome.status === 'completed'
          ? { workflow: id, status: outcome.status, result: outcome.result, trace: outcome.trace }
          : { workflow: id, status: outcome.status, error: outcome.error, trace: outcome.trace };
      },
    );
  };
}
