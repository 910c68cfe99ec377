import {
  type AnalyzerAnswer,
  credentialDeriver,
  describeAnswer,
  type Email,
  EnrichmentResult,
  type EnrichRequest,
  errorText,
  isNotConfigured,
  PeerAnswerError,
  readBounded,
  safeParseAnalyzerAnswer,
} from '@trawl/contracts';
import { Pool } from 'undici';
import { z } from 'zod';
import { invalidAnswerError, PluginCallError, type PluginKind, pluginLabel } from './errors.ts';
import type { CallOptions, PluginInvoker } from './invoker.ts';

/** Where one plugin is: its base URL. */
export interface PluginTarget {
  /** The plugin's base address, e.g. http://127.0.0.1:8100/headers. */
  url: string;
}

/** Where each plugin is, by id. */
export interface PluginTargets {
  analyzers?: Record<string, PluginTarget>;
  providers?: Record<string, PluginTarget>;
}

/** Where the plugins are and how they are called (platform key, timeouts, limits). */
export interface PluginClientOptions extends PluginTargets {
  /**
   * The platform key (`INTERNAL_API_KEY`). It never leaves this process: each plugin is sent its
   * own credential derived from it (`plugin:<id>`, see @trawl/contracts credentials.ts) as
   * X-Internal-API-Key, which is what that plugin checks, and the only key it holds.
   */
  internalApiKey?: string | undefined;
  /** Keep-alive connections per origin (default 32). */
  connections?: number;
  /** Timeout of a call when the caller gives none (default 30000 ms). */
  defaultTimeoutMs?: number;
  /** Largest answer body accepted (default 10 MiB). */
  maxAnswerBytes?: number;
}

/** A plugin's /health answer, or why there was none. */
export interface HealthReport {
  ok: boolean;
  latency_ms: number;
  error?: string;
}

/** GET <url>/capabilities: free-form, validated as a JSON object. */
export const Capabilities = z.record(z.string(), z.unknown());
export type Capabilities = z.infer<typeof Capabilities>;

/** Calls analyzers and providers over HTTP, each call bounded. */
export interface PluginClient extends PluginInvoker {
  /** GET <url>/health of an analyzer or provider; never throws. */
  health(id: string, opts?: CallOptions): Promise<HealthReport>;
  /** GET <url>/capabilities of an analyzer or provider. */
  capabilities(id: string, opts?: CallOptions): Promise<Capabilities>;
  /** Replaces the address maps (after a configuration reload); pools of unused origins close. */
  setTargets(targets: PluginTargets): void;
  /** Ids currently known. */
  ids(): { analyzers: string[]; providers: string[] };
  close(): Promise<void>;
}

interface Resolved {
  origin: string;
  basePath: string;
  /** Headers of its calls (its own credential). */
  post: Record<string, string>;
  get: Record<string, string>;
}

function resolveTarget(
  kind: PluginKind,
  id: string,
  t: PluginTarget,
  credential: string | undefined,
): Resolved {
  let u: URL;
  try {
    u = new URL(t.url);
  } catch (cause) {
    throw new PluginCallError('unknown', kind, id, `${pluginLabel(kind, id)} has an invalid url`, {
      cause,
    });
  }
  const basePath = u.pathname.replace(/\/+$/, '');
  const auth: Record<string, string> = credential ? { 'x-internal-api-key': credential } : {};
  return {
    origin: u.origin,
    basePath,
    post: { 'content-type': 'application/json', ...auth },
    get: auth,
  };
}

/** Bytes of an answer outside 2xx read for its error message (problem details fit). */
const ERROR_BODY_BYTES = 4096;

function oneLine(s: string, max = 200): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max)}…` : t;
}

/**
 * HTTP client to analyzers (POST <url>/internal/analyze) and context providers
 * (POST <url>/internal/enrich): one keep-alive undici Pool per origin, per-call timeouts and
 * cancellation, answers validated against the contracts. Every failure is a PluginCallError with a
 * message naming the plugin and the reason.
 */
export function createPluginClient(opts: PluginClientOptions = {}): PluginClient {
  const connections = opts.connections ?? 32;
  const defaultTimeoutMs = opts.defaultTimeoutMs ?? 30_000;
  const maxAnswerBytes = opts.maxAnswerBytes ?? 10 * 1024 * 1024;
  const pools = new Map<string, Pool>();
  let analyzers = new Map<string, Resolved>();
  let providers = new Map<string, Resolved>();
  let closed = false;

  const derive = opts.internalApiKey ? credentialDeriver(opts.internalApiKey) : undefined;
  // A plugin id the credentials cannot name gets no credential (its calls are then refused by a
  // plugin that checks one), never the platform key.
  const credentialOf = (id: string): string | undefined => {
    if (!derive) return undefined;
    try {
      return derive({ kind: 'plugin', id });
    } catch {
      return undefined;
    }
  };

  function setTargets(t: PluginTargets): void {
    const a = new Map<string, Resolved>();
    const p = new Map<string, Resolved>();
    for (const [id, target] of Object.entries(t.analyzers ?? {}))
      a.set(id, resolveTarget('analyzer', id, target, credentialOf(id)));
    for (const [id, target] of Object.entries(t.providers ?? {}))
      p.set(id, resolveTarget('context_provider', id, target, credentialOf(id)));
    analyzers = a;
    providers = p;
    const used = new Set([...a.values(), ...p.values()].map((r) => r.origin));
    for (const [origin, pool] of pools) {
      if (!used.has(origin)) {
        pools.delete(origin);
        void pool.close().catch(() => undefined);
      }
    }
  }
  setTargets(opts);

  function poolFor(origin: string): Pool {
    let pool = pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, {
        connections,
        pipelining: 1,
        keepAliveTimeout: 30_000,
        keepAliveMaxTimeout: 600_000,
        connectTimeout: 10_000,
      });
      pools.set(origin, pool);
    }
    return pool;
  }

  function lookup(kind: PluginKind, id: string): Resolved {
    const r = (kind === 'analyzer' ? analyzers : providers).get(id);
    if (!r) {
      throw new PluginCallError('unknown', kind, id, `${pluginLabel(kind, id)} is not configured`);
    }
    return r;
  }

  /** One HTTP exchange; answers the parsed JSON body of a 2xx answer or throws PluginCallError. */
  async function call(
    kind: PluginKind,
    id: string,
    method: 'GET' | 'POST',
    suffix: string,
    payload: unknown,
    callOpts: CallOptions | undefined,
  ): Promise<unknown> {
    const label = pluginLabel(kind, id);
    if (closed) throw new PluginCallError('unreachable', kind, id, `${label}: client closed`);
    const target = lookup(kind, id);
    const outer = callOpts?.signal;
    if (outer?.aborted) throw new PluginCallError('aborted', kind, id, `${label}: call cancelled`);
    const timeoutMs = callOpts?.timeoutMs ?? defaultTimeoutMs;
    const ac = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ac.abort();
    }, timeoutMs);
    const onOuterAbort = () => ac.abort();
    outer?.addEventListener('abort', onOuterAbort, { once: true });
    const fail = (cause: unknown): PluginCallError => {
      if (timedOut)
        return new PluginCallError(
          'timeout',
          kind,
          id,
          `${label} timed out after ${timeoutMs} ms`,
          {
            cause,
          },
        );
      if (outer?.aborted)
        return new PluginCallError('aborted', kind, id, `${label}: call cancelled`, { cause });
      const code = (cause as { code?: string } | null)?.code;
      const msg = errorText(cause);
      return new PluginCallError(
        'unreachable',
        kind,
        id,
        `${label} is unreachable: ${code ? `${code} ` : ''}${oneLine(msg)}`,
        { cause },
      );
    };
    try {
      let res: Awaited<ReturnType<Pool['request']>>;
      try {
        res = await poolFor(target.origin).request({
          path: target.basePath + suffix,
          method,
          headers: method === 'POST' ? target.post : target.get,
          body: method === 'POST' ? JSON.stringify(payload) : null,
          signal: ac.signal,
          headersTimeout: timeoutMs + 1000,
          bodyTimeout: timeoutMs + 1000,
        });
      } catch (e) {
        throw fail(e);
      }
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      let body: Buffer;
      let truncated: boolean;
      try {
        // a 2xx answer up to maxAnswerBytes; any other, 4 KiB for its message (the
        // rest is never read: destroying the body closes the connection)
        ({ bytes: body, truncated } = await readBounded(res.body, {
          maxBytes: ok ? maxAnswerBytes : ERROR_BODY_BYTES,
          over: ok ? 'fail' : 'truncate',
        }));
      } catch (e) {
        if (e instanceof PeerAnswerError) {
          throw new PluginCallError(
            'invalidAnswer',
            kind,
            id,
            `${label} answered more than ${maxAnswerBytes} bytes`,
          );
        }
        throw fail(e);
      }
      if (!ok) {
        const text = body.toString('utf8');
        // a plugin saying it is not configured (problem details, issue 27): read whole or not at all
        if (!truncated && problemSaysNotConfigured(text)) {
          throw new PluginCallError('notConfigured', kind, id, `${label}: ${oneLine(text)}`, {
            statusCode: res.statusCode,
          });
        }
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) {
          if (typeof v === 'string') headers.set(k, v);
        }
        const what = describeAnswer({ status: res.statusCode, headers, body, truncated }, 200);
        // 504: the plugin stopped the call at its own deadline (the analyzers service's worker
        // pool does): a timeout, as when this client's timer fires first
        throw new PluginCallError(
          res.statusCode === 504 ? 'timeout' : 'status',
          kind,
          id,
          `${label} answered ${what.slice('HTTP '.length)}`,
          { statusCode: res.statusCode },
        );
      }
      const text = body.toString('utf8');
      try {
        return JSON.parse(text);
      } catch (e) {
        throw new PluginCallError(
          'invalidAnswer',
          kind,
          id,
          `${label} answered invalid JSON: ${oneLine(errorText(e), 120)}`,
          { cause: e },
        );
      }
    } finally {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuterAbort);
    }
  }

  function validate<T>(
    kind: PluginKind,
    id: string,
    parse: (v: unknown) => z.ZodSafeParseResult<T>,
    data: unknown,
  ): T {
    const r = parse(data);
    if (r.success) return r.data;
    throw invalidAnswerError(kind, id, r.error);
  }

  return {
    async analyze(id: string, email: Email, o?: CallOptions): Promise<AnalyzerAnswer> {
      const data = await call('analyzer', id, 'POST', '/internal/analyze', email, o);
      // exactly AnalyzerAnswer.safeParse, with a cheap path for plain valid answers
      return validate('analyzer', id, safeParseAnalyzerAnswer, data);
    },
    async enrich(id: string, req: EnrichRequest, o?: CallOptions): Promise<EnrichmentResult> {
      const data = await call('context_provider', id, 'POST', '/internal/enrich', req, o);
      return validate('context_provider', id, (v) => EnrichmentResult.safeParse(v), data);
    },
    async health(id: string, o?: CallOptions): Promise<HealthReport> {
      const kind: PluginKind = analyzers.has(id) ? 'analyzer' : 'context_provider';
      const started = performance.now();
      try {
        await call(kind, id, 'GET', '/health', undefined, { timeoutMs: 5000, ...o });
        return { ok: true, latency_ms: Math.round((performance.now() - started) * 100) / 100 };
      } catch (e) {
        return {
          ok: false,
          latency_ms: Math.round((performance.now() - started) * 100) / 100,
          error: errorText(e),
        };
      }
    },
    async capabilities(id: string, o?: CallOptions): Promise<Capabilities> {
      const kind: PluginKind = analyzers.has(id) ? 'analyzer' : 'context_provider';
      const data = await call(kind, id, 'GET', '/capabilities', undefined, {
        timeoutMs: 5000,
        ...o,
      });
      return validate(kind, id, (v) => Capabilities.safeParse(v), data);
    },
    setTargets,
    ids: () => ({ analyzers: [...analyzers.keys()], providers: [...providers.keys()] }),
    async close(): Promise<void> {
      closed = true;
      const all = [...pools.values()];
      pools.clear();
      await Promise.all(all.map((p) => p.close().catch(() => undefined)));
    },
  };
}

/** Whether an error answer is a problem whose `code` ends in `_NOT_CONFIGURED` (issue 32). */
function problemSaysNotConfigured(text: string | null): boolean {
  if (!text?.includes('_NOT_CONFIGURED')) return false;
  try {
    return isNotConfigured(JSON.parse(text));
  } catch {
    return false;
  }
}
