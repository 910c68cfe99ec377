import {
  AnalyzerConfigView,
  backoffDelay,
  fetchBounded,
  type PeerAnswer,
  PeerAnswerError,
  TrawlError,
} from '@trawl/contracts';
import type { PluginDefinition } from './define.ts';
import { PLUGIN_ERROR_CODES } from './errors.ts';
import { resolveSettings } from './settings-resolve.ts';

/** Where fetching settings reports. */
export interface SettingsLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** Where a plugin fetches its settings from the gateway, and how often. */
export interface FetchSettingsOptions {
  /** Root of the API gateway, e.g. `http://api-gateway:8001` (with or without `/api/v1`). */
  gatewayUrl: string;
  /** The plugin's own credential (`trawl credentials plugin <id>`). */
  internalApiKey?: string | undefined;
  id: string;
  /** Retries after the first attempt when the gateway is unreachable or answers 5xx. Default 3. */
  retries?: number;
  /** First backoff; doubles per retry. Default 500 ms. */
  backoffMs?: number;
  /** Per-attempt timeout. Default 5000 ms. */
  attemptTimeoutMs?: number;
  /** When given, the settings are merged over its schema defaults and validated. */
  def?: PluginDefinition;
  fetch?: typeof fetch;
  log?: SettingsLogger;
  signal?: AbortSignal;
}

/** A plugin's settings as fetched, refreshed in the background. */
export interface FetchedSettings {
  id: string;
  /** `gateway` when the gateway answered; `defaults` when it was unreachable or does not know the id. */
  source: 'gateway' | 'defaults';
  enabled: boolean;
  /** Raw settings as configured, or parsed over the schema defaults when `def` was given. */
  settings: Record<string, unknown>;
  url?: string;
  version?: string;
}

/** Largest settings document read from the gateway; a larger one is refused unread. */
const MAX_SETTINGS_BYTES = 16 * 1024 * 1024;

function configUrl(gatewayUrl: string, id: string): string {
  const base = gatewayUrl.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
  return `${base}/api/v1/config/analyzers/${encodeURIComponent(id)}`;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    });
  });

function finish(
  opts: FetchSettingsOptions,
  out: Omit<FetchedSettings, 'settings'> & { settings: unknown },
): FetchedSettings {
  const settings = opts.def
    ? resolveSettings<Record<string, unknown>>(opts.def, out.settings)
    : ((out.settings ?? {}) as Record<string, unknown>);
  return { ...out, settings };
}

/**
 * GET `<gateway>/api/v1/config/analyzers/<id>` with `X-Internal-API-Key`, retrying with exponential
 * backoff on network errors and 5xx. Falls back to the plugin's defaults (logged) when the gateway
 * stays unreachable or answers 404. A 401/403 or a malformed answer is a configuration error and
 * throws (TRAWL_ERR_PLUGIN_SETTINGS_REJECTED); settings that do not match the schema throw
 * TRAWL_ERR_PLUGIN_SETTINGS_INVALID.
 */
export async function fetchSettings(opts: FetchSettingsOptions): Promise<FetchedSettings> {
  const doFetch = opts.fetch ?? fetch;
  const retries = opts.retries ?? 3;
  const backoffMs = opts.backoffMs ?? 500;
  const url = configUrl(opts.gatewayUrl, opts.id);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (opts.internalApiKey) headers['x-internal-api-key'] = opts.internalApiKey;
  let lastProblem = '';
  for (let attempt = 0; attempt <= retries; attempt++) {
    if (attempt > 0) {
      await sleep(
        backoffDelay(attempt, { initialMs: backoffMs, maxMs: Number.POSITIVE_INFINITY }),
        opts.signal,
      );
    }
    if (opts.signal?.aborted) break;
    let res: PeerAnswer;
    try {
      res = await fetchBounded(
        url,
        { headers },
        {
          maxBytes: MAX_SETTINGS_BYTES,
          timeoutMs: opts.attemptTimeoutMs ?? 5000,
          errorBytes: 0,
          signal: opts.signal,
          fetch: doFetch,
        },
      );
    } catch (e) {
      if (e instanceof PeerAnswerError && e.kind === 'too-large') {
        throw new TrawlError(
          PLUGIN_ERROR_CODES.settingsRejected,
          `the gateway answered a settings document for '${opts.id}' over ${MAX_SETTINGS_BYTES} bytes`,
          { status: 500 },
        );
      }
      lastProblem = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
      opts.log?.warn(
        { plugin: opts.id, attempt: attempt + 1, err: lastProblem },
        'settings fetch failed',
      );
      continue;
    }
    if (res.status === 404) {
      opts.log?.warn(
        { plugin: opts.id },
        'gateway does not know this plugin; using default settings',
      );
      return finish(opts, { id: opts.id, source: 'defaults', enabled: true, settings: {} });
    }
    if (res.status === 401 || res.status === 403) {
      throw new TrawlError(
        PLUGIN_ERROR_CODES.settingsRejected,
        `the gateway refused the settings request for '${opts.id}' (HTTP ${res.status}): check the plugin's credential (trawl credentials plugin ${opts.id})`,
        { status: 500 },
      );
    }
    if (res.status >= 500) {
      lastProblem = `HTTP ${res.status}`;
      opts.log?.warn(
        { plugin: opts.id, attempt: attempt + 1, status: res.status },
        'settings fetch failed',
      );
      continue;
    }
    let body: unknown;
    try {
      body = JSON.parse(res.body.toString('utf8'));
    } catch {
      body = undefined;
    }
    const view = AnalyzerConfigView.safeParse(body);
    if (res.status < 200 || res.status > 299 || !view.success) {
      throw new TrawlError(
        PLUGIN_ERROR_CODES.settingsRejected,
        `the gateway answered an unusable settings document for '${opts.id}' (HTTP ${res.status})`,
        { status: 500 },
      );
    }
    opts.log?.info(
      { plugin: opts.id, version: view.data.version, enabled: view.data.enabled },
      'settings fetched from the gateway',
    );
    return finish(opts, {
      id: opts.id,
      source: 'gateway',
      enabled: view.data.enabled,
      settings: view.data.settings,
      ...(view.data.url === undefined ? {} : { url: view.data.url }),
      version: view.data.version,
    });
  }
  opts.log?.warn(
    { plugin: opts.id, err: lastProblem },
    'gateway unreachable; using the default settings of the plugin',
  );
  return finish(opts, { id: opts.id, source: 'defaults', enabled: true, settings: {} });
}
