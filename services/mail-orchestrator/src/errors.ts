import { ERROR_CODES, TransientError, TrawlError } from '@trawl/contracts';

/** Stable error codes of the mail orchestrator (listed in docs/errors.md). */
export const MAIL_ERRORS = {
  /** A retriever did not answer, answered an error, or answered a body that is not the protocol's. */
  retrieverUnavailable: 'TRAWL_ERR_MAIL_RETRIEVER_UNAVAILABLE',
  /** The gateway did not accept a message for a reason that may pass (503, 429, connection). */
  gatewayUnavailable: 'TRAWL_ERR_MAIL_GATEWAY_UNAVAILABLE',
  /** The gateway refused the internal key (a configuration error: nothing is acked). */
  gatewayAuth: 'TRAWL_ERR_MAIL_GATEWAY_AUTH',
  /**
   * The gateway refused the request itself, not the message (untrusted Host, unknown workflow,
   * route or media type): a configuration error; nothing is acked, the message is retried.
   */
  gatewayRefused: 'TRAWL_ERR_MAIL_GATEWAY_REFUSED',
  /** POST /internal/ingest without a retriever's own valid credential. */
  unauthorized: 'TRAWL_ERR_MAIL_UNAUTHORIZED',
  /** POST /internal/ingest naming another retriever than the credential's. */
  forbidden: 'TRAWL_ERR_MAIL_FORBIDDEN',
  /** POST /internal/ingest with a body that is not an IngestRequest. */
  badRequest: 'TRAWL_ERR_MAIL_BAD_REQUEST',
  /** The orchestrator is stopping. */
  stopping: 'TRAWL_ERR_MAIL_STOPPING',
  /**
   * The reason given in an `unanalyzed` verdict when the refusal carried no code of its own (a
   * proxy's 413 without a problem body, an empty message).
   */
  unanalyzed: 'TRAWL_ERR_MAIL_UNANALYZED',
} as const;

export class RetrieverError extends TransientError {
  constructor(
    readonly retriever: string,
    readonly stage: 'fetch' | 'ack' | 'verdict',
    message: string,
    readonly httpStatus?: number,
  ) {
    super(MAIL_ERRORS.retrieverUnavailable, `retriever ${retriever} ${stage}: ${message}`);
  }
}

/** The gateway did not answer (retried). */
export class GatewayUnavailableError extends TransientError {
  constructor(message: string) {
    super(MAIL_ERRORS.gatewayUnavailable, message);
  }
}

/**
 * The gateway refused the orchestrator's requests for a reason of configuration (either side): no
 * message can pass until someone fixes it, so nothing is acked and every message is retried.
 * Retryable: the message is kept, not the request repeated at once.
 */
export class GatewayMisconfiguredError extends TrawlError {
  constructor(
    code: string,
    message: string,
    /** The gateway's HTTP status and its own error code (TRAWL_ERR_GATEWAY_UNTRUSTED_HOST, ...). */
    readonly httpStatus: number,
    readonly gatewayCode: string | undefined,
  ) {
    super(code, message, { status: 503, retryable: true });
  }
}

/** The gateway refused the internal API key. */
export class GatewayAuthError extends GatewayMisconfiguredError {
  constructor(status: number, gatewayCode?: string) {
    super(
      MAIL_ERRORS.gatewayAuth,
      `the gateway refused the internal API key (${describe(status, gatewayCode)}): check INTERNAL_API_KEY on both sides`,
      status,
      gatewayCode,
    );
  }
}

/** The gateway refused the orchestrator's request for a reason of configuration. */
export class GatewayRefusedError extends GatewayMisconfiguredError {
  constructor(status: number, gatewayCode: string | undefined, detail: string | undefined) {
    super(
      MAIL_ERRORS.gatewayRefused,
      `the gateway refused the request (${describe(status, gatewayCode)}${detail ? `: ${detail}` : ''})${hint(gatewayCode)}`,
      status,
      gatewayCode,
    );
  }
}

function describe(status: number, gatewayCode: string | undefined): string {
  return gatewayCode ? `${status} ${gatewayCode}` : String(status);
}

function hint(gatewayCode: string | undefined): string {
  return gatewayCode === ERROR_CODES.untrustedHost
    ? "; add the host name of TRAWL_GATEWAY_URL to the gateway's TRUSTED_HOSTS"
    : '';
}
