import { type Email, pluginDisabled, type ServiceConfigFile } from '@trawl/contracts';
import {
  createInProcessInvoker,
  createPluginClient,
  type InProcessAnalyzer,
  type InProcessProvider,
  PluginCallError,
  type PluginClient,
  type PluginInvoker,
  pluginTargets,
} from '@trawl/plugin-client';
import { type PluginDefinition, resolveSettings } from '@trawl/plugin-sdk';
import type { AnalysisPool } from './worker-pool/analysis-pool.ts';

const silentLog = { info() {}, warn() {} };

/** What a definition's code receives: its settings, and the call's signal read when it reads it. */
class DefinitionContext {
  readonly log = silentLog;
  constructor(
    readonly settings: unknown,
    private readonly call: { readonly signal: AbortSignal },
  ) {}

  get signal(): AbortSignal {
    return this.call.signal;
  }
}

/** Settings of a built-in: form A settings, overridden by a form B entry's settings. */
function settingsOf(svc: ServiceConfigFile, id: string): unknown {
  const a = svc.analyzers[id]?.settings;
  const b = svc.plugins.analyzers[id]?.settings ?? svc.plugins.context_providers[id]?.settings;
  if (a && b) return { ...a, ...b };
  return b ?? a ?? {};
}

/** The in-process invoker of the built-in analyzers and providers (see createEmbeddedInvoker). */
export interface EmbeddedInvoker extends PluginInvoker {
  health(id: string): Promise<{ ok: boolean; latency_ms: number; error?: string }>;
  /** Points the HTTP side at the plugin addresses of a new service.yaml (after a reload). */
  setService(svc: ServiceConfigFile): void;
  close(): Promise<void>;
}

/**
 * The local invoker (embedded mode, and scale-out orchestrators with TRAWL_BUILTINS_IN_PROCESS):
 * built-in analyzers and providers run in this process (no HTTP hop) with the settings of the current
 * service.yaml; a plugin registered with a url (form B, or form A with `url`) is called over HTTP,
 * even when it has a built-in's id. With a `pool`, the built-in analyzers it runs (the offline,
 * CPU-bound ones) run in its worker threads, where a call past its deadline is stopped; the others
 * (llm, context, the providers: they wait on I/O) run as functions on this thread.
 */
export function createEmbeddedInvoker(opts: {
  builtins: Record<string, PluginDefinition>;
  service: () => ServiceConfigFile;
  internalApiKey: string | undefined;
  /** Worker threads for the analyzers among its `ids` (see createAnalysisPool). */
  pool?: AnalysisPool | undefined;
  /**
   * Only a message at least this large (bodies and attachments, in characters) goes to the pool;
   * smaller ones run on this thread (default 0: every message). A scale-out orchestrator sends only
   * large messages there: they are where work could run long, and the copy to a worker costs more
   * than a small message's whole analysis.
   */
  pooledMinChars?: number;
}): EmbeddedInvoker {
  const pool = opts.pool;
  const minChars = opts.pooledMinChars ?? 0;
  let targets = pluginTargets(opts.service());
  const http: PluginClient = createPluginClient({
    ...targets,
    internalApiKey: opts.internalApiKey,
  });
  const analyzers: Record<string, InProcessAnalyzer> = {};
  const providers: Record<string, InProcessProvider> = {};
  // Per service.yaml object (a reload brings a new one) and id: the parsed settings (a form A +
  // form B merge is a new object on every read, which resolveSettings' cache by raw object would
  // miss), and the error of a disabled plugin (made once: the default workflow asks a disabled llm
  // about every uncertain message, and an Error captures its stack).
  let memo:
    | { service: ServiceConfigFile; settings: Map<string, unknown>; refusals: Map<string, Error> }
    | undefined;
  const current = () => {
    const svc = opts.service();
    if (memo?.service !== svc) {
      memo = { service: svc, settings: new Map(), refusals: new Map() };
      if (pool) {
        const raw: Record<string, unknown> = {};
        for (const id of pool.ids) raw[id] = settingsOf(svc, id);
        pool.configure(raw);
      }
    }
    return memo;
  };
  const refuseDisabled = (kind: 'analyzer' | 'context_provider', id: string) => {
    const m = current();
    if (!pluginDisabled(m.service, id)) return;
    let err = m.refusals.get(id);
    if (!err) {
      err = new PluginCallError(
        'notConfigured',
        kind,
        id,
        `${kind} ${id} is disabled in service.yaml`,
      );
      m.refusals.set(id, err);
    }
    throw err;
  };
  const settings = (def: PluginDefinition): unknown => {
    const m = current();
    if (m.settings.has(def.id)) return m.settings.get(def.id);
    const parsed = resolveSettings(def, settingsOf(m.service, def.id));
    m.settings.set(def.id, parsed);
    return parsed;
  };
  // The in-process invoker bounds each call (timeout, cancellation) and validates each answer once:
  // the definitions are called directly, not through invokeAnalyzer / invokeProvider, which would
  // race the signal and validate again.
  for (const def of Object.values(opts.builtins)) {
    if (def.kind === 'analyzer') {
      analyzers[def.id] = (email, ctx) => {
        refuseDisabled('analyzer', def.id);
        return def.analyze(email, new DefinitionContext(settings(def), ctx));
      };
    } else {
      providers[def.id] = async (req, ctx) => {
        refuseDisabled('context_provider', def.id);
        const answer: unknown = await def.enrich(req, new DefinitionContext(settings(def), ctx));
        // the provider's id, whatever the answer says (as invokeProvider does)
        return (
          answer !== null && typeof answer === 'object'
            ? { ...answer, provider_id: def.id }
            : answer
        ) as Awaited<ReturnType<InProcessProvider>>;
      };
    }
  }
  const local = createInProcessInvoker({ analyzers, providers, fallback: http });
  const pooled = new Set(
    pool ? [...pool.ids].filter((id) => opts.builtins[id]?.kind === 'analyzer') : [],
  );
  return {
    analyze(id, email, o) {
      if (targets.analyzers[id]) return http.analyze(id, email, o);
      if (pool && pooled.has(id) && (minChars === 0 || messageChars(email) >= minChars)) {
        try {
          refuseDisabled('analyzer', id);
        } catch (e) {
          return Promise.reject(e);
        }
        return pool.analyze(id, email, o);
      }
      return local.analyze(id, email, o);
    },
    enrich(id, req, o) {
      return targets.providers[id] ? http.enrich(id, req, o) : local.enrich(id, req, o);
    },
    async health(id) {
      if (targets.analyzers[id] || targets.providers[id]) return http.health(id);
      if (!opts.builtins[id]) return { ok: false, latency_ms: 0, error: `${id} is not configured` };
      if (pluginDisabled(opts.service(), id))
        return { ok: false, latency_ms: 0, error: `${id} is disabled` };
      return { ok: true, latency_ms: 0 };
    },
    setService(svc) {
      targets = pluginTargets(svc);
      http.setTargets(targets);
    },
    // the pool is its owner's to close (it may outlive a reload of this invoker)
    close: () => http.close(),
  };
}

/** The characters of a message's bodies and attachments (what its analysis reads). */
function messageChars(email: Email): number {
  let n = (email.body_text?.length ?? 0) + (email.body_html?.length ?? 0);
  for (const a of email.attachments ?? []) n += a.content?.length ?? 0;
  return n;
}
