import { TrawlError } from '@trawl/contracts';

/** Error codes of @trawl/plugin-sdk (listed in docs/errors.md). */
export const PLUGIN_ERROR_CODES = {
  /** The plugin's code returned an answer that is not a valid AnalyzerAnswer / EnrichmentResult. */
  invalidAnswer: 'TRAWL_ERR_PLUGIN_INVALID_ANSWER',
  /** The plugin's code threw an unexpected error. */
  failed: 'TRAWL_ERR_PLUGIN_FAILED',
  /** The caller's deadline (`X-Trawl-Timeout-Ms`) passed before the plugin answered. */
  timeout: 'TRAWL_ERR_PLUGIN_TIMEOUT',
  /** The call was cancelled (client disconnected or the caller aborted). */
  aborted: 'TRAWL_ERR_PLUGIN_ABORTED',
  /** The plugin's settings do not match its settings schema. */
  settingsInvalid: 'TRAWL_ERR_PLUGIN_SETTINGS_INVALID',
  /** The gateway refused the settings request (bad internal key, ...). */
  settingsRejected: 'TRAWL_ERR_PLUGIN_SETTINGS_REJECTED',
  /** A plugin definition is unusable (duplicate id, bad id, ...). */
  definitionInvalid: 'TRAWL_ERR_PLUGIN_DEFINITION_INVALID',
} as const;

/** A plugin's answer that does not match the contract. */
export class PluginInvalidAnswerError extends TrawlError {
  constructor(pluginId: string, detail: string) {
    super(
      PLUGIN_ERROR_CODES.invalidAnswer,
      `plugin '${pluginId}' returned an invalid answer: ${detail}`,
      { status: 500, retryable: false },
    );
  }
}

/** A plugin call past its deadline (504 TRAWL_ERR_PLUGIN_TIMEOUT). */
export class PluginTimeoutError extends TrawlError {
  constructor(pluginId: string, timeoutMs: number) {
    super(
      PLUGIN_ERROR_CODES.timeout,
      `plugin '${pluginId}' did not answer within ${timeoutMs} ms`,
      {
        status: 504,
        retryable: true,
      },
    );
  }
}

/** A plugin call its caller gave up on. */
export class PluginAbortedError extends TrawlError {
  constructor(pluginId: string) {
    super(PLUGIN_ERROR_CODES.aborted, `plugin '${pluginId}' call was cancelled`, {
      status: 499,
      retryable: true,
    });
  }
}
