import { TransientError, TrawlError } from '@trawl/contracts';

/** Stable error codes of the mail orchestrator (listed in docs/errors.md). */
export const MAIL_ERRORS = {
  /** A retriever did not answer, answered an error, or answered a body that is not the protocol's. */
  retrieverUnavailable: 'TRAWL_ERR_MAIL_RETRIEVER_UNAVAILABLE',
  /** The gateway did not accept a message for a reason that may pass (503, 429, connection). */
  gatewayUnavailable: 'TRAWL_ERR_MAIL_GATEWAY_UNAVAILABLE',
  /** The gateway refused the internal key (a configuration error: nothing is acked). */
  gatewayAuth: 'TRAWL_ERR_MAIL_GATEWAY_AUTH',
  /** POST /internal/ingest without a valid internal key. */
  unauthorized: 'TRAWL_ERR_MAIL_UNAUTHORIZED',
  /** POST /internal/ingest with a body that is not an IngestRequest. */
  badRequest: 'TRAWL_ERR_MAIL_BAD_REQUEST',
  /** The orchestrator is stopping. */
  stopping: 'TRAWL_ERR_MAIL_STOPPING',
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

export class GatewayUnavailableError extends TransientError {
  constructor(message: string) {
    super(MAIL_ERRORS.gatewayUnavailable, message);
  }
}

export class GatewayAuthError extends TrawlError {
  constructor(status: number) {
    super(MAIL_ERRORS.gatewayAuth, `the gateway refused the internal API key (${status})`);
  }
}
