import { TransientError } from '@trawl/contracts';

/**
 * Stable error codes of @trawl/oauth (listed in docs/errors.md). Every one is a TransientError
 * (503 to the mail orchestrator, which backs off and retries): a consent or permission problem is
 * fixed by an administrator while Trawl keeps retrying, and then ingestion goes on by itself.
 */
export const OAUTH_ERRORS = {
  /** The client id, secret or certificate is wrong or expired (invalid_client, AADSTS7000215...). */
  invalidClient: 'TRAWL_ERR_OAUTH_INVALID_CLIENT',
  /** No administrator consent or domain-wide delegation for the scope (AADSTS65001, Google unauthorized_client). */
  consentRequired: 'TRAWL_ERR_OAUTH_CONSENT_REQUIRED',
  /** The application is not registered in that tenant (AADSTS700016). */
  appNotFound: 'TRAWL_ERR_OAUTH_APP_NOT_FOUND',
  /** The tenant does not exist (AADSTS90002). */
  tenantNotFound: 'TRAWL_ERR_OAUTH_TENANT_NOT_FOUND',
  /** The grant was refused: a revoked or expired refresh token, a rejected JWT (invalid_grant). */
  invalidGrant: 'TRAWL_ERR_OAUTH_INVALID_GRANT',
  /** A person or a policy denied the access (access_denied). */
  accessDenied: 'TRAWL_ERR_OAUTH_ACCESS_DENIED',
  /** The scope is unknown or not allowed for this grant (invalid_scope). */
  invalidScope: 'TRAWL_ERR_OAUTH_INVALID_SCOPE',
  /** The token endpoint is down, slow or throttling: retried. */
  unavailable: 'TRAWL_ERR_OAUTH_UNAVAILABLE',
  /** The token endpoint answered something that is not an OAuth 2.0 answer (or too large). */
  badAnswer: 'TRAWL_ERR_OAUTH_BAD_ANSWER',
  /** The API kept answering 429/503 (throttling) past the retries of one request. */
  apiThrottled: 'TRAWL_ERR_OAUTH_API_THROTTLED',
  /** The API could not be reached or did not answer in time. */
  apiUnavailable: 'TRAWL_ERR_OAUTH_API_UNAVAILABLE',
  /** The API's answer was larger than the bound set for it. */
  apiAnswerTooLarge: 'TRAWL_ERR_OAUTH_API_ANSWER_TOO_LARGE',
} as const;
export type OAuthErrorCode = (typeof OAUTH_ERRORS)[keyof typeof OAUTH_ERRORS];

/** A token request that failed; `hint` tells the administrator what to fix. */
export class OAuthError extends TransientError {
  /** The OAuth error (`invalid_client`...) and the AADSTS number when there is one. */
  readonly oauthError: string | undefined;
  readonly aadsts: number | undefined;
  /** True when only an administrator can fix it (consent, secret, certificate). */
  readonly needsAdmin: boolean;
  constructor(
    code: OAuthErrorCode,
    message: string,
    o: {
      oauthError?: string | undefined;
      aadsts?: number | undefined;
      needsAdmin?: boolean;
      retryAfterSeconds?: number;
      cause?: unknown;
    } = {},
  ) {
    super(code, message, {
      retryAfterSeconds: o.retryAfterSeconds ?? (o.needsAdmin ? 60 : 5),
      cause: o.cause,
    });
    this.oauthError = o.oauthError;
    this.aadsts = o.aadsts;
    this.needsAdmin = o.needsAdmin ?? false;
  }
}

/** The API throttled past the retries: the caller answers 503 with this Retry-After. */
export class ApiThrottledError extends TransientError {
  constructor(what: string, retryAfterSeconds: number) {
    super(OAUTH_ERRORS.apiThrottled, `${what}: throttled by the API; retry later`, {
      retryAfterSeconds,
    });
  }
}

/** A mailbox API that did not answer (retried). */
export class ApiUnavailableError extends TransientError {
  constructor(what: string, cause: unknown) {
    super(
      OAUTH_ERRORS.apiUnavailable,
      `${what}: the API did not answer (${(cause as Error)?.message ?? String(cause)})`,
      { cause },
    );
  }
}

/** A mailbox API answer over its size bound (retried). */
export class ApiAnswerTooLargeError extends TransientError {
  constructor(what: string, maxBytes: number) {
    super(OAUTH_ERRORS.apiAnswerTooLarge, `${what}: the answer is larger than ${maxBytes} bytes`);
  }
}
