import { randomUUID } from 'node:crypto';
import {
  Email,
  EnrichRequest,
  ERROR_CODES,
  parseWith,
  TransientError,
  TrawlError,
} from '@trawl/contracts';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Registry } from 'prom-client';
import { z } from 'zod';
import type { PluginDefinition } from './define.ts';
import {
  PLUGIN_ERROR_CODES,
  PluginAbortedError,
  PluginInvalidAnswerError,
  PluginTimeoutError,
} from './errors.ts';
import { invokeAnalyzer, invokeProvider } from './invoke.ts';
import { keyMatches } from './keys.ts';
import { createPluginMetrics } from './metrics.ts';
import { sendProblem } from './problem.ts';

/** A plugin's credential, or one per plugin id (a server of several plugins). */
export type PluginKey = string | ((pluginId: string) => string | undefined);

/** The credential of plugin `id` (undefined: no check, no header). */
export function pluginKeyOf(key: PluginKey | undefined, id: string): string | undefined {
  const k = typeof key === 'function' ? key(id) : key;
  return k === '' ? undefined : k;
}

/** Where a plugin's raw settings come from, per plugin id (parsed over the schema defaults). */
export type SettingsSource = Record<string, unknown> | ((id: string) => unknown);

/** Options of createPluginApp: the plugins served, their settings, credentials, limits. */
export interface PluginAppOptions {
  plugins: PluginDefinition[];
  /**
   * The plugin's own credential (`trawl credentials plugin <id>`, docs/plugins.md): when set,
   * `X-Internal-API-Key` must carry it on every `/internal/*` route. A server of several plugins
   * gives a function answering each plugin's credential.
   */
  internalApiKey?: PluginKey | undefined;
  settingsSource?: SettingsSource;
  /** A pino logger; silent when absent. */
  logger?: FastifyBaseLogger;
  /** prom-client registry for /metrics; a fresh one when absent. */
  registry?: Registry;
  /** Largest accepted request body. Default 40 MiB (an Email with base64 attachments). */
  bodyLimitBytes?: number;
  /** Name reported by `GET /health` when several plugins are served. Default `trawl-plugins`. */
  serviceName?: string;
}

/** The header that carries a call's deadline in milliseconds. */
export const TIMEOUT_HEADER = 'x-trawl-timeout-ms';
/** The header that carries the internal API key. */
export const INTERNAL_KEY_HEADER = 'x-internal-api-key';
const MAX_TIMEOUT_MS = 3_600_000;
const ID_RE = /^[a-z0-9][a-z0-9_.-]{0,62}$/;
const RESERVED_IDS = new Set(['internal', 'health', 'metrics', 'capabilities']);

/** `GET /capabilities` of one plugin. */
export interface PluginCapabilities {
  id: string;
  version: string;
  kind: PluginDefinition['kind'];
  description: string;
  settings: Record<string, unknown>;
}

/** What a plugin declares at /capabilities. */
export function capabilitiesOf(def: PluginDefinition): PluginCapabilities {
  let settings: Record<string, unknown>;
  try {
    settings = z.toJSONSchema(def.settings, { io: 'input', unrepresentable: 'any' }) as Record<
      string,
      unknown
    >;
  } catch {
    settings = { type: 'object' };
  }
  return {
    id: def.id,
    version: def.version,
    kind: def.kind,
    description: def.description ?? '',
    settings,
  };
}

function checkDefinitions(plugins: PluginDefinition[]): void {
  const seen = new Set<string>();
  for (const p of plugins) {
    if (!ID_RE.test(p.id) || RESERVED_IDS.has(p.id)) {
      throw new TrawlError(
        PLUGIN_ERROR_CODES.definitionInvalid,
        `plugin id '${p.id}' is not usable: lower-case letters, digits, '_', '-', '.'; not a reserved name`,
      );
    }
    if (seen.has(p.id)) {
      throw new TrawlError(
        PLUGIN_ERROR_CODES.definitionInvalid,
        `plugin id '${p.id}' is defined twice`,
      );
    }
    seen.add(p.id);
  }
}

function timeoutFrom(request: FastifyRequest): number | undefined {
  const raw = request.headers[TIMEOUT_HEADER];
  const v = Array.isArray(raw) ? raw[0] : raw;
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) return undefined;
  return Math.min(Math.floor(n), MAX_TIMEOUT_MS);
}

/**
 * An AbortSignal for one call: aborted when the client disconnects before the answer is written,
 * or when `X-Trawl-Timeout-Ms` passes. `dispose` clears the timer.
 */
function callSignal(id: string, request: FastifyRequest, reply: FastifyReply) {
  const ac = new AbortController();
  const timeoutMs = timeoutFrom(request);
  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(() => ac.abort(new PluginTimeoutError(id, timeoutMs)), timeoutMs);
  const onClose = () => {
    if (!reply.raw.writableFinished) ac.abort(new PluginAbortedError(id));
  };
  reply.raw.once('close', onClose);
  return {
    signal: ac.signal,
    dispose() {
      if (timer) clearTimeout(timer);
      reply.raw.off('close', onClose);
    },
  };
}

/** The message of an error's cause, for the log only (never in the answer). */
function causeOf(e: Error): { cause?: string } {
  const c = e.cause;
  if (c === undefined) return {};
  return { cause: c instanceof Error ? `${c.name}: ${c.message}` : String(c) };
}

function sendError(
  e: unknown,
  def: PluginDefinition,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  if (e instanceof PluginInvalidAnswerError) {
    request.log.error({ plugin: def.id, code: e.code, err: e.message }, e.message);
    return sendProblem(request, reply, { status: 500, code: e.code, detail: e.message });
  }
  if (e instanceof TransientError) {
    request.log.warn(
      { plugin: def.id, code: e.code, err: e.message, ...causeOf(e) },
      'plugin call failed',
    );
    reply.header('retry-after', String(e.retryAfterSeconds));
    return sendProblem(request, reply, { status: 503, code: e.code, detail: e.message });
  }
  if (e instanceof TrawlError) {
    const status = e.status >= 400 && e.status <= 599 ? e.status : 500;
    request.log.warn(
      { plugin: def.id, code: e.code, err: e.message, ...causeOf(e) },
      'plugin call failed',
    );
    return sendProblem(request, reply, {
      status,
      code: e.code,
      detail: e.message,
      ...(e.problems ? { errors: e.problems } : {}),
    });
  }
  request.log.error({ plugin: def.id, err: e }, 'plugin threw an unexpected error');
  return sendProblem(request, reply, {
    status: 500,
    code: PLUGIN_ERROR_CODES.failed,
    detail: `plugin '${def.id}' failed unexpectedly; its log carries request id ${String(request.id)}`,
  });
}

/**
 * Builds the HTTP app serving `plugins` (not listening). Per plugin, under `/<id>`:
 * `POST /internal/analyze` (analyzers) or `POST /internal/enrich` (providers), `GET /health`,
 * `GET /capabilities`; the same routes at the root when a single plugin is served; `GET /health`
 * and `GET /metrics` at the root.
 */
export function createPluginApp(opts: PluginAppOptions): FastifyInstance {
  checkDefinitions(opts.plugins);
  const app = Fastify({
    ...(opts.logger ? { loggerInstance: opts.logger } : { logger: false }),
    bodyLimit: opts.bodyLimitBytes ?? 40 * 1024 * 1024,
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
  });
  const metrics = createPluginMetrics(opts.registry);
  const source = opts.settingsSource ?? {};
  const settingsFor = (id: string): unknown =>
    typeof source === 'function' ? source(id) : (source as Record<string, unknown>)[id];
  const key = opts.internalApiKey;

  const noRoute = (request: FastifyRequest, reply: FastifyReply) =>
    sendProblem(request, reply, {
      status: 404,
      code: ERROR_CODES.notFound,
      detail: `no route ${request.method} ${request.url.split('?')[0]}`,
    });
  // a request for no route is answered before its body is read (Fastify would read and parse it
  // for the not-found handler, up to bodyLimitBytes, whoever sent it)
  app.addHook('onRequest', async (request, reply) => {
    if (request.is404) return noRoute(request, reply);
  });
  app.setNotFoundHandler(noRoute);
  app.setErrorHandler((err: unknown, request, reply) => {
    const e = err as { statusCode?: number; code?: string; message?: string };
    const status = typeof e.statusCode === 'number' && e.statusCode >= 400 ? e.statusCode : 500;
    if (status >= 500) {
      request.log.error({ err }, 'request failed');
      return sendProblem(request, reply, {
        status: 500,
        code: ERROR_CODES.internal,
        detail: `internal error; the log carries request id ${String(request.id)}`,
      });
    }
    return sendProblem(request, reply, {
      status,
      code: status === 413 ? ERROR_CODES.payloadTooLarge : ERROR_CODES.validation,
      detail: e.message ?? 'bad request',
    });
  });

  // onRequest: a caller without the plugin's credential is refused before its body is read
  const requireKey = (id: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const expected = pluginKeyOf(key, id);
    if (expected === undefined) return;
    const raw = request.headers[INTERNAL_KEY_HEADER];
    const presented = Array.isArray(raw) ? raw[0] : raw;
    if (!keyMatches(presented, expected)) {
      return sendProblem(request, reply, {
        status: 401,
        code: ERROR_CODES.unauthorized,
        detail: `missing or wrong ${INTERNAL_KEY_HEADER} header`,
      });
    }
  };

  const register = (def: PluginDefinition, prefix: string) => {
    const caps = capabilitiesOf(def);
    app.get(`${prefix}/health`, async () => ({
      status: 'ok',
      id: def.id,
      version: def.version,
      kind: def.kind,
    }));
    app.get(`${prefix}/capabilities`, async () => caps);
    const onResponse = async (_req: FastifyRequest, reply: FastifyReply) => {
      metrics.requests.inc({ plugin: def.id, status: String(reply.statusCode) });
      metrics.duration.observe({ plugin: def.id }, reply.elapsedTime / 1000);
    };
    const log = (request: FastifyRequest) => {
      const child = request.log.child({ plugin: def.id });
      return {
        info: (obj: object, msg?: string) => child.info(obj, msg),
        warn: (obj: object, msg?: string) => child.warn(obj, msg),
      };
    };
    /** POST <prefix>/internal/<verb>: validate the body, invoke the plugin with a deadline, answer. */
    const internalRoute = <T>(
      verb: 'analyze' | 'enrich',
      schema: z.ZodType<T>,
      what: string,
      invoke: (input: T, signal: AbortSignal, request: FastifyRequest) => Promise<unknown>,
    ) =>
      app.post(
        `${prefix}/internal/${verb}`,
        { onRequest: requireKey(def.id), onResponse },
        async (request, reply) => {
          const parsed = parseWith(schema, request.body);
          if (!parsed.ok) {
            return sendProblem(request, reply, {
              status: 422,
              code: ERROR_CODES.validation,
              detail: `the body is not a valid ${what}`,
              errors: parsed.problems,
            });
          }
          const call = callSignal(def.id, request, reply);
          try {
            return reply.code(200).send(await invoke(parsed.value, call.signal, request));
          } catch (e) {
            return sendError(e, def, request, reply);
          } finally {
            call.dispose();
          }
        },
      );
    if (def.kind === 'analyzer') {
      internalRoute('analyze', Email, 'Email', (email, signal, request) =>
        invokeAnalyzer(def, email, settingsFor(def.id), signal, { log: log(request) }),
      );
    } else {
      internalRoute(
        'enrich',
        EnrichRequest,
        'enrich request {email, stage, workflow_id}',
        (req, signal, request) =>
          invokeProvider(def, req, settingsFor(def.id), signal, { log: log(request) }),
      );
    }
  };

  for (const def of opts.plugins) register(def, `/${def.id}`);
  const single = opts.plugins.length === 1 ? opts.plugins[0] : undefined;
  if (single) {
    register(single, '');
  } else {
    app.get('/health', async () => ({
      status: 'ok',
      service: opts.serviceName ?? 'trawl-plugins',
      plugins: opts.plugins.map((p) => ({ id: p.id, version: p.version, kind: p.kind })),
    }));
    app.get('/capabilities', async () => ({ plugins: opts.plugins.map(capabilitiesOf) }));
  }
  app.get('/metrics', async (_request, reply) => {
    const text = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(text);
  });
  return app;
}
