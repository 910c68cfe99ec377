import type { ServiceConfigFile } from '@trawl/contracts';
import type { Store } from '@trawl/platform';
import { createPluginClient, pluginTargets } from '@trawl/plugin-client';
import { createListCache } from './lists/index.ts';
import { createEmbeddedInvoker, type EmbeddedInvoker } from './local-invoker.ts';
import { builtinPlugins } from './registry.ts';
import { type AnalysisPool, createAnalysisPool } from './worker-pool/analysis-pool.ts';

/** How an orchestrator reaches the built-in analyzers and providers. */
export interface BuiltinInvokerSettings {
  /** In this process (true) or over HTTP at `builtinsUrl` (the analyzers service). */
  inProcess: boolean;
  builtinsUrl: string;
  /** Worker threads for the offline analyzers (0: on the calling thread). */
  workers: number;
  /** Only a message at least this large goes to a worker (0: every message). */
  pooledMinChars: number;
  /** The pool's hard stop of a call without its own timeout. */
  timeoutMs: number;
  internalApiKey: string | undefined;
}

/** The invoker of an orchestrator's jobs, the parts it opened, and the built-ins it runs. */
export interface BuiltinInvoker {
  invoker: EmbeddedInvoker;
  /** The worker pool, when there is one (its owner closes it after the invoker). */
  pool: AnalysisPool | undefined;
  /** The allow and block lists of the in-process `lists` analyzer (issue 32), read again on demand. */
  lists: { reload(): Promise<void> } | undefined;
  /** The analyzer and provider ids built into this process (none over HTTP). */
  ids: { analyzers: string[]; providers: string[] };
}

/**
 * The built-in analyzers as an orchestrator calls them: in this process (the offline ones in
 * `workers` worker threads, ADR 010) or over HTTP; `service` is read at each call (a reload).
 */
export async function createBuiltinInvoker(
  store: Pick<Store, 'senders' | 'classifier' | 'lists'>,
  service: () => ServiceConfigFile,
  s: BuiltinInvokerSettings,
  onReplace: (info: object) => void,
): Promise<BuiltinInvoker> {
  const ids = { analyzers: [] as string[], providers: [] as string[] };
  if (!s.inProcess) {
    const http = createPluginClient({
      ...pluginTargets(service(), s.builtinsUrl),
      internalApiKey: s.internalApiKey,
      defaultTimeoutMs: s.timeoutMs,
    });
    const invoker: EmbeddedInvoker = {
      analyze: (id, email, o) => http.analyze(id, email, o),
      enrich: (id, req, o) => http.enrich(id, req, o),
      health: (id) => http.health(id),
      setService: (svc) => http.setTargets(pluginTargets(svc, s.builtinsUrl)),
      close: () => http.close(),
    };
    return { invoker, pool: undefined, lists: undefined, ids };
  }
  const lists = createListCache(store.lists);
  const builtins = builtinPlugins({ senders: store.senders, classifier: store.classifier, lists });
  for (const p of Object.values(builtins)) {
    (p.kind === 'analyzer' ? ids.analyzers : ids.providers).push(p.id);
  }
  const pool =
    s.workers > 0
      ? await createAnalysisPool({ size: s.workers, defaultTimeoutMs: s.timeoutMs, onReplace })
      : undefined;
  const invoker = createEmbeddedInvoker({
    builtins,
    service,
    internalApiKey: s.internalApiKey,
    pool,
    pooledMinChars: s.pooledMinChars,
  });
  return { invoker, pool, lists, ids };
}
