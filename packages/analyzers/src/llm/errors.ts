import { TransientError, TrawlError } from '@trawl/contracts';

/** Error codes of the llm analyzer (listed in docs/errors.md). */
const LLM_ERROR_CODES = {
  notConfigured: 'TRAWL_ERR_LLM_NOT_CONFIGURED',
  unavailable: 'TRAWL_ERR_LLM_UNAVAILABLE',
  timeout: 'TRAWL_ERR_LLM_TIMEOUT',
  rejected: 'TRAWL_ERR_LLM_REJECTED',
  badAnswer: 'TRAWL_ERR_LLM_BAD_ANSWER',
} as const;

/** llm_host is empty: the analyzer is off. Not retried. */
export class LlmNotConfiguredError extends TrawlError {
  constructor(what: 'llm_host' | 'llm_model' = 'llm_host') {
    super(LLM_ERROR_CODES.notConfigured, `${what} is not set`, { status: 503, retryable: false });
  }
}

/** The LLM server is unreachable or answered 5xx/429. */
export class LlmUnavailableError extends TransientError {
  constructor(detail: string, cause?: unknown) {
    super(LLM_ERROR_CODES.unavailable, `the LLM server is unavailable: ${detail}`, {
      retryAfterSeconds: 5,
      cause,
    });
  }
}

export class LlmTimeoutError extends TrawlError {
  constructor(seconds: number) {
    super(LLM_ERROR_CODES.timeout, `the LLM did not answer within llm_timeout (${seconds} s)`, {
      status: 504,
      retryable: true,
    });
  }
}

/** The LLM server refused the request (4xx: unknown model, bad key, ...). Not retried. */
export class LlmRejectedError extends TrawlError {
  constructor(status: number, detail: string) {
    super(
      LLM_ERROR_CODES.rejected,
      `the LLM server refused the request (HTTP ${status} ${detail})`,
      {
        status: 502,
        retryable: false,
      },
    );
  }
}

/** The model's answer is not JSON of the expected shape. Retried (models are not deterministic). */
export class LlmBadAnswerError extends TrawlError {
  constructor(detail: string) {
    super(LLM_ERROR_CODES.badAnswer, `the LLM answer is not usable: ${detail}`, {
      status: 502,
      retryable: true,
    });
  }
}
