import { TrawlError, toProblems } from '@trawl/contracts';
import type { z } from 'zod';

/** Error codes of @trawl/plugin-client (listed in docs/errors.md). */
export const PLUGIN_ERROR_CODES = {
  /** The plugin answered with a status outside 2xx. */
  status: 'TRAWL_ERR_PLUGIN_STATUS',
  /** The call did not finish within its timeout. */
  timeout: 'TRAWL_ERR_PLUGIN_TIMEOUT',
  /** The plugin could not be reached (refused, reset, DNS, closed socket). */
  unreachable: 'TRAWL_ERR_PLUGIN_UNREACHABLE',
  /** The answer was not JSON, too large, or did not match the contract. */
  invalidAnswer: 'TRAWL_ERR_PLUGIN_INVALID_ANSWER',
  /** The caller cancelled the call. */
  aborted: 'TRAWL_ERR_PLUGIN_ABORTED',
  /** No plugin with this id is configured. */
  unknown: 'TRAWL_ERR_PLUGIN_UNKNOWN',
  /**
   * The plugin is switched off (service.yaml), or answered a problem whose code ends in
   * `_NOT_CONFIGURED` (it has nothing to work with, as the llm analyzer without an `llm_host`):
   * the engine skips it as not configured (issue 32).
   */
  notConfigured: 'TRAWL_ERR_PLUGIN_NOT_CONFIGURED',
} as const;

/** What a plugin is: an analyzer or a context provider. */
export type PluginKind = 'analyzer' | 'context_provider';
/** How a plugin call failed (PLUGIN_ERROR_CODES). */
export type PluginFailure = keyof typeof PLUGIN_ERROR_CODES;

/**
 * A failed plugin call. `failure` says why; `timedOut` is true for a timeout (the engine records the
 * call as `timeout` rather than `failed`). Retryable: timeouts, unreachable plugins, 5xx and 429.
 */
export class PluginCallError extends TrawlError {
  readonly pluginId: string;
  readonly pluginKind: PluginKind;
  readonly failure: PluginFailure;
  readonly statusCode: number | undefined;
  readonly timedOut: boolean;
  constructor(
    failure: PluginFailure,
    pluginKind: PluginKind,
    pluginId: string,
    message: string,
    opts: { statusCode?: number; cause?: unknown } = {},
  ) {
    const retryable =
      failure === 'timeout' ||
      failure === 'unreachable' ||
      (failure === 'status' &&
        opts.statusCode !== undefined &&
        (opts.statusCode >= 500 || opts.statusCode === 429));
    super(PLUGIN_ERROR_CODES[failure], message, {
      status: 502,
      retryable,
      cause: opts.cause,
    });
    this.pluginId = pluginId;
    this.pluginKind = pluginKind;
    this.failure = failure;
    this.statusCode = opts.statusCode;
    this.timedOut = failure === 'timeout';
  }
}

export function pluginLabel(kind: PluginKind, id: string): string {
  return kind === 'analyzer' ? `analyzer ${id}` : `context provider ${id}`;
}

/** The error of an answer that does not match its contract: the first five problems, by path. */
export function invalidAnswerError(
  kind: PluginKind,
  id: string,
  error: z.ZodError,
): PluginCallError {
  const detail = toProblems(error)
    .slice(0, 5)
    .map((p) => `${p.path || '/'}: ${p.message}`)
    .join('; ');
  return new PluginCallError(
    'invalidAnswer',
    kind,
    id,
    `${pluginLabel(kind, id)} answered an invalid result: ${detail}`,
  );
}
